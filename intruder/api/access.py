"""Who may read and change which study through the API.

The API follows the researcher pages (`intruder.selectors.access`): owners, superusers
and members with the editor or viewer role see a study; owners and editors change it.
Everyone else does not see the study at all (404, not 403, so study ids leak nothing).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from intruder.models import Job
from intruder.selectors.access import (
    can_edit_study,
    owns_study_less_job,
    studies_visible_to,
    study_role,
)

__all__ = ["can_edit_study", "can_retry_job", "jobs_visible_to", "studies_visible_to", "study_role"]


def jobs_visible_to(user: Any) -> QuerySet[Job]:
    """Return the jobs of visible studies plus the study-less jobs `user` started."""
    if not user.is_authenticated:
        return Job.objects.none()
    if user.is_superuser:
        return Job.objects.all()
    return Job.objects.filter(
        Q(study__in=studies_visible_to(user)) | Q(study__isnull=True, created_by=user)
    )


def can_retry_job(user: Any, job: Job) -> bool:
    """Return whether `user` may queue `job` again (study editors, or its starter if study-less)."""
    if job.study_id is not None:
        return can_edit_study(user, job.study)
    return owns_study_less_job(user, job)
