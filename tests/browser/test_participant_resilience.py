"""Participant pages under real use, in chromium: Back and reload after an error, a draft
kept across a reload, the time-limit countdown with a late answer, and the researcher's
preview that records nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from intruder.models import Assignment, Description, Judgment, Participant, PersonGroup, Study
from tests.intruder import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PID = "60a1b2c3d4e5f6a7b8c9d0e2"
DRAFT = ("Octavia Brightwater grew up in a harbour town and became a celebrated novelist. " * 7)[
    :540
]


def record_posts(page) -> list[str]:
    """Return a list that fills with the URL of every POST the page sends."""
    posts: list[str] = []
    page.on(
        "request", lambda request: posts.append(request.url) if request.method == "POST" else None
    )
    return posts


def writer_study() -> Study:
    study = f.make_study(kind=Study.Kind.COLLECTION, min_description_chars=500)
    f.make_target(study=study, group=PersonGroup.FAMOUS, name="Octavia Brightwater")
    f.make_target(study=study, group=PersonGroup.FICTITIOUS, name="Mira Tollund")
    return study


@pytest.mark.postgres  # the rejected answer waits in a JSON column (jsonb on PostgreSQL)
def test_back_and_reload_after_a_validation_error_never_resend_the_answer(page) -> None:
    study = writer_study()
    page.goto(f"/s/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID=S1&SESSION_ID=X1")
    page.click("text=I agree to take part")
    page.wait_for_selector("#description")
    posts = record_posts(page)
    page.fill("#description", "Too short, but typed by hand.")
    page.click("text=Save and continue")
    page.wait_for_selector(".errorlist")
    assert len(posts) == 1
    participant = Participant.objects.get()
    assert page.url.rstrip("/").endswith(participant.token)  # a GET page, after the redirect

    # The page after the redirect starts at the field in error, with the typed text.
    page.wait_for_function("() => document.activeElement.id === 'description'")

    page.reload()
    page.wait_for_selector(".errorlist")
    assert page.input_value("#description") == "Too short, but typed by hand."
    page.go_back()  # the consent page, as a GET
    page.wait_for_load_state("load")
    page.go_forward()
    page.wait_for_selector("#description")
    assert page.input_value("#description") == "Too short, but typed by hand."
    assert len(posts) == 1  # neither reload nor Back/Forward sent anything again
    assert not Description.objects.exists()
    assert participant.writing_tasks.filter(description__isnull=False).count() == 0


def test_unsent_draft_survives_a_reload_and_is_forgotten_once_stored(page) -> None:
    study = writer_study()
    page.goto(f"/s/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID=S1&SESSION_ID=X1")
    page.click("text=I agree to take part")
    page.wait_for_selector("#description")
    page.fill("#description", DRAFT)
    page.wait_for_function(
        "() => Object.keys(localStorage).some(k => k.startsWith('intruder-draft:'))"
    )

    page.reload()
    page.wait_for_selector("#draft-restored:not([hidden])")
    assert page.input_value("#description") == DRAFT
    expect(page.locator("#char-count")).to_have_text(str(len(DRAFT.strip())))

    page.click("text=Save and continue")
    page.wait_for_selector("table.profile")  # the next task
    assert Description.objects.get().text == DRAFT.strip()
    # The restored draft is the writer's own typing, not text inserted by a script (issue 36).
    codes = {flag["code"] for flag in Description.objects.get().flags}
    assert not codes & {"inserted", "few_keystrokes", "inconsistent_telemetry"}, codes
    assert page.input_value("#description") == ""
    assert (
        page.evaluate(
            "() => Object.keys(localStorage).filter(k => k.startsWith('intruder-draft:'))"
        )
        == []
    )


@pytest.mark.postgres  # the late answer races the assignment's expiry
def test_countdown_warns_then_a_late_answer_is_kept_while_nobody_else_has_the_text(page) -> None:
    study = f.make_study(items_per_participant=2, judgments_per_text=1, time_limit_minutes=10)
    f.make_texts(study=study, count=2)
    page.goto(f"/s/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID=S1&SESSION_ID=X1")
    page.click("text=I agree to take part")
    page.click("text=Start")
    page.wait_for_selector("#anon-text")
    expect(page.locator("#time-left")).to_have_text("Time left for this text: 10 minutes")
    assert page.locator("#time-warning").is_hidden()

    # Two minutes (the warning time for a 10-minute limit) and 3 seconds before the limit.
    assignment = Assignment.objects.get()
    Assignment.objects.filter(pk=assignment.pk).update(
        assigned_at=timezone.now() - timedelta(minutes=10) + timedelta(seconds=3)
    )
    page.reload()
    page.wait_for_selector("#time-warning:not([hidden])")
    expect(page.locator("#time-warning")).to_contain_text("Less than 2 minutes left")
    expect(page.locator("#time-left")).to_have_text("Time is up for this text.", timeout=10_000)
    expect(page.locator("#time-warning")).to_contain_text("it is kept as long as")

    # The worker's sweep releases the text and times the participant out...
    from intruder.services.assignment import studies_release_expired

    assert studies_release_expired().released == 1
    # ...but the answer arrives before anyone else got the text: it is kept.
    page.check("input[name=self_identified][value=no]")
    page.fill("#other_knowledge", "Lives by the sea.")
    page.click("text=Next")
    page.wait_for_selector("text=Text 2 of 2")
    assert Judgment.objects.get().other_knowledge == "Lives by the sea."
    assert Participant.objects.get().status == Participant.Status.STARTED


def test_preview_walks_the_participant_pages_and_records_nothing(page) -> None:
    user = get_user_model().objects.create_user("ada", "ada@example.org", "correct horse 42")
    study = f.make_study(owner=user, items_per_participant=2)
    f.make_texts(study=study, count=3)

    def counts() -> dict[str, int]:
        return {m.__name__: m.objects.count() for m in apps.get_app_config("intruder").get_models()}

    before = counts()
    page.goto(f"/accounts/login/?next=/r/{study.slug}/preview/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "correct horse 42")
    page.click("button[type=submit]")

    banner = page.locator(".preview-banner")
    page.wait_for_selector("text=I agree to take part")
    expect(banner).to_contain_text("Preview - nothing is recorded")
    page.click("text=I agree to take part")
    page.wait_for_selector("text=Instructions: play an adversary")
    expect(banner).to_be_visible()
    page.click("button:has-text('Start')")
    page.wait_for_selector("#anon-text")
    expect(banner).to_be_visible()
    page.click("text=Next")  # nothing chosen: the error comes back after a redirect
    page.wait_for_selector(".errorlist")
    for _ in range(2):
        page.check("input[name=self_identified][value=yes]")
        page.fill("#guessed_name", "Somebody")
        page.fill("#revealing_text", "the lighthouse")
        page.click("text=Next")
    page.wait_for_selector("#completion-code")
    expect(banner).to_be_visible()
    page.click("text=Finish and return to Prolific")
    page.wait_for_selector("text=End of the preview")
    assert "prolific.com" not in page.url
    assert counts() == before
