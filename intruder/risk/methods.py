"""Names of what an attack run attacks (Django-free, shared by services and analyses).

Stored anonymization methods keep their own names (`textwash-model`, `textwash-original`,
...); baselines made on the fly and never served are `clear`, `spacy-ner` and `model@T`.
"""

from __future__ import annotations

CLEAR = "clear"
SPACY_NER = "spacy-ner"
MODEL_AT = "model@"


def is_baseline(method: str) -> bool:
    """Return whether `method` is made on the fly rather than stored in the study."""
    return method in (CLEAR, SPACY_NER) or method.startswith(MODEL_AT)


def model_threshold(method: str) -> float:
    """Return T of a `model@T` method; raise ValueError, saying why, for a bad T."""
    try:
        value = float(method[len(MODEL_AT) :])
    except ValueError:
        raise ValueError("the threshold after '@' must be a number") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError("the threshold must lie in [0, 1]")
    return value


def method_label(method: str) -> str:
    """Return how a method is named on pages and in reports."""
    if method == CLEAR:
        return "clear text (ceiling, never served)"
    if method == SPACY_NER:
        return "spaCy NER masking (baseline, never served)"
    if method.startswith(MODEL_AT):
        return f"model at threshold {method[len(MODEL_AT) :]} (baseline, never served)"
    return method
