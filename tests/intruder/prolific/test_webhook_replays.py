"""Webhook dedupe and ordering trust only what is signed (issue 37, finding 3).

The signature covers X-Prolific-Request-Timestamp and the body; X-Event-ID and X-Timestamp
are not signed. The attacker holds a captured delivery and may change those two headers
freely; Prolific itself retries an event with the same X-Event-ID, signed anew.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import pytest

from intruder.models import Assignment, Participant, Study
from intruder.prolific.fake_server import WebhookDelivery
from intruder.prolific.models import ProlificStudyState, ProlificSubmission, ProlificWebhookEvent
from intruder.prolific.signing import (
    EVENT_ID_HEADER,
    EVENT_TIME_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    sign,
)
from tests.intruder.prolific.webhook_world import PROLIFIC_STUDY, holder, post, webhook_study

pytestmark = pytest.mark.django_db


def signed(fake, body: bytes, *, at: float | str, event_id: str, event_time: str = ""):
    """A delivery signed with the workspace secret at `at` (as Prolific would sign it)."""
    timestamp = str(at) if isinstance(at, str) else str(int(at))
    return WebhookDelivery(
        event_id=event_id,
        body=body,
        headers={
            "Content-Type": "application/json",
            SIGNATURE_HEADER: sign(secret=fake.webhook_secret, timestamp=timestamp, body=body),
            TIMESTAMP_HEADER: timestamp,
            EVENT_ID_HEADER: event_id,
            EVENT_TIME_HEADER: event_time,
        },
    )


def altered(delivery: WebhookDelivery, **headers: str) -> WebhookDelivery:
    """The attacker's copy: the same signed bytes, other unsigned headers."""
    return WebhookDelivery(
        event_id=headers.get(EVENT_ID_HEADER, delivery.event_id),
        body=delivery.body,
        headers={**delivery.headers, **headers},
    )


@pytest.fixture
def study(prolific_settings, fake_prolific) -> Study:
    return webhook_study(fake_prolific)


FAR_FUTURE = (datetime.now(UTC) + timedelta(days=3650)).isoformat()


def test_a_replay_under_a_new_event_id_and_future_time_applies_nothing(
    client, study, fake_prolific
):
    participant = holder(study, "PIDREPLAY")
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDREPLAY")
    captured = fake_prolific.delivery(fake_prolific.events[-1])  # ACTIVE
    assert post(client, captured).json()["outcome"] == "applied"
    replay = altered(captured, **{EVENT_ID_HEADER: "forged-id", EVENT_TIME_HEADER: FAR_FUTURE})
    assert post(client, replay).json()["outcome"] == "duplicate"
    assert ProlificWebhookEvent.objects.count() == 1
    # The genuine RETURNED event that follows is applied and frees the slot.
    returned = fake_prolific.submission_set_status(sub, "RETURNED")
    response = post(client, fake_prolific.delivery(returned)).json()
    assert response == {"outcome": "applied", "released": 1}
    participant.refresh_from_db()
    assert participant.status == Participant.Status.RETURNED


def test_a_captured_delivery_first_seen_as_a_replay_cannot_outrank_later_events(
    client, study, fake_prolific
):
    """The attacker withheld the original; its far-future X-Timestamp counts no later than
    the second it was signed in, so the genuine later RETURNED still wins."""
    participant = holder(study, "PIDHELD")
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDHELD")
    active = fake_prolific.events[-1]
    captured = signed(
        fake_prolific,
        json.dumps(active["payload"]).encode(),
        at=time.time() - 30,
        event_id=active["event_id"],
        event_time=FAR_FUTURE,
    )
    returned = fake_prolific.submission_set_status(sub, "RETURNED")
    assert post(client, captured).json()["outcome"] == "applied"  # ACTIVE, as signed
    assert post(client, fake_prolific.delivery(returned)).json()["outcome"] == "applied"
    assert ProlificSubmission.objects.get(submission_id=sub).status == "RETURNED"
    participant.refresh_from_db()
    assert participant.status == Participant.Status.RETURNED
    # Replayed again after the RETURNED, under yet another id: nothing changes.
    again = altered(captured, **{EVENT_ID_HEADER: "third-id"})
    assert post(client, again).json()["outcome"] == "duplicate"
    assert ProlificSubmission.objects.get(submission_id=sub).status == "RETURNED"


def test_prolifics_own_retries_and_repeated_statuses_are_honest(client, study, fake_prolific):
    """A retry (same X-Event-ID, signed anew) is a duplicate; the same body signed at other
    times (paused, then resumed twice) is a new event each time."""
    body = json.dumps(
        {"event_type": "study.status.change", "resource_id": PROLIFIC_STUDY, "status": "ACTIVE"}
    ).encode()
    paused = json.dumps(
        {"event_type": "study.status.change", "resource_id": PROLIFIC_STUDY, "status": "PAUSED"}
    ).encode()
    now = time.time()
    first = signed(fake_prolific, body, at=now - 20, event_id="e1")
    assert post(client, first).json()["outcome"] == "applied"
    assert post(client, fake_prolific.delivery_again(first)).json()["outcome"] == "duplicate"
    assert post(client, signed(fake_prolific, paused, at=now - 10, event_id="e2")).json() == {
        "outcome": "applied",
        "released": 0,
    }
    resumed = signed(fake_prolific, body, at=now - 5, event_id="e3")
    assert post(client, resumed).json()["outcome"] == "applied"
    assert ProlificStudyState.objects.get(study=study).status == "ACTIVE"


def test_prolifics_retry_replayed_under_a_new_event_id_is_a_duplicate(client, study, fake_prolific):
    """Found by prolific_replay's full run: a retry (same X-Event-ID, signed anew) is a
    duplicate by its id, so no event row kept its digest, and its bytes replayed under a new
    X-Event-ID within the window were applied as a new event."""
    participant = holder(study, "PIDRETRY")
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDRETRY")
    active = fake_prolific.events[-1]
    body = json.dumps(active["payload"]).encode()
    first = signed(fake_prolific, body, at=time.time() - 20, event_id=active["event_id"])
    assert post(client, first).json()["outcome"] == "applied"
    retry = signed(fake_prolific, body, at=time.time(), event_id=active["event_id"])
    assert post(client, retry).json()["outcome"] == "duplicate"
    returned = fake_prolific.submission_set_status(sub, "RETURNED")
    assert post(client, fake_prolific.delivery(returned)).json()["outcome"] == "applied"
    replay = altered(retry, **{EVENT_ID_HEADER: "forged-after-retry"})
    assert post(client, replay).json()["outcome"] == "duplicate"
    assert not ProlificWebhookEvent.objects.filter(event_id="forged-after-retry").exists()
    assert ProlificSubmission.objects.get(submission_id=sub).status == "RETURNED"
    participant.refresh_from_db()
    assert participant.status == Participant.Status.RETURNED


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400", "1e300"])
def test_a_non_finite_or_impossible_signed_timestamp_is_4xx(client, study, fake_prolific, value):
    body = json.dumps({"event_type": "x", "resource_id": PROLIFIC_STUDY}).encode()
    response = post(client, signed(fake_prolific, body, at=value, event_id=f"t-{value}"))
    assert 400 <= response.status_code < 500
    assert not ProlificWebhookEvent.objects.exists()


@pytest.mark.parametrize(
    "value", ["nan", "inf", "-1e400", "1e20", "99999999999999", "2026-13-45T00:00:00", "x" * 5000]
)
def test_a_bad_x_timestamp_is_4xx(client, study, fake_prolific, value):
    body = json.dumps({"event_type": "x", "resource_id": PROLIFIC_STUDY}).encode()
    delivery = signed(fake_prolific, body, at=time.time(), event_id="x1", event_time=value)
    response = post(client, delivery)
    assert response.status_code == 400
    assert not ProlificWebhookEvent.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
        json.dumps({"event_type": "x", "nested": [[[[[[[[[[1]]]]]]]]]]}).encode(),
    ],
)
def test_a_pathologically_nested_signed_body_is_4xx(client, study, fake_prolific, body):
    response = post(client, signed(fake_prolific, body, at=time.time(), event_id="deep"))
    assert response.status_code == 400
    assert not ProlificWebhookEvent.objects.exists()


def test_a_body_as_deep_as_a_real_event_with_additions_is_accepted(client, study, fake_prolific):
    body = json.dumps(
        {
            "event_type": "study.status.change",
            "resource_id": PROLIFIC_STUDY,
            "status": "PAUSED",
            "meta": {"reasons": [{"code": 1}]},
        }
    ).encode()
    response = post(client, signed(fake_prolific, body, at=time.time(), event_id="ok"))
    assert response.json()["outcome"] == "applied"


def test_released_slots_stay_released_after_a_replay_storm(client, study, fake_prolific):
    """Twenty replays of a captured ACTIVE delivery, each under a new id and time, after the
    genuine RETURNED: the participant keeps nothing."""
    participant = holder(study, "PIDSTORM")
    sub = fake_prolific.submission_start(PROLIFIC_STUDY, "PIDSTORM")
    captured = fake_prolific.delivery(fake_prolific.events[-1])
    post(client, captured)
    post(client, fake_prolific.delivery(fake_prolific.submission_set_status(sub, "RETURNED")))
    outcomes = {
        post(
            client,
            altered(
                captured,
                **{
                    EVENT_ID_HEADER: f"storm-{n}",
                    EVENT_TIME_HEADER: str(time.time() + 3600 * n),
                },
            ),
        ).json()["outcome"]
        for n in range(20)
    }
    assert outcomes == {"duplicate"}
    assert ProlificSubmission.objects.get(submission_id=sub).status == "RETURNED"
    assert not Assignment.objects.filter(
        participant=participant, status=Assignment.Status.ACTIVE
    ).exists()
