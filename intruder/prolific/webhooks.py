"""Prolific webhook deliveries: verify, de-duplicate, order, apply.

- Verified with the workspace secret (`signing`); a delivery that fails gets 403 and
  changes nothing, as does one whose request timestamp is off by more than the allowed skew.
- Only signed data decides (the signature covers X-Prolific-Request-Timestamp and the body,
  not X-Event-ID or X-Timestamp). The event row is inserted in the same transaction as its
  effect, once per X-Event-ID (Prolific's retries) and once per signed content (a SHA-256 of
  the signed timestamp and body: a captured delivery replayed under a new X-Event-ID), so a
  duplicate (or a concurrent retry) is acknowledged and applies nothing.
- Ordered per submission and per study by when the event occurred: X-Timestamp, but never
  after the second of the signed request timestamp (so an altered X-Timestamp can only make its
  own delivery older). An event older than the state it would change is stored as `stale` and
  changes nothing.
- Every event resolves to the one study holding its Prolific study ID (a database
  constraint keeps it to one).
- `submission.status.change` to RETURNED, TIMED-OUT or REJECTED releases the participant's
  active assignments at once (their finished judgments stay) and stops their group claim.
- `study.status.change` is mirrored on the study's Prolific state.
- Unknown event types are acknowledged and logged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from intruder.exceptions import IntruderError
from intruder.models import Assignment, Participant, Study
from intruder.prolific.client import RELEASING_STATUSES, ProlificError, client_from_settings
from intruder.prolific.models import (
    ProlificSignedDelivery,
    ProlificStudyState,
    ProlificSubmission,
    ProlificWebhookEvent,
)
from intruder.prolific.signing import signature_valid

logger = logging.getLogger(__name__)

SUBMISSION_EVENT = "submission.status.change"
STUDY_EVENT = "study.status.change"

# What a participant becomes when Prolific says their submission ended without completion.
PARTICIPANT_STATUS = {
    "RETURNED": Participant.Status.RETURNED,
    "TIMED-OUT": Participant.Status.TIMED_OUT,
    "REJECTED": Participant.Status.RETURNED,
}


class DeliveryRefused(IntruderError):
    """The delivery failed verification; `status` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 403) -> None:
        super().__init__(message)
        self.status = self.status_code = status


@dataclass(frozen=True)
class Delivery:
    """What the endpoint received: raw body and the headers that matter."""

    body: bytes
    signature: str
    request_timestamp: str
    event_id: str
    event_time: str


@dataclass(frozen=True)
class Outcome:
    """What a delivery did: applied, duplicate, stale, unknown_type, unknown_study."""

    outcome: str
    released: int = 0


def delivery_verify(delivery: Delivery, *, now: datetime | None = None) -> dict:
    """Return the delivery's JSON payload, or raise DeliveryRefused (nothing is stored)."""
    secret = settings.PROLIFIC_WEBHOOK_SECRET
    if not secret:
        raise DeliveryRefused("No PROLIFIC_WEBHOOK_SECRET is set: deliveries are refused.", 403)
    if not signature_valid(
        secret=secret,
        timestamp=delivery.request_timestamp,
        body=delivery.body,
        signature=delivery.signature,
    ):
        raise DeliveryRefused("Bad or missing X-Prolific-Request-Signature.", 403)
    now = now or timezone.now()
    sent = signed_time(delivery)
    if abs(now.timestamp() - sent.timestamp()) > settings.PROLIFIC_WEBHOOK_MAX_SKEW_SECONDS:
        raise DeliveryRefused("X-Prolific-Request-Timestamp is too far from now (replay?).", 403)
    if not delivery.event_id:
        raise DeliveryRefused("Missing X-Event-ID.", 400)
    try:
        payload = json.loads(
            delivery.body, parse_constant=_refuse_constant, parse_float=_finite_float
        )
    except (ValueError, RecursionError):
        raise DeliveryRefused(
            "The body is not JSON a database can store (NaN, Infinity and numbers beyond a "
            "double are refused).",
            400,
        ) from None
    if not isinstance(payload, dict):
        raise DeliveryRefused("The body is not a JSON object.", 400)
    if _depth(payload) > MAX_PAYLOAD_DEPTH:
        raise DeliveryRefused("The body is nested deeper than any Prolific event.", 400)
    if _holds_nul(payload):
        raise DeliveryRefused("The body holds a NUL character (\\u0000).", 400)
    return payload


def _refuse_constant(name: str) -> None:
    """Refuse NaN and ±Infinity, which `json.loads` accepts and the JSON column does not."""
    raise ValueError(f"non-standard JSON constant {name}")


def _finite_float(text: str) -> float:
    """Parse a JSON number; refuse one beyond a double (1e400 would become inf)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text[:20]}")
    return value


def _holds_nul(value: object) -> bool:
    """Whether a key or string holds U+0000 (PostgreSQL's jsonb cannot store it)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack += list(item.keys()) + list(item.values())
        elif isinstance(item, list):
            stack += item
    return False


# Prolific's event bodies are flat objects; a few levels leave room for additions.
MAX_PAYLOAD_DEPTH = 8


def _depth(value: object) -> int:
    """Return how deeply `value` nests (iteratively: a deep body cannot exhaust the stack)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_PAYLOAD_DEPTH:
            break
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        stack += [(child, level + 1) for child in children]
    return deepest


def _unix_time(value: str, header: str) -> datetime:
    """Parse UNIX seconds; a non-finite or unrepresentable time is a 400."""
    try:
        seconds = float(value)
    except ValueError:
        raise DeliveryRefused(f"{header} is not a UNIX time.", 400) from None
    if not math.isfinite(seconds):
        raise DeliveryRefused(f"{header} is not a finite UNIX time.", 400)
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise DeliveryRefused(f"{header} is out of range.", 400) from None


def signed_time(delivery: Delivery) -> datetime:
    """Return the signed X-Prolific-Request-Timestamp (call after the signature check)."""
    return _unix_time(delivery.request_timestamp, "X-Prolific-Request-Timestamp")


def signed_digest(delivery: Delivery) -> str:
    """Return the SHA-256 of what the signature covers: the request timestamp and body."""
    return hashlib.sha256(delivery.request_timestamp.encode() + b"." + delivery.body).hexdigest()


# The signed request timestamp counts whole seconds: an event may have occurred within it.
SIGNED_TIME_RESOLUTION = timedelta(seconds=1)


def event_time(value: str, *, signed: datetime) -> datetime:
    """Return when the event occurred: X-Timestamp (ISO 8601 or UNIX seconds; naive = UTC),
    never after the second of the signed request timestamp (X-Timestamp is not signed)."""
    if not value:
        return signed
    try:
        float(value)
    except ValueError:
        try:
            parsed = parse_datetime(value) if len(value) <= 64 else None
        except ValueError:  # well formed but impossible (month 13)
            parsed = None
        if parsed is None:
            raise DeliveryRefused("X-Timestamp is neither ISO 8601 nor a UNIX time.", 400) from None
        parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    else:
        parsed = _unix_time(value, "X-Timestamp")
    return min(parsed, signed + SIGNED_TIME_RESOLUTION)


def delivery_handle(delivery: Delivery, *, now: datetime | None = None) -> Outcome:
    """Verify and apply one delivery (see the module docstring); raise DeliveryRefused."""
    now = now or timezone.now()
    payload = delivery_verify(delivery, now=now)
    occurred = event_time(delivery.event_time, signed=signed_time(delivery))
    event_type = str(payload.get("event_type", ""))
    digest = signed_digest(delivery)
    event_id = delivery.event_id[:100]
    try:
        with transaction.atomic():
            ProlificSignedDelivery.objects.create(signed_digest=digest, event_id=event_id)
            event = ProlificWebhookEvent.objects.create(
                event_id=event_id,
                event_type=event_type[:100],
                occurred_at=occurred,
                payload=payload,
            )
            outcome = _apply(event_type, payload, occurred=occurred, now=now)
            ProlificWebhookEvent.objects.filter(pk=event.pk).update(outcome=outcome.outcome)
    except IntegrityError:
        if ProlificSignedDelivery.objects.filter(signed_digest=digest).exists():
            return Outcome("duplicate")  # these signed bytes were seen: a replay or a resend
        if not ProlificWebhookEvent.objects.filter(event_id=event_id).exists():
            raise
        # Prolific's retry of a known event, signed anew: keep its digest, so its bytes
        # replayed under another X-Event-ID are a duplicate too.
        try:
            with transaction.atomic():
                ProlificSignedDelivery.objects.create(signed_digest=digest, event_id=event_id)
        except IntegrityError:
            pass  # the same retry, delivered twice at once
        return Outcome("duplicate")
    if outcome.outcome == "unknown_type":
        logger.warning(
            "Prolific webhook: unknown event type %r acknowledged", _log_safe(event_type)
        )
    return outcome


def _log_safe(value: object) -> str:
    """Return a short, printable form of a signed but arbitrary value for the log."""
    text = str(value if value is not None else "")[:64]
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def _apply(event_type: str, payload: dict, *, occurred: datetime, now: datetime) -> Outcome:
    if event_type == SUBMISSION_EVENT:
        return _submission_changed(payload, occurred=occurred, now=now)
    if event_type == STUDY_EVENT:
        return _study_changed(payload, occurred=occurred)
    return Outcome("unknown_type")


def _study_for(prolific_study_id: str) -> Study | None:
    """Return the one study holding this Prolific study ID (unique), or None."""
    if not prolific_study_id:
        return None
    return Study.objects.filter(prolific_study_id=prolific_study_id).first()


def _submission_changed(payload: dict, *, occurred: datetime, now: datetime) -> Outcome:
    study = _study_for(str(payload.get("study_id", "")))
    submission_id = str(payload.get("resource_id", ""))
    pid = str(payload.get("participant_id", ""))
    status = str(payload.get("status", "")).upper()
    if study is None or not submission_id or not pid or not status:
        # The event's type and study only: a whole payload names the participant.
        logger.warning(
            "Prolific webhook %s for an unknown study (%s) or without ids",
            SUBMISSION_EVENT,
            _log_safe(payload.get("study_id")),
        )
        return Outcome("unknown_study")
    row, created = ProlificSubmission.objects.get_or_create(
        submission_id=submission_id,
        defaults={"study": study, "prolific_pid": pid, "status": status, "status_at": occurred},
    )
    if not created:
        # Lock the row so two deliveries for one submission apply one after the other.
        row = ProlificSubmission.objects.select_for_update().get(pk=row.pk)
        if occurred < row.status_at:
            return Outcome("stale")
        ProlificSubmission.objects.filter(pk=row.pk).update(status=status, status_at=occurred)
    released = 0
    if status in RELEASING_STATUSES:
        released = participant_release(study=study, prolific_pid=pid, status=status, now=now)
    return Outcome("applied", released=released)


def participant_release(*, study: Study, prolific_pid: str, status: str, now: datetime) -> int:
    """Stop a participant Prolific says has left; release their active texts; return how many.

    Their finished judgments stay (answers given before returning are kept, as Prolific keeps
    the submission's data); a completed participant stays completed.
    """
    participant = Participant.objects.filter(study=study, prolific_pid=prolific_pid).first()
    if participant is None:
        return 0
    Participant.objects.filter(pk=participant.pk, status=Participant.Status.STARTED).update(
        status=PARTICIPANT_STATUS[status], last_seen_at=now
    )
    return Assignment.objects.filter(
        participant=participant, status=Assignment.Status.ACTIVE
    ).update(status=Assignment.Status.RELEASED)


def _study_changed(payload: dict, *, occurred: datetime) -> Outcome:
    study = _study_for(str(payload.get("resource_id", "")))
    status = str(payload.get("status", "")).upper()
    if study is None or not status:
        logger.warning(
            "Prolific study event for an unknown study (%s)", _log_safe(payload.get("resource_id"))
        )
        return Outcome("unknown_study")
    state, _ = ProlificStudyState.objects.get_or_create(study=study)
    state = ProlificStudyState.objects.select_for_update().get(pk=state.pk)
    if state.status_at is not None and occurred < state.status_at:
        return Outcome("stale")
    ProlificStudyState.objects.filter(pk=state.pk).update(status=status, status_at=occurred)
    return Outcome("applied")


def submission_known(*, study: Study, prolific_pid: str, session_id: str) -> bool:
    """Return whether Prolific knows this participant's place in the study (enrolment check).

    Refused: a PID whose submission the webhooks said ended (returned, timed out, rejected),
    and one whose SESSION_ID Prolific does not confirm as an ACTIVE submission of this PID
    in this study. An unreachable Prolific refuses too (fail closed: a made-up participant
    must hold nothing); the page asks the participant to try again.
    """
    ended = ProlificSubmission.objects.filter(
        study=study, prolific_pid=prolific_pid, status__in=RELEASING_STATUSES
    )
    if ended.exists() or not session_id:
        return False
    client = client_from_settings(max_retries=1)  # a participant is waiting: one retry
    try:
        submission = client.submission_get(session_id)
    except ProlificError as error:
        logger.warning("Prolific check of a submission of study %s failed: %s", study.pk, error)
        return False
    finally:
        client.close()
    if submission is None:
        return False
    ok = (
        submission.participant_id == prolific_pid
        and submission.study_id == study.prolific_study_id
        and submission.status in {"ACTIVE", "RESERVED"}
    )
    if ok:
        ProlificSubmission.objects.get_or_create(
            submission_id=submission.id,
            defaults={
                "study": study,
                "prolific_pid": prolific_pid,
                "status": submission.status,
                "status_at": timezone.now(),
            },
        )
    return ok
