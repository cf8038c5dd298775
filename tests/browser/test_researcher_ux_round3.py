"""Issue 40 in a real browser, at 1280 and 390 px: the guard's reachable k and its refusal,
the study page's warnings (texts per intruder, exclusion rules), the consent page's
two-step decline and the short run's debrief."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from intruder.models import PersonGroup, Study
from tests.browser import screenshots
from tests.intruder.factories import make_description, make_study, make_target, make_text
from tests.intruder.risk_fixtures import study_with_guardable_texts

pytestmark = pytest.mark.django_db(transaction=True)

VIEWPORTS = [(1280, 900), (390, 844)]
IDS = ["desktop", "phone"]


def _log_in(page, user) -> None:
    user.set_password("correct horse 42")
    user.save()
    page.goto("/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "correct horse 42")
    page.click("button[type=submit], input[type=submit]")


def _no_horizontal_overflow(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"] + 1, width


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=IDS)
def test_the_guard_form_offers_a_reachable_k_and_refuses_a_larger_one(page, viewport) -> None:
    study = study_with_guardable_texts()  # four persons
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    _log_in(page, study.owner)
    page.goto(f"/r/{study.slug}/review/")
    expect(page.locator("#guard-rank")).to_have_value("4")
    expect(page.locator("#guard-rank-help")).to_contain_text("the rank is at most 4")
    expect(page.locator("label[for=guard-folds]")).to_have_text("Cross-validation folds")
    screenshots.keep(page, f"issue40-guard-form-{IDS[VIEWPORTS.index(viewport)]}")
    page.fill("#guard-rank", "5")
    page.click("#guard-form button[type=submit]")
    expect(page.locator(".msg.error")).to_contain_text("Rank: rank 5 is more than the 4 persons")
    screenshots.keep(page, f"issue40-guard-refused-{IDS[VIEWPORTS.index(viewport)]}")
    _no_horizontal_overflow(page)


def _walkthrough_study() -> Study:
    study = make_study(
        kind=Study.Kind.INTRUDER, items_per_participant=2, groups=[PersonGroup.FAMOUS]
    )
    target = make_target(study=study, group=PersonGroup.FAMOUS)
    for _ in range(2):
        make_text(study=study, description=make_description(study=study, target=target))
    return study


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=IDS)
def test_the_study_page_warns_before_launch_and_the_debrief_says_why(page, viewport) -> None:
    study = _walkthrough_study()
    name = IDS[VIEWPORTS.index(viewport)]
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    _log_in(page, study.owner)
    page.goto(f"/r/{study.slug}/")
    expect(page.locator("#reach-warning")).to_contain_text("at most 1 per intruder")
    expect(page.locator("#rules-notice")).to_contain_text("Record the exclusion rules")
    screenshots.keep(page, f"issue40-study-page-{name}")
    page.goto(f"/r/{study.slug}/edit/")
    expect(page.locator("#rules-notice")).to_be_visible()
    screenshots.keep(page, f"issue40-settings-{name}")
    # A participant, in a fresh context: the decline needs a second click; then agree.
    participant = page.context.browser.new_context(base_url=page.url.split("/r/")[0])
    p = participant.new_page()
    p.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    p.goto(f"/s/{study.slug}/?PROLIFIC_PID=WALK{name.upper()}01&STUDY_ID=S&SESSION_ID=X")
    p.click("summary:has-text('I do not agree')")
    expect(p.locator("#decline")).to_contain_text("the study ends for you")
    screenshots.keep(p, f"issue40-consent-decline-open-{name}")
    p.click("text=I agree to take part")
    p.click("text=Start")
    p.check("input[name=self_identified][value=no]")
    p.fill("#other_knowledge", "Lives by the sea.")
    p.click("text=Next")
    expect(p.locator("#short-run")).to_contain_text("about only 1 different person")
    screenshots.keep(p, f"issue40-debrief-short-{name}")
    _no_horizontal_overflow(p)
    participant.close()


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=IDS)
def test_the_owner_adds_an_annotator_on_the_members_page(page, viewport) -> None:
    from tests.annotation.conftest import make_project
    from tests.intruder.factories import make_user

    name = IDS[VIEWPORTS.index(viewport)]
    project = make_project(slug=f"members-{name}", suggest=False)
    make_user(username=f"ana-{name}")
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    _log_in(page, project.owner)
    page.goto(f"/annotate/{project.slug}/")
    page.click("#members-link")
    expect(page.locator("#no-members")).to_be_visible()
    page.fill("#id_username", "nobody")
    page.click("text=Save role")
    expect(page.locator(".field-error")).to_contain_text("No account is called “nobody”.")
    screenshots.keep(page, f"issue40-members-error-{name}")
    _no_horizontal_overflow(page)
    page.fill("#id_username", f"ana-{name}")
    page.select_option("#id_role", "annotator")
    page.click("text=Save role")
    expect(page.locator("#members table")).to_contain_text(f"ana-{name}")
    expect(page.locator("body")).to_contain_text(f"ana-{name} is now annotator of this project.")
    screenshots.keep(page, f"issue40-members-added-{name}")
    _no_horizontal_overflow(page)
    page.click(f"button[aria-label='Remove ana-{name}']")
    expect(page.locator("#no-members")).to_be_visible()
