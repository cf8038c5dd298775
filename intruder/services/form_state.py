"""A participant's rejected answer, kept server-side so that errors follow post/redirect/get.

A post that fails validation stores what was typed and the errors on the participant, then
redirects to their page, which shows them again. The browser's history then holds only GET
pages: Back and reload never meet "Confirm Form Resubmission" and never re-send an answer.
The state names the task it belongs to (`write:<position>`, `judge:<assignment id>`), so a
page for another task never shows it; an accepted answer clears it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from intruder.models import Participant

# What is kept of one typed field: more than any accepted answer (descriptions stop at
# 20,000 characters), so the participant sees their text and the error about its length.
MAX_KEPT_CHARS = 25_000


@dataclass(frozen=True)
class RejectedAnswer:
    """What the participant typed into a rejected form, and the errors to show beside it."""

    values: dict[str, str] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)


def _clean(value: object) -> str:
    # PostgreSQL's jsonb cannot hold NUL characters; they are never part of an answer anyway.
    return str(value).replace("\x00", "")[:MAX_KEPT_CHARS]


def form_state_keep(
    *,
    participant: Participant,
    task: str,
    values: dict[str, object],
    errors: dict[str, list[str]],
) -> None:
    """Store a rejected answer for `task` (replacing any earlier one)."""
    state = {
        "task": task,
        "values": {name: _clean(value) for name, value in values.items()},
        "errors": {name: [_clean(m) for m in messages] for name, messages in errors.items()},
    }
    Participant.objects.filter(pk=participant.pk).update(form_state=state)
    participant.form_state = state


def form_state_for(*, participant: Participant, task: str) -> RejectedAnswer | None:
    """Return the rejected answer kept for `task`, or None (none kept, or for another task)."""
    state = participant.form_state or {}
    if state.get("task") != task:
        return None
    return RejectedAnswer(values=dict(state.get("values", {})), errors=state.get("errors", {}))


def form_state_clear(*, participant: Participant) -> None:
    """Forget the rejected answer (an answer was accepted); no write when none is kept."""
    if participant.form_state:
        Participant.objects.filter(pk=participant.pk).update(form_state={})
        participant.form_state = {}


def write_task_key(position: int) -> str:
    """Return the form-state key of a writer's description task."""
    return f"write:{position}"


def judge_task_key(assignment_id: int | str) -> str:
    """Return the form-state key of an intruder's assigned text."""
    return f"judge:{assignment_id}"


def check_task_key(check_id: int | str) -> str:
    """Return the form-state key of an attention check."""
    return f"check:{check_id}"


# The form-state key of the debrief's familiarity question (asked once per participant).
FAMILIARITY_TASK = "familiarity"
