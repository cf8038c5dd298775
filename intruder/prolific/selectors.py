"""Reads of a study's Prolific side that pages outside the Prolific package need."""

from __future__ import annotations

from intruder.models import Participant
from intruder.prolific.models import ProlificSubmission


def prolific_submission_status(participant: Participant) -> str:
    """Return Prolific's last reported status of the participant's submission ("" if none).

    Tells apart why a participant stopped: Prolific returned, timed out or rejected them, or
    the platform did (declined consent, the platform's own time limit).
    """
    return (
        ProlificSubmission.objects.filter(
            study_id=participant.study_id, prolific_pid=participant.prolific_pid
        )
        .order_by("-status_at")
        .values_list("status", flat=True)
        .first()
        or ""
    )
