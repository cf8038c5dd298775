"""Catch trials: a text about a made-up person nobody can know, served like the others.

The researcher writes the description (of a person who does not exist); it is served as it
is, among the study's texts, to intruders who cannot tell it apart. Nobody can identify it,
so a confident identification (answering "yes" and naming someone) shows a participant who
names people at random: the careless responder of issue 48, or the one who types a
chatbot's guess by hand, which no telemetry sees. Each intruder is shown the study's
`catch_trials_per_participant` of them (`intruder.services.assignment`); a participant who
names someone for `catch_named_min` of them has all their judgments flagged. Catch trials'
judgments are never counted in the rates (`intruder.analysis.selectors` leaves them out).
"""

from __future__ import annotations

import secrets
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from intruder.evidence.selectors import Flag
from intruder.models import (
    AnonymizedText,
    Description,
    Judgment,
    Participant,
    PersonGroup,
    Study,
    TargetPerson,
)
from intruder.profiles import fictitious_profile_generate
from intruder.selectors.participant import study_groups

MAX_CATCH_CHARS = 5000
KEY_PREFIX = "catch_"


@transaction.atomic
def catch_trial_add(*, study: Study, text: str) -> AnonymizedText:
    """Add a catch trial to an intruder study: a made-up person and the researcher's text
    about them, released as written (there is no one to hide)."""
    text = (text or "").strip()
    if study.kind != Study.Kind.INTRUDER:
        raise ValidationError("Catch trials belong to motivated-intruder studies.")
    if not text:
        raise ValidationError({"text": "Please write the made-up person's description."})
    if len(text) > MAX_CATCH_CHARS:
        raise ValidationError({"text": f"Please keep it under {MAX_CATCH_CHARS} characters."})
    profile = fictitious_profile_generate(seed=secrets.randbits(32))
    shown = study_groups(study=study)
    number = TargetPerson.objects.filter(study=study, catch=True).count() + 1
    while TargetPerson.objects.filter(study=study, key=f"{KEY_PREFIX}{number}").exists():
        number += 1
    target = TargetPerson.objects.create(
        study=study,
        key=f"{KEY_PREFIX}{number}",
        name=profile["full_name"],
        # Served with the study's texts: with the fictitious ones if it shows them (never
        # listed as famous where it can help it), else in the first group it shows.
        group=PersonGroup.FICTITIOUS if PersonGroup.FICTITIOUS in shown else shown[0],
        profile=profile,
        catch=True,
    )
    description = Description.objects.create(study=study, target=target, text=text)
    return AnonymizedText.objects.create(
        description=description, text=text, spans=[], status=AnonymizedText.Status.RELEASED
    )


def catch_named(*, target: TargetPerson, self_identified: bool, guessed_name: str) -> bool:
    """Return whether an answer names someone for a made-up person."""
    return target.catch and self_identified and bool(guessed_name.strip())


def catch_flag(
    *, participant: Participant, named_now: str, rules: dict[str, Any]
) -> dict[str, str] | None:
    """Return the catch flag of the participant, None while they named too few made-up persons.

    `named_now`: the name this answer gives a catch trial ("" if none). The flag is about the
    person: all their judgments carry it once they named someone for `catch_named_min`
    catch trials (two by default: one honest overclaim, which people do make, flags nobody).
    `participant.catch_named` counts the earlier ones: the names are read only to flag.
    """
    if participant.catch_named + bool(named_now) < rules["catch_named_min"]:
        return None
    names = list(
        Judgment.objects.filter(
            participant=participant, text__description__target__catch=True, self_identified=True
        )
        .exclude(guessed_name="")
        .order_by("pk")
        .values_list("guessed_name", flat=True)
    )
    if named_now:
        names.append(named_now)
    quoted = ", ".join(f"“{name.strip()[:60]}”" for name in names)
    return {
        "code": Flag.CATCH_IDENTIFIED,
        "reason": f"Named someone for {len(names)} made-up persons nobody can know (catch "
        f"trials): {quoted} (rule: at least {rules['catch_named_min']}).",
    }
