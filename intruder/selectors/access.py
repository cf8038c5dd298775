"""Reads for researcher pages: who may see or edit a study, and live study progress."""

from __future__ import annotations

import statistics
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from intruder.models import AnonymizedText, Job, Participant, Study, StudyMember

READ_ROLES = (StudyMember.Role.EDITOR, StudyMember.Role.VIEWER)
# Roles (as `study_role` names them) that may change a study; superusers count as owners.
EDIT_ROLES = frozenset({"owner", StudyMember.Role.EDITOR})


def study_role(user: Any, study: Study) -> str | None:
    """Return "owner", "editor", "viewer" or None for a user's access to a study.

    Superusers count as owners. PSI annotators get no access to researcher pages.
    """
    if not user.is_authenticated:
        return None
    if user.is_superuser or study.owner_id == user.pk:
        return "owner"
    role = (
        StudyMember.objects.filter(study=study, user=user, role__in=READ_ROLES)
        .values_list("role", flat=True)
        .first()
    )
    return role


def role_can_edit(role: str | None) -> bool:
    """Return whether a `study_role` may change the study (owner, editor, superuser)."""
    return role in EDIT_ROLES


def can_edit_study(user: Any, study: Study) -> bool:
    """Return whether the user may change the study (owner, editor, superuser)."""
    return role_can_edit(study_role(user, study))


def owns_study_less_job(user: Any, job: Job) -> bool:
    """Return whether `user` may see and handle a job without a study (its starter, superusers).

    Such jobs (an annotation project's suggestions) belong to nobody's study, so the study
    roles cannot decide; the pages and the API both ask this.
    """
    return user.is_authenticated and (user.is_superuser or job.created_by_id == user.pk)


def studies_visible_to(user: Any) -> QuerySet[Study]:
    """Return the studies a researcher may see."""
    if not user.is_authenticated:
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    return Study.objects.filter(
        Q(owner=user) | Q(members__user=user, members__role__in=READ_ROLES)
    ).distinct()


def servable_texts(study: Study) -> QuerySet[AnonymizedText]:
    """Return the released texts an intruder study serves (its groups; empty = all)."""
    texts = AnonymizedText.objects.filter(
        description__study=study, status=AnonymizedText.Status.RELEASED
    )
    if study.groups:
        texts = texts.filter(description__target__group__in=study.groups)
    return texts


def _count_by(queryset: QuerySet, field: str) -> dict[str, int]:
    """Return {value: number of rows} of one field."""
    rows = queryset.order_by().values(field).annotate(n=Count("id")).values_list(field, "n")
    return dict(rows)


def study_progress(study: Study) -> dict[str, Any]:
    """Return the live progress figures of one study."""
    from intruder.selectors.monitoring import step_counts

    by_status = _count_by(Participant.objects.filter(study=study), "status")
    participants = {status: by_status.get(status, 0) for status in Participant.Status.values}
    # "started" counts those still working; people waiting at the debrief are apart.
    participants["at_debrief"] = step_counts(study).get("debrief", 0)
    participants[Participant.Status.STARTED] -= participants["at_debrief"]
    text_status = _count_by(AnonymizedText.objects.filter(description__study=study), "status")
    judgments_per_text = list(
        servable_texts(study).annotate(n=Count("judgments")).values_list("n", flat=True)
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


FLAGGED = "flagged"
POSSIBLE = "possible"
UNREVIEWED = "unreviewed"
REVIEWED = "reviewed"


def review_texts(study: Study, status: str = "", query: str = "") -> list[AnonymizedText]:
    """Return the study's anonymized texts for review, filtered.

    `status`: a text status; FLAGGED (drafts held back by a blocking leak warning), POSSIBLE
    (drafts with any leak warning), UNREVIEWED or REVIEWED drafts. `query` matches the
    anonymized text, the original, the target's name or key, or the description's id.
    """
    from intruder.services.review import blocking_leaks, leak_warnings

    texts = (
        AnonymizedText.objects.filter(description__study=study)
        .select_related("description__target")
        .order_by("description_id", "method")
    )
    query = query.strip()
    if query:
        texts = texts.filter(
            Q(text__icontains=query)
            | Q(description__text__icontains=query)
            | Q(description__target__name__icontains=query)
            | Q(description__target__key__icontains=query)
            | Q(description__external_id__icontains=query)
        )
    drafts = texts.filter(status=AnonymizedText.Status.DRAFT)
    if status == FLAGGED:
        return [t for t in drafts if blocking_leaks(t)]
    if status == POSSIBLE:
        return [t for t in drafts if leak_warnings(t)]
    if status == UNREVIEWED:
        return list(drafts.filter(reviewed_at__isnull=True))
    if status == REVIEWED:
        return list(texts.filter(reviewed_at__isnull=False))
    if status in AnonymizedText.Status.values:
        texts = texts.filter(status=status)
    return list(texts)


def study_jobs(study: Study, limit: int = 10, kinds: tuple[str, ...] = ()) -> list[Job]:
    """Return the study's most recent jobs (of `kinds`, if given), each with its waiting_note."""
    runs = study.jobs.order_by("-created_at")
    if kinds:
        runs = runs.filter(kind__in=kinds)
    recent = list(runs[:limit])
    for job in recent:
        job.waiting_note = no_worker_note(job)
    return recent


# A polling worker claims a queued job within a second or two; a job still queued after this
# long while no job anywhere shows a fresh heartbeat means no worker is running.
WORKER_SILENT_AFTER = timedelta(seconds=20)


def no_worker_note(job: Job, now: datetime | None = None) -> str:
    """Return a plain warning when a queued job waits and no worker shows a sign of life."""
    now = now or timezone.now()
    if job.status != Job.Status.QUEUED or now - job.created_at < WORKER_SILENT_AFTER:
        return ""
    busy = Job.objects.filter(
        status=Job.Status.RUNNING, heartbeat_at__gte=now - timedelta(minutes=1)
    ).exists()
    if busy:
        return "Waiting: the worker is busy with another job."
    from intruder.selectors.monitoring import duration_text

    waited = duration_text((now - job.created_at).total_seconds())
    return (
        f"No worker has picked this job up (queued for {waited}, no job running): "
        "start one with “python manage.py run_worker”."
    )


def job_status(job: Job) -> dict[str, Any]:
    """Return the JSON a progress bar polls."""
    return {
        "waiting_note": no_worker_note(job),
        "id": job.pk,
        "kind": job.kind,
        "status": job.status,
        "progress_done": job.progress_done,
        "progress_total": job.progress_total,
        "progress_pct": round(job.progress_pct, 1),
        "message": job.message,
        "attempts": job.attempts,
        "result": job.result,
        "finished": job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED, Job.Status.CANCELLED),
    }
