"""Automated WCAG AA audit (axe-core) of every participant page and the main researcher pages.

Participant pages are audited at desktop and phone width (375 px), in the states that
matter: with a validation error shown, with the time-limit warning, at the end of a short
run. Zero serious or critical violations are allowed.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from intruder.models import AnonymizedText, PersonGroup, Study
from tests.browser.axe import audit, axe_available
from tests.intruder import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 740}
DESKTOP = {"width": 1280, "height": 900}
PASSWORD = "correct horse 42"


@pytest.fixture(autouse=True)
def _needs_axe() -> None:
    axe_available()


def writer_pages(page, problems: list[str]) -> None:
    study = f.make_study(kind=Study.Kind.COLLECTION, min_description_chars=60)
    f.make_target(study=study, group=PersonGroup.FAMOUS, name="Octavia Brightwater")
    f.make_target(study=study, group=PersonGroup.SEMIFAMOUS, name="Lars Pemberton")
    f.make_target(study=study, group=PersonGroup.FICTITIOUS, name="Mira Tollund")
    page.goto(f"/s/{study.slug}/?PROLIFIC_PID=A11YWRITER&STUDY_ID=S&SESSION_ID=X")
    problems += audit(page, "writer-consent")
    page.click("text=I agree to take part")
    page.wait_for_selector("#description")
    problems += audit(page, "writer-famous")
    page.fill("#description", "Too short.")
    page.click("text=Save and continue")
    page.wait_for_selector(".errorlist")
    problems += audit(page, "writer-error")
    page.fill("#description", "Octavia Brightwater writes long novels about the sea. " * 2)
    page.click("text=Save and continue")
    page.wait_for_selector("a[href*='wikipedia.org']")
    problems += audit(page, "writer-semifamous")
    page.fill("#description", "Lars Pemberton hosts a radio show about sailing boats. " * 2)
    page.click("text=Save and continue")
    page.wait_for_selector("table.profile")
    problems += audit(page, "writer-fictitious")
    page.fill("#description", "Mira Tollund keeps a lighthouse on a windy island coast. " * 2)
    page.click("text=Save and continue")
    page.wait_for_selector("#completion-code")
    problems += audit(page, "writer-debrief")


def intruder_pages(page, problems: list[str]) -> None:
    study = f.make_study(items_per_participant=3, judgments_per_text=1, time_limit_minutes=1)
    f.make_texts(study=study, count=2)  # the pool runs short: 2 of 3 texts
    page.goto(f"/s/{study.slug}/?PROLIFIC_PID=A11YINTRUDER&STUDY_ID=S&SESSION_ID=X")
    page.click("text=I agree to take part")
    page.wait_for_selector("text=Instructions: play an adversary")
    problems += audit(page, "intruder-instructions")
    page.click("text=Start")
    page.wait_for_selector("#anon-text")
    # A one-minute limit: the warning shows at once.
    page.wait_for_selector("#time-warning:not([hidden])")
    problems += audit(page, "intruder-text-warning")
    page.check("input[name=self_identified][value=yes]")
    page.click("text=Next")
    page.wait_for_selector(".errorlist")
    problems += audit(page, "intruder-text-error")
    page.check("input[name=self_identified][value=no]")
    page.fill("#other_knowledge", "Lives by the sea.")
    page.click("text=Next")
    page.wait_for_selector("text=Text 2 of 3")
    page.check("input[name=self_identified][value=no]")
    page.fill("#other_knowledge", "Works on boats.")
    page.click("text=Next")
    page.wait_for_selector("#short-run")
    problems += audit(page, "intruder-debrief-short")


def message_pages(page, problems: list[str]) -> None:
    study = f.make_study()
    problems += _goto_and_audit(page, f"/s/{study.slug}/", "message-missing-pid")
    problems += _goto_and_audit(page, "/p/no-such-token/", "not-found")
    done = f.make_participant(study=study, status="completed")
    problems += _goto_and_audit(page, f"/p/{done.token}/", "message-completed")
    declined = f.make_participant(study=study, status="returned")
    problems += _goto_and_audit(page, f"/p/{declined.token}/", "message-returned")
    late = f.make_participant(study=study, status="timed_out")
    f.make_judgment(participant=late, text=f.make_text(study=study))
    problems += _goto_and_audit(page, f"/p/{late.token}/", "message-timed-out-with-code")
    closed = f.make_study(is_open=False)
    problems += _goto_and_audit(page, f"/s/{closed.slug}/?PROLIFIC_PID=NEW1", "message-closed")


def _goto_and_audit(page, url: str, name: str) -> list[str]:
    page.goto(url)
    return audit(page, name)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_participant_page_passes_the_accessibility_audit(page, viewport) -> None:
    page.set_viewport_size(viewport)
    problems: list[str] = []
    writer_pages(page, problems)
    page.context.clear_cookies()
    intruder_pages(page, problems)
    message_pages(page, problems)
    assert not problems, "\n".join(problems)


def test_main_researcher_pages_pass_the_accessibility_audit(page) -> None:
    user = get_user_model().objects.create_user("ada", "ada@example.org", PASSWORD)
    study = f.make_study(owner=user, title="Ferry study", items_per_participant=2)
    texts = f.make_texts(study=study, count=3)
    f.make_texts(study=study, count=1, status=AnonymizedText.Status.DRAFT)
    for i in range(2):
        intruder = f.make_participant(study=study, status="completed")
        for position, text in enumerate(texts[i : i + 2], start=1):
            f.make_judgment(
                participant=intruder,
                text=text,
                position=position,
                slot=i + 1,
                time_spent_ms=30_000,
                # One flagged answer, so that the review list shows its form.
                flags=[{"code": "paste", "reason": "1 paste(s), 40 characters pasted."}]
                if position == 1
                else [],
            )
    f.make_job(study=study, created_by=user, progress_total=4, progress_done=1)
    problems: list[str] = []

    page.goto("/accounts/login/")
    problems += audit(page, "login")
    page.fill("#id_username", "ada")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/r/")
    for name, url in [
        ("study-list", "/r/"),
        ("study-detail", f"/r/{study.slug}/"),
        ("study-form-new", "/r/new/"),
        ("study-form-edit", f"/r/{study.slug}/edit/"),
        ("review-list", f"/r/{study.slug}/review/"),
        ("review-text", f"/r/{study.slug}/review/{texts[0].pk}/"),
        ("analysis", f"/r/{study.slug}/analysis/"),
        ("preview-consent", f"/r/{study.slug}/preview/"),
        ("preview-text", f"/r/{study.slug}/preview/text/1/"),
        ("participants", f"/r/{study.slug}/participants/"),
        ("manage", f"/r/{study.slug}/manage/"),
        ("flags", f"/r/{study.slug}/flags/"),
        ("review-unreviewed", f"/r/{study.slug}/review/?status=unreviewed&q=a"),
    ]:
        problems += _goto_and_audit(page, url, name)
    page.set_viewport_size({"width": 768, "height": 1024})  # tablet
    for name, url in [
        ("study-list-tablet", "/r/"),
        ("study-detail-tablet", f"/r/{study.slug}/"),
        ("study-form-tablet", f"/r/{study.slug}/edit/"),
        ("review-tablet", f"/r/{study.slug}/review/"),
        ("review-text-tablet", f"/r/{study.slug}/review/{texts[0].pk}/"),
        ("analysis-tablet", f"/r/{study.slug}/analysis/"),
        ("participants-tablet", f"/r/{study.slug}/participants/"),
    ]:
        problems += _goto_and_audit(page, url, name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_annotation_pages_pass_the_accessibility_audit(page, viewport) -> None:
    from anonymize.annotations.schema import AnnotatedDocument
    from intruder.annotation import services as annotation_services
    from intruder.services import anonymization
    from tests.intruder.fake_anonymizer import FakeAnonymizer

    user = get_user_model().objects.create_user("ines", "ines@example.org", PASSWORD)
    previous = anonymization.set_anonymizer(FakeAnonymizer())
    try:
        project = annotation_services.project_create(
            owner=user, slug="a11y-ann", title="Accessible annotation", scheme="textwash"
        )
        annotation_services.documents_add(
            project=project,
            documents=[AnnotatedDocument("t1", "Orla Brennick works in Dunmore as a nurse.")],
        )
        annotation_services.suggestions_compute(project=project)
    finally:
        anonymization.set_anonymizer(previous)
    # Adjudication with disagreements listed (two imported layers). Made before the browser
    # starts: the live server shares the test's SQLite connection, and a write here while
    # the task page autosaves broke that request's transaction.
    from tests.annotation.test_adjudication import two_layers

    adjudicated, _, _ = two_layers(owner=user)
    page.set_viewport_size(viewport)
    # The first page of a session also starts the live server's first request: on 2 shared
    # cores that can take longer than the default action timeout.
    page.goto("/accounts/login/", timeout=90_000)
    page.fill("#id_username", "ines")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/r/")
    problems: list[str] = []
    for name, url in [
        ("annotation-projects", "/annotate/"),
        ("annotation-new", "/annotate/new/"),
        ("annotation-project", "/annotate/a11y-ann/"),
        ("annotation-agreement", "/annotate/a11y-ann/agreement/"),
        ("annotation-evaluate", "/annotate/a11y-ann/evaluate/"),
        ("annotation-adjudicate", "/annotate/a11y-ann/adjudicate/"),
    ]:
        problems += _goto_and_audit(page, url, name)
    page.goto("/annotate/a11y-ann/work/")
    page.wait_for_selector(".mark.suggestion")
    problems += audit(page, "annotation-task")
    page.locator(".mark.suggestion").first.click()
    page.wait_for_selector("#panel-selected:not([hidden])")
    problems += audit(page, "annotation-task-suggestion-selected")
    page.keyboard.press("Enter")
    page.wait_for_selector("#mention-fields:not([hidden])")
    problems += audit(page, "annotation-task-mention-selected")
    problems += _goto_and_audit(page, f"/annotate/{adjudicated.slug}/adjudicate/", "adjudicate")
    assert not problems, "\n".join(problems)
