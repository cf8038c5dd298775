"""Create and change studies."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from intruder.models import Study, StudyMember, new_completion_code

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


@transaction.atomic
def study_member_remove(*, study: Study, user: Any) -> int:
    """Take a user's role on the study away; return how many roles were removed."""
    removed, _ = StudyMember.objects.filter(study=study, user=user).delete()
    return removed


@transaction.atomic
def study_clone(*, study: Study, owner: Any, slug: str, title: str) -> Study:
    """Return a new study with the settings, source studies, members and targets of `study`.

    Participants, descriptions, texts and judgments stay with the original: a clone is the
    next wave of the same design, closed until its owner opens it.
    """
    settings = {name: getattr(study, name) for name in EDITABLE_FIELDS if name != "title"}
    # A fresh completion code: a code shared by two waves would let one wave's people
    # claim completion of the other.
    settings.update(is_open=False, completion_code=new_completion_code())
    clone = study_create(owner=owner, slug=slug, title=title, **settings)
    clone.source_studies.set(study.source_studies.all())
    for member in study.members.exclude(user=owner):
        StudyMember.objects.create(study=clone, user=member.user, role=member.role)
    for target in study.targets.all():
        target.pk = None
        target.study = clone
        target.save()
    return clone


@transaction.atomic
def study_archive(*, study: Study, archived: bool = True) -> Study:
    """Archive a study (closed to new participants, listed apart) or bring it back."""
    study.archived_at = timezone.now() if archived else None
    if archived:
        study.is_open = False
    study.save(update_fields=["archived_at", "is_open", "updated_at"])
    return study
