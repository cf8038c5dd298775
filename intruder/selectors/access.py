"""Who may see or edit a study: the roles researcher pages, the API and annotation share."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from intruder.models import Job, Study, StudyMember

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
