"""Create and change studies."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from intruder.models import Study, StudyMember

EDITABLE_FIELDS = (
    "title",
    "public_title",
    "kind",
    "items_per_participant",
    "judgments_per_text",
    "min_description_chars",
    "groups",
    "consent_text",
    "instructions_text",
    "debrief_text",
    "completion_code",
    "time_limit_minutes",
    "identification_threshold",
    "is_open",
)


@transaction.atomic
def study_create(*, owner: Any, slug: str, title: str, kind: str, **settings: Any) -> Study:
    """Create a study owned by `owner` after validating every field."""
    unknown = set(settings) - set(EDITABLE_FIELDS)
    if unknown:
        raise TypeError(f"unknown study settings {sorted(unknown)}")
    study = Study(owner=owner, slug=slug, title=title, kind=kind, **settings)
    study.full_clean()
    study.save()
    return study


@transaction.atomic
def study_update(*, study: Study, **changes: Any) -> Study:
    """Change a study's settings (not its slug or owner) after validating them."""
    unknown = set(changes) - set(EDITABLE_FIELDS)
    if unknown:
        raise TypeError(f"cannot change {sorted(unknown)}")
    for name, value in changes.items():
        setattr(study, name, value)
    study.full_clean()
    study.save()
    return study


@transaction.atomic
def study_member_set(*, study: Study, user: Any, role: str) -> StudyMember:
    """Give a user a role on the study (replacing an earlier one)."""
    member, _ = StudyMember.objects.update_or_create(
        study=study, user=user, defaults={"role": role}
    )
    member.full_clean()
    return member
