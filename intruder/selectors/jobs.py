"""Reads for job progress: a study's recent jobs, a progress bar's JSON, the no-worker hint."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from intruder.models import Job, Study
from intruder.selectors.monitoring import duration_text


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
        "attempt_label": job.attempt_label,
        "result": job.result,
        "finished": job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED, Job.Status.CANCELLED),
    }
