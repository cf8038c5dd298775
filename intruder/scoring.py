"""The Django side's name for the guess scoring, which lives in `model_runtime.guess_scoring`.

Human guesses (here) and the open-world LLM intruder's guesses (`attacks.llm`) are scored by
the same function; the library cannot import `intruder`, so the code lives there.
"""

from model_runtime.guess_scoring import (
    DEFAULT_THRESHOLD,
    NAME_SUFFIXES,
    SURNAME_RATIO_CUTOFF,
    GuessScore,
    character_cosine,
    character_counts,
    is_surname_only,
    score_guess,
    surname_of,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "NAME_SUFFIXES",
    "SURNAME_RATIO_CUTOFF",
    "GuessScore",
    "character_cosine",
    "character_counts",
    "is_surname_only",
    "score_guess",
    "surname_of",
]
