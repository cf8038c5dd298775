"""Score stored guesses again when what they are scored against changes.

A judgment's `identified` and `named_other` depend on the study's threshold, its
identification rule (and, under the surname rule, whether the guess holds the person's
surname) and its persons (`model_runtime.guess_scoring.score_guess`). They are
stored so that bonuses and filters read one value; this module keeps them true when the
researcher changes the threshold or the rule, or imports more persons after judgments came
in. The stored cosine to the true person is kept (the guess and the true person have not
changed); the best match among the other persons is computed again.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from intruder.models import Judgment, Study
from intruder.selectors.persons import study_persons_with_ids
from model_runtime.guess_scoring import best_other, credit, score_guess, surname_in_guess

SCORE_FIELDS = [
    "cosine",
    "other_cosine",
    "other_person",
    "named_other",
    "identified",
    "surname_agrees",
]

# Other stored guesses scored as the judgments are (the LLM intruder's), registered by the
# package that owns them when the app is ready, so that this module imports none of them.
RESCORERS: list[Callable[[Study], None]] = []


def register_rescorer(rescore: Callable[[Study], None]) -> None:
    """Have `judgments_rescore` also score `rescore`'s guesses of a study again (once)."""
    if rescore not in RESCORERS:
        RESCORERS.append(rescore)


@transaction.atomic
def judgments_rescore(*, study: Study) -> int:
    """Score every judgment (and the registered other guesses: the LLM intruder's) of `study`
    again under its threshold, rule and persons; return how many judgments changed."""
    persons, person_ids = study_persons_with_ids(study)
    judgments = list(
        Judgment.objects.filter(participant__study=study).select_related(
            "text__description__target"
        )
    )
    changed = []
    for judgment in judgments:
        target = judgment.text.description.target
        compared = ("identified", "named_other", "other_cosine", "surname_agrees")
        before = [getattr(judgment, f) for f in compared]
        if judgment.cosine is None:
            score = score_guess(
                target.name,
                judgment.guessed_name,
                target.aliases or (),
                study.identification_threshold,
                others=persons,
                true_key=target.key,
                rule=study.identification_rule,
            )
            judgment.cosine = score.cosine
            other_key, other_cosine = score.other_key, score.other_cosine
        else:
            other_key, other_cosine = best_other(
                (judgment.guessed_name or "").strip(), persons, target.key
            )
        judgment.surname_agrees = surname_in_guess(
            judgment.guessed_name, [target.name, *(target.aliases or ())]
        )
        earned = credit(
            judgment.cosine,
            other_cosine,
            study.identification_threshold,
            study.identification_rule,
            judgment.surname_agrees,
        )
        judgment.other_cosine = other_cosine
        judgment.other_person_id = person_ids.get(other_key)
        judgment.named_other = earned.named_other
        judgment.identified = earned.identified
        after = [getattr(judgment, f) for f in compared]
        if after != before:
            changed.append(judgment)
    Judgment.objects.bulk_update(changed, SCORE_FIELDS, batch_size=500)
    for rescore in RESCORERS:
        rescore(study)
    return len(changed)
