"""Measured familiarity: which of the famous persons they judged an intruder had heard of before.

Asked once, on the debrief, so only after the intruder's last answer is locked (asking
earlier would name the persons and steer the answers). Only about famous persons: a private,
semi-famous or invented person's name would be revealed to people who never saw it, and
"heard of" would not mean the same. The risk report splits each person's human rate into
familiarity x identified-given-familiar (`intruder.risk.familiarity`).

The list names only the persons whose texts this intruder judged, in alphabetical order
among at least as many decoys (public figures who are not in the study): a list shared on a
forum then turns no later participant's free recall into a choice among a few names, and
how often decoys are ticked shows how readily intruders claim to know a famous name.
Checkboxes are posted by their place on the list, so the page's source does not tell which
names are decoys either. "None of these" is an answer of its own.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from intruder.exceptions import IntruderError
from intruder.models import (
    FamiliarityAnswer,
    FamiliarityDecoyAnswer,
    Participant,
    PersonGroup,
    Study,
    TargetPerson,
)
from model_runtime.guess_scoring import character_cosine

# Widely known public figures across fields, for studies that name no decoys of their own.
# A decoy that scores at or above the study's threshold against one of its persons is dropped.
DEFAULT_DECOYS = (
    "Albert Einstein",
    "Angela Merkel",
    "Barack Obama",
    "Beyoncé",
    "Cristiano Ronaldo",
    "David Beckham",
    "Elton John",
    "Elvis Presley",
    "Frida Kahlo",
    "Greta Thunberg",
    "Julia Roberts",
    "Lady Gaga",
    "Leonardo DiCaprio",
    "Lionel Messi",
    "Madonna",
    "Marie Curie",
    "Meryl Streep",
    "Michael Jordan",
    "Morgan Freeman",
    "Nelson Mandela",
    "Oprah Winfrey",
    "Paul McCartney",
    "Pelé",
    "Roger Federer",
    "Serena Williams",
    "Stephen Hawking",
    "Taylor Swift",
    "Tom Hanks",
    "Usain Bolt",
    "Winston Churchill",
)
# Each list holds at least this many decoys (and at least as many as study persons).
MIN_DECOYS = 3


class FamiliarityRefused(IntruderError):
    """The participant may not answer the familiarity question (now, again, or like this)."""

    status_code = 409


@dataclass(frozen=True)
class FamiliarityItem:
    """One name on an intruder's list: a study person they judged, or a decoy (target None)."""

    name: str
    target: TargetPerson | None = None


def _judged_famous(participant: Participant) -> list[TargetPerson]:
    """Return the famous persons whose texts this participant judged (not catch trials)."""
    return list(
        TargetPerson.objects.filter(
            study=participant.study,
            group=PersonGroup.FAMOUS,
            catch=False,
            descriptions__anonymizations__judgments__participant=participant,
        )
        .distinct()
        .order_by("name", "pk")
    )


def study_decoys(study: Study) -> list[str]:
    """Return the study's decoy names: its own list or the shipped one, minus near-matches.

    A decoy whose character cosine to a study person's name or alias reaches the study's
    threshold would read as that person, so it is never shown.
    """
    lines = study.familiarity_decoys.splitlines() if study.familiarity_decoys.strip() else []
    names = [line.strip() for line in lines if line.strip()] or list(DEFAULT_DECOYS)
    known = [
        name
        for target in study.targets.all()
        for name in (target.name, *(target.aliases or []))
        if name
    ]
    seen: set[str] = set()
    decoys = []
    for name in names:
        key = name.casefold()
        if key in seen:
            continue
        seen.add(key)
        if all(character_cosine(other, name) < study.identification_threshold for other in known):
            decoys.append(name)
    return decoys


def familiarity_list(participant: Participant) -> list[FamiliarityItem]:
    """Return the names this participant is asked about, in the order shown (by name).

    The decoys are drawn with the participant's token as the seed, so the list is the same
    on every reload and when the answer is posted, and differs between participants.
    """
    study = participant.study
    if not study.ask_familiarity or study.kind != Study.Kind.INTRUDER:
        return []
    judged = _judged_famous(participant)
    if not judged:
        return []
    pool = study_decoys(study)
    count = min(len(pool), max(MIN_DECOYS, len(judged)))
    decoys = random.Random(participant.token).sample(pool, count)
    items = [FamiliarityItem(t.name, t) for t in judged] + [FamiliarityItem(n) for n in decoys]
    return sorted(items, key=lambda item: (item.name.casefold(), item.target is not None))


def familiarity_due(participant: Participant) -> bool:
    """Return whether the debrief should ask this participant the question now.

    Due once the participant has completed (seen the debrief, which comes after the last
    answer is locked) having judged a text about a famous person, and has not answered yet.
    """
    study = participant.study
    return (
        study.ask_familiarity  # first: a study that does not ask costs no query
        and participant.status == Participant.Status.COMPLETED
        and not participant.familiarity_answers.exists()
        and bool(_judged_famous(participant))
    )


def familiarity_record(
    *,
    participant: Participant,
    ticked: Collection[int],
    none_of_these: bool = False,
    simulated: bool = False,
) -> int:
    """Store one answer per listed name (heard of it or not); return how many were heard of.

    `ticked` holds the places (from 0) of the names ticked on the list the participant was
    shown; "none of these" says no name was known and cannot come with ticks.
    """
    if not familiarity_due(participant):
        raise FamiliarityRefused("the familiarity question is not open for this participant")
    if none_of_these and ticked:
        raise FamiliarityRefused(
            "You ticked names and also “none of these”. Please choose one or the other."
        )
    if not none_of_these and not ticked:
        raise FamiliarityRefused("Tick the names you had heard of, or “none of these”.")
    items = familiarity_list(participant)
    stray = {place for place in ticked if not 0 <= place < len(items)}
    if stray:
        raise FamiliarityRefused(f"{len(stray)} ticked name(s) are not on the list")
    known = set(ticked)
    try:
        with transaction.atomic():
            FamiliarityAnswer.objects.bulk_create(
                FamiliarityAnswer(
                    participant=participant,
                    target=item.target,
                    heard_of=place in known,
                    simulated=simulated,
                )
                for place, item in enumerate(items)
                if item.target is not None
            )
            FamiliarityDecoyAnswer.objects.bulk_create(
                FamiliarityDecoyAnswer(
                    participant=participant,
                    name=item.name,
                    heard_of=place in known,
                    simulated=simulated,
                )
                for place, item in enumerate(items)
                if item.target is None
            )
    except IntegrityError:  # a second request raced the first
        raise FamiliarityRefused("the familiarity question is already answered") from None
    return len(known)
