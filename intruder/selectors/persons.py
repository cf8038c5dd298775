"""Reads of a study's persons as the guess scoring sees them, and the pre-launch name check."""

from __future__ import annotations

from intruder.models import Study
from model_runtime.guess_scoring import NearCollision, Person, near_collisions


def study_persons(study: Study) -> list[Person]:
    """Return every person of `study` (name, then aliases) for `score_guess`'s `others`."""
    return study_persons_with_ids(study)[0]


def study_persons_with_ids(study: Study) -> tuple[list[Person], dict[str, int]]:
    """Return the study's persons (as `study_persons`) and key -> TargetPerson id, one query."""
    rows = list(study.targets.order_by("key").values_list("pk", "key", "name", "aliases"))
    persons = [
        Person(key, tuple(n for n in (name, *(aliases or ())) if n and n.strip()))
        for _, key, name, aliases in rows
    ]
    return persons, {key: pk for pk, key, _, _ in rows}


def study_name_collisions(study: Study) -> list[NearCollision]:
    """Return the pairs of the study's persons whose names score >= its threshold against
    each other: the pairs where the paper's rule would credit a guess of one to the other."""
    return near_collisions(study_persons(study), study.identification_threshold)
