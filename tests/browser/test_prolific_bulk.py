"""Bulk review on the Prolific page in a real browser, against the fake Prolific: the flags
and rules shown, the preview, an edited rejection reason, and the approval of the clean."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from intruder.models import Participant, PersonGroup, Study
from intruder.prolific.client import client_from_settings
from intruder.prolific.fake_server import FakeProlific
from intruder.prolific.services import study_draft_create, study_sync, study_transition
from tests.browser import screenshots
from tests.intruder.factories import make_judgment, make_participant, make_study, make_texts

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TOO_FAST = {"code": "too_fast", "reason": "Answered 0.9 s after the text was shown."}


@pytest.fixture
def fake(settings):
    fake = FakeProlific()
    fake.serve()
    fake._secret_create({})
    settings.PROLIFIC_API_TOKEN = fake.token
    settings.PROLIFIC_API_URL = fake.base_url
    settings.PROLIFIC_WEBHOOK_SECRET = fake.webhook_secret
    yield fake
    fake.stop()


def _published_with_two(fake, owner) -> tuple[Study, dict[str, str]]:
    study = make_study(owner=owner, kind=Study.Kind.INTRUDER, items_per_participant=1)
    make_texts(study=study, count=2, group=PersonGroup.FAMOUS)
    client = client_from_settings()
    study_draft_create(
        study=study,
        client=client,
        entry_url="https://study.example.org/s/x/",
        places=5,
        reward_minor=100,
        estimated_minutes=10,
    )
    study_transition(study=study, client=client, action="publish")
    study.refresh_from_db()
    subs = {}
    for pid, flags in (("PIDCLEAN", []), ("PIDFAST", [TOO_FAST])):
        worker = make_participant(
            study=study,
            prolific_pid=pid,
            group=PersonGroup.FAMOUS,
            status=Participant.Status.COMPLETED,
            completed_at=timezone.now(),
        )
        text = study.descriptions.order_by("pk")[len(subs)].anonymizations.get()
        make_judgment(participant=worker, text=text, flags=flags, time_spent_ms=20_000)
        subs[pid] = fake.submission_start(study.prolific_study_id, pid)
        fake.submission_set_status(subs[pid], "AWAITING REVIEW")
    study_sync(study=study, client=client)
    client.close()
    return study, subs


@pytest.mark.parametrize("width", [1280, 390])
def test_preview_then_reject_the_excluded_and_approve_the_clean(page, fake, width) -> None:
    from django.contrib.auth import get_user_model

    owner = get_user_model().objects.create_user(username="rae", password="prolific-pw-2")
    study, subs = _published_with_two(fake, owner)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "rae")
    page.fill("input[name=password]", "prolific-pw-2")
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url("**/r/**")
    page.goto(f"/r/{study.slug}/prolific/")
    expect(page.locator("[data-testid=exclusion-rules]")).to_contain_text("answered implausibly")
    expect(page.locator("#submissions")).to_contain_text(TOO_FAST["reason"])
    screenshots.keep(page, f"prolific_bulk_list_{width}")

    page.click('a:has-text("Preview: reject all excluded")')
    preview = page.locator("#bulk-preview")
    expect(preview).to_contain_text("PIDFAST")
    expect(preview).not_to_contain_text("PIDCLEAN")
    reason = page.locator("textarea[name=reason-PIDFAST]")
    expect(reason).to_have_value(
        re.compile("exclusion rules.*Answered implausibly fast \\(1 answer\\)")
    )
    assert page.locator("select[name=category-PIDFAST]").input_value() == "TOO_QUICKLY"
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
    screenshots.keep(page, f"prolific_bulk_reject_preview_{width}")
    assert fake.submissions[subs["PIDFAST"]]["status"] == "AWAITING REVIEW"  # preview only
    edited = "We checked by hand: " + reason.input_value()
    reason.fill(edited)
    page.click('button:has-text("Reject the ticked participants")')
    expect(page.locator(".messages")).to_contain_text("1 of 1 rejected")
    assert fake.rejections[subs["PIDFAST"]] == (edited, "TOO_QUICKLY")

    page.click('a:has-text("Preview: approve all clean")')
    expect(page.locator("#bulk-preview")).to_contain_text("PIDCLEAN")
    page.click('button:has-text("Approve the ticked participants")')
    expect(page.locator(".messages")).to_contain_text("1 of 1 approved")
    expect(page.locator("#submissions")).to_contain_text("approve succeeded")
    expect(page.locator("#submissions")).to_contain_text("reject succeeded")
    assert fake.submissions[subs["PIDCLEAN"]]["status"] == "APPROVED"
    page.click('a:has-text("Preview: approve all clean")')
    expect(page.locator("[data-testid=bulk-empty]")).to_be_visible()
    assert fake.token not in page.content()
