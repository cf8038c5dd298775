"""What a new researcher tripped on (issue 26), in a real browser at 1280 and 390 px.

- No page breaks the site's own Content-Security-Policy: every researcher and annotation
  page is walked while listening for `securitypolicyviolation` events and CSP console errors.
- The Participants status filter works (it was an inline handler the CSP blocked).
- New studies start closed; a study cannot open without a consent text.
- The Participants page has one "completed" count.
- The writer's character counter counts as the server does (emoji, combining accents).
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from anonymize.annotations.schema import AnnotatedDocument
from intruder.annotation import services as annotation_services
from intruder.models import AnonymizedText, PersonGroup, Study
from intruder.services import anonymization
from tests.browser import screenshots
from tests.intruder import factories as f
from tests.intruder.fake_anonymizer import FakeAnonymizer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse 42"
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}

# Installed before any page script runs (over DevTools, so the CSP does not apply to it).
LISTEN_FOR_CSP = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} ` +
    `(${e.sourceFile || ""}:${e.lineNumber || ""})`);
});
"""


class CspWatch:
    """Collect CSP violations (events and console errors) of every page a test visits."""

    def __init__(self, page) -> None:
        self.page = page
        self.found: list[str] = []
        page.add_init_script(LISTEN_FOR_CSP)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.found.append(f"page error: {error}"))

    def _console(self, message) -> None:
        if message.type == "error" and "Content Security Policy" in message.text:
            self.found.append(f"{self.page.url}: {message.text}")

    def visit(self, url: str, name: str) -> None:
        self.page.goto(url)
        self.page.wait_for_load_state("load")
        self.collect()
        for suffix, (width, height) in WIDTHS.items():
            self.page.set_viewport_size({"width": width, "height": height})
            screenshots.keep(self.page, f"ux-{name}-{suffix}")
        self.page.set_viewport_size({"width": 1280, "height": 900})

    def collect(self) -> None:
        events = self.page.evaluate("() => window.__cspViolations || []")
        self.found += [f"{self.page.url}: {e}" for e in events]
        self.page.evaluate("() => { window.__cspViolations = []; }")


def login(page, username: str = "ada") -> None:
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/r/")


@pytest.fixture
def researcher():
    return get_user_model().objects.create_user("ada", "ada@example.org", PASSWORD)


@pytest.fixture
def busy_study(researcher):
    """An intruder study with texts, judgments, 2 completed and 1 working participant."""
    study = f.make_study(owner=researcher, title="Ferry study", items_per_participant=2)
    texts = f.make_texts(study=study, count=3)
    f.make_texts(study=study, count=1, status=AnonymizedText.Status.DRAFT)
    for i in range(2):
        # Completed without a completion time (as imported or invented demo data are).
        done = f.make_participant(study=study, status="completed")
        for position, text in enumerate(texts[i : i + 2], start=1):
            f.make_judgment(participant=done, text=text, position=position, slot=i + 1)
    f.make_participant(study=study, status="started")
    return study


def test_no_researcher_or_annotation_page_violates_the_csp(page, researcher, busy_study):
    previous = anonymization.set_anonymizer(FakeAnonymizer())
    try:
        project = annotation_services.project_create(
            owner=researcher, slug="csp-ann", title="CSP annotation", scheme="textwash"
        )
        annotation_services.documents_add(
            project=project,
            documents=[AnnotatedDocument("t1", "Orla Brennick works in Dunmore as a nurse.")],
        )
        annotation_services.suggestions_compute(project=project)
    finally:
        anonymization.set_anonymizer(previous)
    watch = CspWatch(page)
    login(page)
    slug = busy_study.slug
    text_pk = AnonymizedText.objects.filter(description__study=busy_study).first().pk
    for name, url in [
        ("study-list", "/r/"),
        ("study-new", "/r/new/"),
        ("study-detail", f"/r/{slug}/"),
        ("study-edit", f"/r/{slug}/edit/"),
        ("participants", f"/r/{slug}/participants/"),
        ("manage", f"/r/{slug}/manage/"),
        ("review-list", f"/r/{slug}/review/"),
        ("review-text", f"/r/{slug}/review/{text_pk}/"),
        ("analysis", f"/r/{slug}/analysis/"),
        ("risk", f"/r/{slug}/risk/"),
        ("preview", f"/r/{slug}/preview/"),
        ("annotation-projects", "/annotate/"),
        ("annotation-new", "/annotate/new/"),
        ("annotation-project", "/annotate/csp-ann/"),
        ("annotation-agreement", "/annotate/csp-ann/agreement/"),
        ("annotation-evaluate", "/annotate/csp-ann/evaluate/"),
        ("annotation-adjudicate", "/annotate/csp-ann/adjudicate/"),
    ]:
        watch.visit(url, name)
    page.goto("/annotate/csp-ann/work/")
    page.wait_for_selector("#ann-text")
    watch.collect()
    # The study list refreshes itself every 5 s (a fetch the CSP must allow).
    page.goto("/r/")
    expect(page.locator("#refreshed")).to_contain_text("Last refreshed", timeout=12_000)
    watch.collect()
    assert not watch.found, "\n".join(watch.found)


def test_the_participants_status_filter_filters(page, researcher, busy_study):
    watch = CspWatch(page)
    login(page)
    page.goto(f"/r/{busy_study.slug}/participants/")
    expect(page.locator("#participants tbody tr")).to_have_count(3)
    page.select_option("#status-filter", "completed")
    page.wait_for_url(re.compile(r"status=completed"))
    expect(page.locator("#participants tbody tr")).to_have_count(2)
    screenshots.keep(page, "ux-participants-filtered-desktop")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshots.keep(page, "ux-participants-filtered-phone")
    watch.collect()
    assert not watch.found, "\n".join(watch.found)


def test_participants_page_has_one_completed_count(page, researcher, busy_study):
    login(page)
    page.goto(f"/r/{busy_study.slug}/participants/")
    expect(page.locator(".badge", has_text="completed")).to_have_text("completed: 2")
    alt = page.locator("figure.plot").first.get_attribute("aria-label")
    assert "2 completed" in alt, alt
    page.goto(f"/r/{busy_study.slug}/")
    expect(page.locator("body")).to_contain_text("2 completed")


def test_a_new_study_starts_closed_and_cannot_open_without_consent(page, researcher):
    login(page)
    for suffix, (width, height) in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        page.goto("/r/new/")
        expect(page.locator("#id_is_open")).not_to_be_checked()
        screenshots.keep(page, f"ux-study-new-{suffix}")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.select_option("#id_kind", "intruder")
    page.fill("#id_slug", "open-no-consent")
    page.fill("#id_title", "Open without consent")
    page.check("#id_is_open")
    page.click("button:has-text('Create study')")
    expect(page.locator("#id_consent_text_error")).to_contain_text("consent text")
    screenshots.keep(page, "ux-study-consent-required-desktop")
    assert not Study.objects.filter(slug="open-no-consent").exists()
    page.fill("#id_consent_text", "You agree to take part.")
    page.click("button:has-text('Create study')")
    page.wait_for_url("**/r/open-no-consent/")
    assert Study.objects.get(slug="open-no-consent").is_open
    # Left unticked, the study is created closed.
    page.goto("/r/new/")
    page.select_option("#id_kind", "intruder")
    page.fill("#id_slug", "closed-by-default")
    page.fill("#id_title", "Closed by default")
    page.click("button:has-text('Create study')")
    page.wait_for_url("**/r/closed-by-default/")
    assert not Study.objects.get(slug="closed-by-default").is_open


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_the_writer_counter_counts_as_the_server(page, width):
    study = f.make_study(kind=Study.Kind.COLLECTION, min_description_chars=12)
    f.make_target(study=study, group=PersonGroup.FAMOUS, name="Octavia Brightwater")
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"/s/{study.slug}/?PROLIFIC_PID=COUNTERWRITER1&STUDY_ID=S&SESSION_ID=X")
    page.click("text=I agree to take part")
    page.wait_for_selector("#description")
    # 11 emoji: 22 UTF-16 units (the old counter said 22), 11 characters to the server.
    page.fill("#description", " 🌊" * 11 + " ")
    expect(page.locator("#char-count")).to_have_text("21")  # 11 emoji + 10 inner spaces
    page.fill("#description", "🌊" * 11)
    expect(page.locator("#char-count")).to_have_text("11")
    expect(page.locator("#char-minimum-reached")).to_have_text("")
    page.click("text=Save and continue")
    expect(page.locator(".errorlist")).to_contain_text("you have written 11")
    # e + combining acute accent: 24 code points typed, 12 after NFC, as the server stores.
    page.fill("#description", "e\u0301" * 12)
    expect(page.locator("#char-count")).to_have_text("12")
    expect(page.locator("#char-minimum-reached")).to_have_text("Minimum length reached.")
    screenshots.keep(page, f"ux-writer-counter-{width}")
    page.click("text=Save and continue")
    page.wait_for_selector("#completion-code, #description")
    stored = study.descriptions.get().text
    assert stored == "\u00e9" * 12
