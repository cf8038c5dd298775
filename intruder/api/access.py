"""Who may read and change which study through the API.

Owners and superusers may do everything; members act by role: editors change the study and
its texts, annotators edit anonymized texts, viewers only read. Everyone else does not see
the study at all (404, not 403, so that study ids leak nothing).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from intruder.models import Job, Study, StudyMember

EDIT_ROLES = frozenset({StudyMember.Role.EDITOR})
ANNOTATE_ROLES = frozenset({StudyMember.Role.EDITOR, StudyMember.Role.ANNOTATOR})


def studies_visible_to(user: Any) -> QuerySet[Study]:
    """Return the studies `user` owns or is a member of (every study for a superuser)."""
    if not (user and user.is_authenticated and user.is_active):
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    return Study.objects.filter(Q(owner=user) | Q(members__user=user)).distinct()


def study_role(user: Any, study: Study) -> str | None:
    """Return 'owner', a member role, or None when `user` has no access to `study`."""
    if not (user and user.is_authenticated and user.is_active):
        return None
    if user.is_superuser or study.owner_id == user.pk:
        return "owner"
    return StudyMember.objects.filter(study=study, user=user).values_list("role", flat=True).first()


def can_edit_study(user: Any, study: Study) -> bool:
    """Return whether `user` may change the study's settings and targets."""
    role = study_role(user, study)
    return role == "owner" or role in EDIT_ROLES


def can_annotate_study(user: Any, study: Study) -> bool:
    """Return whether `user` may edit, release or withdraw the study's anonymized texts."""
    role = study_role(user, study)
    return role == "owner" or role in ANNOTATE_ROLES


def jobs_visible_to(user: Any) -> QuerySet[Job]:
    """Return the jobs of visible studies plus the study-less jobs `user` started."""
    if not (user and user.is_authenticated and user.is_active):
        return Job.objects.none()
    if user.is_superuser:
        return Job.objects.all()
    return Job.objects.filter(
        Q(study__in=studies_visible_to(user)) | Q(study__isnull=True, created_by=user)
    )
