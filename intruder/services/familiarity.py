"""Measured familiarity: which of a study's famous persons an intruder had heard of before.

Asked once, on the debrief, so only after the intruder's last answer is locked (asking
earlier would name the persons and steer the answers). Only about famous persons: a private,
semi-famous or invented person's name would be revealed to people who never saw it, and
"heard of" would not mean the same. The risk report splits each person's human rate into
familiarity x identified-given-familiar (`intruder.analysis.familiarity`).
"""

from __future__ import annotations

from collections.abc import Collection

from django.db import IntegrityError, transaction

from intruder.exceptions import IntruderError
from intruder.models import FamiliarityAnswer, Participant, PersonGroup, Study, TargetPerson


class FamiliarityRefused(IntruderError):
    """The participant may not answer the familiarity question (now, or again)."""

    status_code = 409


def familiarity_persons(study: Study) -> list[TargetPerson]:
    """Return the persons the question lists: the study's famous ones, when it asks at all."""
    if not study.ask_familiarity or study.kind != Study.Kind.INTRUDER:
        return []
    return list(study.targets.filter(group=PersonGroup.FAMOUS).order_by("name", "pk"))


def familiarity_due(participant: Participant) -> bool:
    """Return whether the debrief should ask this participant the question now.

    Due once the participant has completed (seen the debrief, which comes after the last
    answer is locked) with at least one judgment, and has not answered yet.
    """
    study = participant.study
    return (
        study.ask_familiarity  # first: a study that does not ask costs no query
        and participant.status == Participant.Status.COMPLETED
        and participant.judgments.exists()
        and not participant.familiarity_answers.exists()
        and bool(familiarity_persons(study))
    )


def familiarity_record(
    *, participant: Participant, known: Collection[int], simulated: bool = False
) -> int:
    """Store one answer per listed person (heard of it or not); return how many were heard of.

    `known` holds the ids of the persons ticked; ids of other persons are refused.
    """
    if not familiarity_due(participant):
        raise FamiliarityRefused("the familiarity question is not open for this participant")
    persons = familiarity_persons(participant.study)
    listed = {p.pk for p in persons}
    stray = set(known) - listed
    if stray:
        raise FamiliarityRefused(f"{len(stray)} ticked person(s) are not on the list")
    try:
        with transaction.atomic():
            FamiliarityAnswer.objects.bulk_create(
                FamiliarityAnswer(
                    participant=participant,
                    target=person,
                    heard_of=person.pk in known,
                    simulated=simulated,
                )
                for person in persons
            )
    except IntegrityError:  # a second request raced the first
        raise FamiliarityRefused("the familiarity question is already answered") from None
    return len(set(known))
