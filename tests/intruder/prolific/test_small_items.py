"""Issue 47's smaller findings: bodies the JSON column refuses, logs without participant IDs,
the reward's currency, approving the all-excluded, and what participants read after Prolific
returned, rejected or timed them out."""

from __future__ import annotations

import logging
import time

import pytest
from django.urls import reverse

from intruder.models import Judgment
from intruder.prolific.models import ProlificSubmission, ProlificWebhookEvent
from intruder.prolific.signing import sign
from tests.intruder.factories import logged_in
from tests.intruder.prolific.test_review_and_bonus import completed
from tests.intruder.prolific.webhook_world import PROLIFIC_STUDY, holder, post, webhook_study

pytestmark = pytest.mark.django_db


def _signed(client, secret: str, body: bytes, event_id: str):
    timestamp = str(int(time.time()))
    return client.post(
        reverse("prolific-webhook"),
        body,
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=sign(secret=secret, timestamp=timestamp, body=body),
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
        HTTP_X_EVENT_ID=event_id,
    )


@pytest.mark.parametrize(
    "body",
    [
        b'{"event_type": "x", "n": NaN}',
        b'{"event_type": "x", "n": Infinity}',
        b'{"event_type": "x", "n": -Infinity}',
        b'{"event_type": "x", "n": 1e400}',
        b'{"event_type": "x", "s": "a\\u0000b"}',
        b'{"event_type": "x", "a\\u0000": 1}',
        b'{"event_type": "x", "l": [["\\u0000"]]}',
    ],
)
def test_signed_bodies_the_json_column_refuses_are_400_not_500(
    client, prolific_settings, fake_prolific, body
):
    response = _signed(client, fake_prolific.webhook_secret, body, f"e-{hash(body)}")
    assert response.status_code == 400
    assert not ProlificWebhookEvent.objects.exists()


def test_webhook_warnings_name_no_participant_and_no_payload(
    client, prolific_settings, fake_prolific, caplog
):
    webhook_study(fake_prolific)
    sub = fake_prolific.submission_start("0123456789abcdef01234567", "PIDSECRETPERSON")
    event = fake_prolific.submission_set_status(sub, "RETURNED")  # a study not held here
    with caplog.at_level(logging.WARNING):
        assert post(client, fake_prolific.delivery(event)).json()["outcome"] == "unknown_study"
    assert "unknown study" in caplog.text
    assert "PIDSECRETPERSON" not in caplog.text and sub not in caplog.text


def test_the_draft_forms_reward_names_the_currency(prolific_settings):
    from tests.intruder.factories import make_study

    prolific_settings.PROLIFIC_CURRENCY = "USD"
    study = make_study()
    page = logged_in(study.owner).get(reverse("researcher-prolific", kwargs={"slug": study.slug}))
    assert "Reward per participant, in USD cents" in page.content.decode()


def test_approving_someone_whose_answers_are_all_excluded_warns(published, fake_prolific):
    study, client = published
    from intruder.prolific.services import study_sync

    completed(study, fake_prolific, "PIDALLOUT", identified=0)
    completed(study, fake_prolific, "PIDCLEAN", identified=0)
    Judgment.objects.filter(participant__prolific_pid="PIDALLOUT").update(flag_review="confirmed")
    study_sync(study=study, client=client)
    page = logged_in(study.owner).post(
        reverse("researcher-prolific-review", kwargs={"slug": study.slug}),
        {"pid": ["PIDALLOUT", "PIDCLEAN"], "kind": "approve"},
    )
    html = page.content.decode()
    assert "Every answer of PIDALLOUT is excluded by the study" in html
    assert "Every answer of PIDCLEAN" not in html


@pytest.mark.parametrize(
    ("status", "reads", "not_reads"),
    [
        ("RETURNED", "You returned this study on Prolific", "did not give consent"),
        ("REJECTED", "rejected on Prolific", "did not give consent"),
        ("TIMED-OUT", "time limit for this study passed, so Prolific ended", "completion code"),
    ],
)
def test_after_prolific_ends_a_submission_the_participant_reads_its_own_case(
    client, prolific_settings, fake_prolific, status, reads, not_reads
):
    study = webhook_study(fake_prolific)
    participant = holder(study, "PIDLEFT")
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDLEFT")
    post(client, fake_prolific.delivery(fake_prolific.submission_set_status(sub, status)))
    assert ProlificSubmission.objects.get(submission_id=sub).status == status
    page = client.get(reverse("participant-home", kwargs={"token": participant.token}))
    if page.status_code == 302:
        page = client.get(page["Location"])
    html = page.content.decode()
    assert reads in html and not_reads not in html


def test_declining_consent_still_reads_the_consent_message(
    client, prolific_settings, fake_prolific
):
    from intruder.services.participants import participant_consent_decline

    study = webhook_study(fake_prolific)
    participant = holder(study, "PIDNO")
    Judgment.objects.filter(participant=participant).delete()
    type(participant).objects.filter(pk=participant.pk).update(consented_at=None)
    participant_consent_decline(participant=participant)
    page = client.get(reverse("participant-home", kwargs={"token": participant.token}), follow=True)
    assert "did not give consent" in page.content.decode()


def test_the_login_says_why_the_demo_password_is_refused_outside_demo_mode(client, settings):
    from intruder.auth import DEMO_PASSWORD
    from tests.intruder.factories import make_user

    make_user(username="researcher", password=DEMO_PASSWORD)
    settings.INTRUDER_DEMO = False
    refused = client.post("/accounts/login/", {"username": "researcher", "password": DEMO_PASSWORD})
    assert refused.status_code == 200
    assert "works only in demo mode" in refused.content.decode()
    wrong = client.post("/accounts/login/", {"username": "researcher", "password": "nope-123"})
    assert "works only in demo mode" not in wrong.content.decode()
    settings.INTRUDER_DEMO = True
    logged = client.post("/accounts/login/", {"username": "researcher", "password": DEMO_PASSWORD})
    assert logged.status_code == 302
