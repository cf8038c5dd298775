"""The message a researcher sees after asking for a background job: queued, or already under
way (one active job per study and kind, so a second click never queues a twin)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest

from intruder.models import Job


def job_start_message(
    request: HttpRequest, *, job: Job, created: bool, name: str, queued: str | None = None
) -> None:
    """Tell the user that the `name` job was queued (and what runs it or where its progress
    shows), or that it is already queued or running. `queued=None` says nothing when it was
    queued: the page's progress bar says it."""
    if not created:
        messages.info(request, f"{name} job {job.pk} is already {job.status}.")
    elif queued:
        messages.success(request, f"{name} job {job.pk} queued; {queued}.")
