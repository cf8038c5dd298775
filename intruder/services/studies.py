"""Create and change studies."""

from __future__ import annotations

from typing import Any

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from intruder.models import Study, StudyMember, new_completion_code
from intruder.prolific.claims import prolific_id_refusal, prolific_id_settle
from intruder.prolific.client import client_from_settings, prolific_enabled
from intruder.prolific.services import ProlificActionRefused, prolific_study_verify
from intruder.selectors.linked import linked_crowd_open, studies_linked_open
from intruder.services.scoring import judgments_rescore

ATTENTION_CHECK_FIELDS = ("attention_checks", "attention_check_prompt", "attention_check_answer")
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
    "identification_rule",
    "identified_rule",
    "intruder_population",
    "intruder_recruitment",
    "intruder_familiarity",
    "ask_familiarity",
    "familiarity_decoys",
    "is_open",
    "prolific_study_id",
    "telemetry_signals",
    "discourage_copy",
    "allow_same_target",
    "attention_checks",
    "catch_trials_per_participant",
    "attention_check_prompt",
    "attention_check_answer",
)


def prolific_id_check(prolific_study_id: str) -> None:
    """Refuse a new Prolific study ID that Prolific does not confirm as this workspace's.

    Without a token nothing can be asked (links are pasted by hand, no action or webhook
    reaches Prolific); the database still keeps one study per ID. Who on this platform may
    hold it is the claim's to say (`intruder.prolific.claims`): the token opens the whole
    workspace, whoever made the study.
    """
    if not (prolific_study_id and prolific_enabled()):
        return
    client = client_from_settings(max_retries=1)
    try:
        prolific_study_verify(prolific_study_id, client=client)
    except ProlificActionRefused as refusal:
        raise ValidationError({"prolific_study_id": str(refusal)}) from None
    finally:
        client.close()


def _save_unique_prolific_id(study: Study) -> None:
    """Save; a Prolific study ID taken meanwhile by a concurrent save is a ValidationError."""
    try:
        with transaction.atomic():
            study.save()
    except IntegrityError:
        if (
            not Study.objects.filter(prolific_study_id=study.prolific_study_id)
            .exclude(pk=study.pk)
            .exists()
            or not study.prolific_study_id
        ):
            raise
        raise ValidationError(
            {"prolific_study_id": "Another study already has this Prolific study ID."}
        ) from None


@transaction.atomic
def study_create(*, owner: Any, slug: str, title: str, kind: str, **settings: Any) -> Study:
    """Create a study owned by `owner` after validating every field."""
    unknown = set(settings) - set(EDITABLE_FIELDS)
    if unknown:
        raise TypeError(f"unknown study settings {sorted(unknown)}")
    study = Study(owner=owner, slug=slug, title=title, kind=kind, **settings)
    prolific_id_refusal(study=study, new_id=study.prolific_study_id, previous="")
    study.full_clean()
    asked = study.prolific_study_id
    study.prolific_study_id = ""
    _save_unique_prolific_id(study)
    if asked:
        study.prolific_study_id = prolific_id_settle(
            study=study, new_id=asked, previous="", verify=prolific_id_check
        )
        _save_unique_prolific_id(study)
    study_check_linked_open(study=study)
    return study


@transaction.atomic
def study_update(*, study: Study, **changes: Any) -> Study:
    """Change a study's settings (not its slug or owner) after validating them."""
    unknown = set(changes) - set(EDITABLE_FIELDS)
    if unknown:
        raise TypeError(f"cannot change {sorted(unknown)}")
    changed_checks = [
        name
        for name in ATTENTION_CHECK_FIELDS
        if name in changes and changes[name] != getattr(study, name)
    ]
    if changed_checks and study.participants.exists():
        # Participants were planned (and possibly flagged) with the settings they met.
        raise ValidationError(
            {
                name: "Participants have started: attention checks can no longer change."
                for name in changed_checks
            }
        )
    # As stored (and locked), not as this instance remembers it: an instance a refused update
    # left changed must not carry a new ID past the checks below.
    previous_prolific_id = (
        Study.objects.select_for_update()
        .values_list("prolific_study_id", flat=True)
        .get(pk=study.pk)
    )
    previous_scoring = (study.identification_threshold, study.identification_rule)
    for name, value in changes.items():
        setattr(study, name, value)
    prolific_id_refusal(study=study, new_id=study.prolific_study_id, previous=previous_prolific_id)
    study.full_clean()
    study.prolific_study_id = prolific_id_settle(
        study=study,
        new_id=study.prolific_study_id,
        previous=previous_prolific_id,
        verify=prolific_id_check,
    )
    _save_unique_prolific_id(study)
    study_check_linked_open(study=study)
    if (study.identification_threshold, study.identification_rule) != previous_scoring:
        # Bonuses and filters read the stored `identified`: keep it the study's.
        judgments_rescore(study=study)
    return study


def study_check_linked_open(*, study: Study) -> None:
    """Refuse an open study while a linked study (same targets, other kind) is open too.

    Writers of a collection study see their targets' names; if the intruder study over the
    same persons is open at the same time, anyone can sign up as a writer first and learn
    the answers. The demo (INTRUDER_DEMO) keeps both demo studies open on purpose.
    """
    if not study.is_open:
        return
    if linked_crowd_open(study=study):
        raise ValidationError(
            {
                "is_open": "An open crowd annotation project holds the original descriptions "
                "of this study's target persons: its annotators would read what your "
                "intruders are asked to find. Close that project first, or keep this study "
                "closed."
            }
        )
    if django_settings.INTRUDER_DEMO:
        return
    if studies_linked_open(study=study).exists():
        # Not named: the linked study may belong to a researcher this one cannot see.
        raise ValidationError(
            {
                "is_open": "Another open study of the other kind shares target persons with "
                "this one: its writers would learn the names your intruders are asked to "
                "find (or the other way round). Close it first, or keep this study closed."
            }
        )


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
    # Its own Prolific study too: one study per Prolific study ID.
    settings.update(is_open=False, completion_code=new_completion_code(), prolific_study_id="")
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
