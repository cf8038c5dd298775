"""Catch trials: a text about a made-up person nobody can know, served like the others.

The researcher writes the description (of a person who does not exist); it is served as it
is, among the study's texts, to intruders who cannot tell it apart. Nobody can identify it,
so a confident identification (answering "yes" and naming someone) shows a participant who
names people at random: the careless responder of issue 48, or the one who types a
chatbot's guess by hand, which no telemetry sees. Its judgments are flagged, never counted
in the rates (`intruder.analysis.selectors` leaves catch targets out).
"""

from __future__ import annotations

import secrets

from django.core.exceptions import ValidationError
from django.db import transaction

from intruder.evidence.selectors import Flag
from intruder.models import AnonymizedText, Description, PersonGroup, Study, TargetPerson
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


def catch_flags(
    *, target: TargetPerson, self_identified: bool, guessed_name: str
) -> list[dict[str, str]]:
    """Return the catch flag of a judgment: a made-up person confidently identified."""
    if not target.catch or not self_identified or not guessed_name.strip():
        return []
    return [
        {
            "code": Flag.CATCH_IDENTIFIED,
            "reason": f"Named “{guessed_name.strip()}” for a made-up person nobody can know "
            "(a catch trial).",
        }
    ]
