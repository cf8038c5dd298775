"""Reads of a study's persons as the guess scoring sees them, and the pre-launch name check."""

from __future__ import annotations

from intruder.models import Study
from model_runtime.guess_scoring import NearCollision, Person, near_collisions


def study_persons(study: Study) -> list[Person]:
    """Return every person of `study` (name, then aliases) for `score_guess`'s `others`."""
    return [
        Person(key, tuple(n for n in (name, *(aliases or ())) if n and n.strip()))
        for key, name, aliases in study.targets.order_by("key").values_list(
            "key", "name", "aliases"
        )
    ]


def study_name_collisions(study: Study) -> list[NearCollision]:
    """Return the pairs of the study's persons whose names score >= its threshold against
    each other: the pairs where the paper's rule would credit a guess of one to the other."""
    return near_collisions(study_persons(study), study.identification_threshold)
