"""Webhook deliveries from the fake Prolific: verification, idempotency, order, release."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from intruder.models import AnonymizedText, Assignment, Participant, PersonGroup, Study
from intruder.prolific.models import ProlificStudyState, ProlificSubmission, ProlificWebhookEvent
from intruder.prolific.signing import HOOK_SECRET_HEADER, TIMESTAMP_HEADER, sign
from intruder.services.participants import participant_consent_give, participant_current_step
from tests.intruder.factories import make_judgment, make_participant
from tests.intruder.prolific.webhook_world import PROLIFIC_STUDY, holder, post, webhook_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(prolific_settings, fake_prolific) -> Study:
    return webhook_study(fake_prolific)


def test_a_returned_submission_releases_the_held_slot_at_once(client, study, fake_prolific):
    participant = holder(study, "PIDRETURN1")
    held = Assignment.objects.get(participant=participant).text_id
    done = AnonymizedText.objects.filter(description__study=study).exclude(pk=held).first()
    make_judgment(participant=participant, text=done, position=2)  # a finished answer, kept
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDRETURN1")
    event = fake_prolific.submission_set_status(sub, "RETURNED")
    response = post(client, fake_prolific.delivery(event))
    assert response.status_code == 200
    assert response.json() == {"outcome": "applied", "released": 1}
    participant.refresh_from_db()
    assert participant.status == Participant.Status.RETURNED
    assert not Assignment.objects.filter(status=Assignment.Status.ACTIVE).exists()
    assert participant.judgments.count() == 1


@pytest.mark.parametrize(
    ("status", "becomes"),
    [("TIMED-OUT", Participant.Status.TIMED_OUT), ("REJECTED", Participant.Status.RETURNED)],
)
def test_timed_out_and_rejected_release_too(client, study, fake_prolific, status, becomes):
    participant = holder(study, "PIDX")
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDX")
    assert post(client, fake_prolific.delivery(fake_prolific.submission_set_status(sub, status)))
    participant.refresh_from_db()
    assert participant.status == becomes
    assert not Assignment.objects.filter(status=Assignment.Status.ACTIVE).exists()


def test_a_duplicate_event_id_is_acknowledged_and_applied_once(client, study, fake_prolific):
    holder(study, "PIDDUP")
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDDUP")
    event = fake_prolific.submission_set_status(sub, "RETURNED")
    first = post(client, fake_prolific.delivery(event))
    again = post(client, fake_prolific.delivery(event))  # Prolific's retry: signed anew
    assert first.json()["outcome"] == "applied"
    assert again.status_code == 200 and again.json()["outcome"] == "duplicate"
    assert ProlificWebhookEvent.objects.count() == 1


def test_an_older_event_never_overrides_a_newer_state(client, study, fake_prolific):
    participant = holder(study, "PIDORDER")
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDORDER")
    returned = fake_prolific.submission_set_status(sub, "RETURNED")
    older_payload = {**returned["payload"], "status": "ACTIVE"}
    older = {**returned, "event_id": "older", "payload": older_payload}
    older["occurred_at"] = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()
    assert post(client, fake_prolific.delivery(returned)).json()["outcome"] == "applied"
    assert post(client, fake_prolific.delivery(older)).json()["outcome"] == "stale"
    assert ProlificSubmission.objects.get(submission_id=sub).status == "RETURNED"
    participant.refresh_from_db()
    assert participant.status == Participant.Status.RETURNED


def test_bad_signatures_get_403_and_change_nothing(client, study, fake_prolific):
    participant = holder(study, "PIDBAD")
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDBAD")
    event = fake_prolific.submission_set_status(sub, "RETURNED")
    forged = fake_prolific.delivery(event, secret="not-the-workspace-secret")
    tampered = fake_prolific.delivery(event)
    tampered.body = tampered.body.replace(b"RETURNED", b"TIMED-OUT")
    stale = fake_prolific.delivery(event)
    old = str(int(time.time()) - 3600)  # a replay an hour later, re-signed
    stale.headers[TIMESTAMP_HEADER] = old
    stale.headers["X-Prolific-Request-Signature"] = sign(
        secret=fake_prolific.webhook_secret, timestamp=old, body=stale.body
    )
    unsigned = fake_prolific.delivery(event)
    del unsigned.headers["X-Prolific-Request-Signature"]
    for delivery in (forged, tampered, stale, unsigned):
        assert post(client, delivery).status_code == 403
    assert not ProlificWebhookEvent.objects.exists()
    participant.refresh_from_db()
    assert participant.status == Participant.Status.STARTED
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1


def test_without_a_secret_every_delivery_is_refused(client, study, fake_prolific, settings):
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDNOSECRET")
    event = fake_prolific.submission_set_status(sub, "RETURNED")
    assert post(client, fake_prolific.delivery(event)).status_code == 403


def test_malformed_deliveries_are_4xx_never_500(client, study, fake_prolific):
    timestamp = str(int(time.time()))
    for body in (b"not json", b"[1, 2]", b""):
        headers = {
            "HTTP_X_PROLIFIC_REQUEST_SIGNATURE": sign(
                secret=fake_prolific.webhook_secret, timestamp=timestamp, body=body
            ),
            "HTTP_X_PROLIFIC_REQUEST_TIMESTAMP": timestamp,
            "HTTP_X_EVENT_ID": "e1",
            "HTTP_X_TIMESTAMP": "garbage" if body == b"" else "",
        }
        response = client.post(
            reverse("prolific-webhook"), body, content_type="application/json", **headers
        )
        assert response.status_code == 400
    assert client.get(reverse("prolific-webhook")).status_code == 405


def test_unknown_event_types_are_acknowledged_and_logged(client, study, fake_prolific, caplog):
    event = {
        "event_id": "e-unknown",
        "occurred_at": datetime.now(UTC).isoformat(),
        "payload": {"event_type": "study.has_high_return_rate", "resource_id": PROLIFIC_STUDY},
    }
    response = post(client, fake_prolific.delivery(event))
    assert response.status_code == 200 and response.json()["outcome"] == "unknown_type"
    assert "study.has_high_return_rate" in caplog.text


def test_study_status_is_mirrored_in_timestamp_order(client, study, fake_prolific, client_for):
    prolific = client_for()
    prolific.study_transition(PROLIFIC_STUDY, "PAUSE")
    paused = fake_prolific.events[-1]
    prolific.study_transition(PROLIFIC_STUDY, "START")
    resumed = fake_prolific.events[-1]
    resumed["occurred_at"] = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
    assert post(client, fake_prolific.delivery(resumed)).json()["outcome"] == "applied"
    assert post(client, fake_prolific.delivery(paused)).json()["outcome"] == "stale"
    assert ProlificStudyState.objects.get(study=study).status == "ACTIVE"


def test_the_subscription_handshake_echoes_x_hook_secret(client):
    response = client.post(reverse("prolific-webhook"), **{"HTTP_X_HOOK_SECRET": "abc123"})
    assert response.status_code == 200
    assert response[HOOK_SECRET_HEADER] == "abc123"


def test_a_returned_slot_is_reissued_to_the_next_participant(client, study, fake_prolific):
    study.judgments_per_text = 1
    study.items_per_participant = 4
    study.save()
    first = holder(study, "PIDFIRST")
    held_text = Assignment.objects.get(participant=first).text_id
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDFIRST")
    post(client, fake_prolific.delivery(fake_prolific.submission_set_status(sub, "RETURNED")))
    second = make_participant(
        study=study,
        prolific_pid="PIDSECOND",
        group=PersonGroup.FAMOUS,
        instructions_seen_at=timezone.now(),
    )
    participant_consent_give(participant=second)
    taken = set()
    while (step := participant_current_step(participant=second)).assignment is not None:
        taken.add(step.assignment.text_id)
        Assignment.objects.filter(pk=step.assignment.pk).update(status="completed")
    assert held_text in taken


def test_payload_shape_matches_the_documented_one(fake_prolific, study):
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDSHAPE")
    payload = json.loads(fake_prolific.delivery(fake_prolific.events[-1]).body)
    assert payload == {
        "event_type": "submission.status.change",
        "resource_id": sub,
        "status": "ACTIVE",
        "participant_id": "PIDSHAPE",
        "study_id": PROLIFIC_STUDY,
    }
