"""Reads for monitoring a running study: its live progress, each participant's step and time,
recruitment over time, judgments per text, and whether the study is full.

Steps are derived from what is stored, as the participant pages derive them
(`selectors.participant.participant_step`), but for every participant at once from
annotated counts instead of a few queries each.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Q, QuerySet, Sum

from intruder.models import AnonymizedText, Assignment, Participant, Study
from intruder.selectors.counts import count_by
from intruder.selectors.participant import intruder_text_pool

IN_PROGRESS_STEPS = ("consent", "instructions", "write", "judge")


@dataclass(frozen=True)
class ParticipantRow:
    """One participant as the monitoring page shows them (never their session token)."""

    pk: int
    prolific_pid: str
    status: str
    step: str
    group: str
    started_at: datetime
    last_seen_at: datetime
    completed_at: datetime | None
    items_done: int
    items_total: int
    judging_ms: int | None

    @property
    def time_spent(self) -> timedelta:
        """Return the time from enrolment to completion (or to the last page seen)."""
        return (self.completed_at or self.last_seen_at) - self.started_at

    @property
    def time_spent_text(self) -> str:
        return duration_text(self.time_spent.total_seconds())

    @property
    def judging_text(self) -> str:
        """Return the summed answering time of the judgments ("" when none)."""
        return duration_text(self.judging_ms / 1000) if self.judging_ms else ""


def duration_text(seconds: float) -> str:
    """Return a duration as "1 h 02 min", "3 min 05 s" or "42 s"."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def _annotated(study: Study) -> QuerySet[Participant]:
    return Participant.objects.filter(study=study).annotate(
        n_done=Count(
            "assignments", filter=Q(assignments__status=Assignment.Status.COMPLETED), distinct=True
        ),
        n_active=Count(
            "assignments", filter=Q(assignments__status=Assignment.Status.ACTIVE), distinct=True
        ),
        n_tasks=Count("writing_tasks", distinct=True),
        n_written=Count(
            "writing_tasks", filter=Q(writing_tasks__description__isnull=False), distinct=True
        ),
        ms=Sum("judgments__time_spent_ms"),
    )


def _step(study: Study, p: Any) -> str:
    """Return the step of an annotated participant (see participant_step)."""
    if p.status != Participant.Status.STARTED:
        return p.status
    if p.consented_at is None:
        return "consent"
    if study.kind == Study.Kind.COLLECTION:
        return "write" if p.n_tasks == 0 or p.n_written < p.n_tasks else "debrief"
    if p.instructions_seen_at is None:
        return "instructions"
    if p.n_active or p.n_done < study.items_per_participant:
        return "judge"
    return "debrief"


def participant_rows(study: Study) -> list[ParticipantRow]:
    """Return every participant of the study with step, progress and time spent."""
    rows = []
    for p in _annotated(study).order_by("-started_at"):
        collection = study.kind == Study.Kind.COLLECTION
        rows.append(
            ParticipantRow(
                pk=p.pk,
                prolific_pid=p.prolific_pid,
                status=p.status,
                step=_step(study, p),
                group=p.group,
                started_at=p.started_at,
                last_seen_at=p.last_seen_at,
                completed_at=p.completed_at,
                items_done=p.n_written if collection else p.n_done,
                items_total=p.n_tasks if collection else study.items_per_participant,
                judging_ms=p.ms,
            )
        )
    return rows


def step_counts(study: Study) -> dict[str, int]:
    """Return how many participants are on each step (debrief apart from those judging)."""
    counts: dict[str, int] = {}
    for p in _annotated(study).only("status", "consented_at", "instructions_seen_at", "study_id"):
        step = _step(study, p)
        counts[step] = counts.get(step, 0) + 1
    return counts


def recruitment_times(study: Study) -> dict[str, list[datetime]]:
    """Return the enrolment and completion times of the study's participants, sorted.

    "Completed" means status completed, the one definition every count on the study pages
    uses (study_progress, the step badges); a completed participant without a completion
    time (imported, or invented demo data) is placed at their last activity.
    """
    people = Participant.objects.filter(study=study)
    completed = people.filter(status=Participant.Status.COMPLETED).values_list(
        "completed_at", "last_seen_at", "started_at"
    )
    return {
        "enrolled": sorted(people.values_list("started_at", flat=True)),
        "completed": sorted(next(t for t in times if t is not None) for times in completed),
    }


def judgments_per_text(study: Study) -> list[int]:
    """Return the number of judgments of every text the study serves."""
    return list(
        intruder_text_pool(study=study).annotate(n=Count("judgments")).values_list("n", flat=True)
    )


def study_is_full(study: Study) -> bool:
    """Return whether every served text has all its slots judged or held (new PIDs see "full")."""
    if study.kind != Study.Kind.INTRUDER:
        return False
    held = (
        intruder_text_pool(study=study)
        .annotate(
            n=Count(
                "assignments",
                filter=Q(
                    assignments__status__in=[
                        Assignment.Status.ACTIVE,
                        Assignment.Status.COMPLETED,
                    ]
                ),
            )
        )
        .values_list("n", flat=True)
    )
    counts = list(held)
    return bool(counts) and min(counts) >= study.judgments_per_text


def study_progress(study: Study) -> dict[str, Any]:
    """Return the live progress figures of one study."""
    by_status = count_by(Participant.objects.filter(study=study), "status")
    participants = {status: by_status.get(status, 0) for status in Participant.Status.values}
    # "started" counts those still working; people waiting at the debrief are apart.
    participants["at_debrief"] = step_counts(study).get("debrief", 0)
    participants[Participant.Status.STARTED] -= participants["at_debrief"]
    text_status = count_by(AnonymizedText.objects.filter(description__study=study), "status")
    judgments_per_text = list(
        intruder_text_pool(study=study).annotate(n=Count("judgments")).values_list("n", flat=True)
    )
    judged = {
        "texts": len(judgments_per_text),
        "min": min(judgments_per_text) if judgments_per_text else None,
        "median": statistics.median(judgments_per_text) if judgments_per_text else None,
        "target": study.judgments_per_text,
        "total": sum(judgments_per_text),
    }
    judged["complete_pct"] = (
        round(
            100.0
            * sum(min(n, study.judgments_per_text) for n in judgments_per_text)
            / (study.judgments_per_text * len(judgments_per_text)),
            1,
        )
        if judgments_per_text
        else 0.0
    )
    return {
        "slug": study.slug,
        "kind": study.kind,
        "is_open": study.is_open,
        "descriptions": study.descriptions.count(),
        "targets": study.targets.count(),
        "anonymized": {s: text_status.get(s, 0) for s in AnonymizedText.Status.values},
        "judgments_per_text": judged,
        "participants": participants,
        "participants_total": sum(participants.values()),
    }
