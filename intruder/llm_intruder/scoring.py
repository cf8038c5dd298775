"""The LLM intruder's guesses scored again when the study's threshold, rule or persons change,
as the judgments are (`intruder.services.scoring`, which calls this through its registry)."""

from __future__ import annotations

from intruder.llm_intruder.models import LLMGuess
from intruder.models import Study
from intruder.selectors.persons import study_persons
from intruder.services.scoring import register_rescorer
from model_runtime.guess_scoring import best_other, credit, surname_in_guess


def llm_guesses_rescore(study: Study) -> None:
    """Score the LLM intruder's first names again, as the human guesses are."""
    persons = study_persons(study)
    guesses = list(
        LLMGuess.objects.filter(
            anonymized_text__description__study=study, cosine__isnull=False
        ).select_related("anonymized_text__description__target")
    )
    for guess in guesses:
        target = guess.anonymized_text.description.target
        first = (guess.guesses or [""])[0]
        _, other_cosine = best_other(first.strip(), persons, target.key)
        earned = credit(
            guess.cosine,
            other_cosine,
            study.identification_threshold,
            study.identification_rule,
            surname_in_guess(first, [target.name, *(target.aliases or ())]),
        )
        guess.identified, guess.named_other = earned.identified, earned.named_other
    LLMGuess.objects.bulk_update(guesses, ["identified", "named_other"], batch_size=500)


register_rescorer(llm_guesses_rescore)
