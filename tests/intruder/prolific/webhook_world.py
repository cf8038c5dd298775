"""The webhook tests' shared world: a study mirrored on the fake Prolific, a participant
holding a text, and a delivery posted as Prolific would post it."""

from __future__ import annotations

from django.urls import reverse
from django.utils import timezone

from intruder.models import Participant, PersonGroup, Study
from intruder.services.participants import participant_current_step
from tests.intruder.factories import make_participant, make_study, make_texts

PROLIFIC_STUDY = "64f0c0ffee0000000000beef"


def post(client, delivery):
    """POST a delivery to the webhook with its headers as Prolific sends them."""
    headers = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in delivery.headers.items()}
    headers.pop("HTTP_CONTENT_TYPE", None)
    return client.post(
        reverse("prolific-webhook"), delivery.body, content_type="application/json", **headers
    )


def webhook_study(fake_prolific) -> Study:
    """An intruder study of four famous texts, linked to an ACTIVE study on the fake."""
    study = make_study(
        kind=Study.Kind.INTRUDER,
        items_per_participant=2,
        judgments_per_text=1,
        prolific_study_id=PROLIFIC_STUDY,
    )
    make_texts(study=study, count=4, group=PersonGroup.FAMOUS)
    fake_prolific.studies[PROLIFIC_STUDY] = {"id": PROLIFIC_STUDY, "status": "ACTIVE"}
    return study


def holder(study: Study, pid: str) -> Participant:
    """A participant judging their first text (one slot held)."""
    participant = make_participant(
        study=study,
        prolific_pid=pid,
        group=PersonGroup.FAMOUS,
        consented_at=timezone.now(),
        instructions_seen_at=timezone.now(),
    )
    assert participant_current_step(participant=participant).assignment is not None
    return participant
