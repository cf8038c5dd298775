"""The words that still drive the match after guarding, for the researcher to mask by hand.

The guard stops at rank k (or at its budget); what is left can still point at the person.
For each clear word of the guarded text, ask the exact attacks (TF-IDF, BM25) how much the
true person's log-probability would fall if that word were masked too: the words with the
largest fall are those the attacks still lean on. Attacks without an exact scorer (dense,
TRIA) would need a network call per word, so they are left out of this list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from guard.greedy import GuardResult
from guard.scorers import PredictScorer, scorer_for

RESIDUAL_WORDS = 8


def residual_words(
    results: Sequence[GuardResult], attacks: dict[str, Any], top: int = RESIDUAL_WORDS
) -> list[list[str]]:
    """Return, per result, up to `top` unmasked words whose masking would lower the true
    person's probability most under the exact attacks (most first; [] when none helps)."""
    scorers = [scorer_for(name, attack) for name, attack in attacks.items()]
    exact = [s for s in scorers if not isinstance(s, PredictScorer)]
    return [_residual(result, exact, top) for result in results]


def _residual(result: GuardResult, scorers: Sequence[Any], top: int) -> list[str]:
    document = result.document
    if document is None:
        return []
    active = [s for s in scorers if s.column(document) is not None]
    masked = result.step_masks[-1] if result.step_masks else frozenset()
    units = document.units(masked, phrases=False)
    if not active or not units:
        return []
    now = sum(float(s.outcomes(document, [masked])[0][0]) for s in active)
    after = np.zeros(len(units))
    for scorer in active:
        after += scorer.outcomes(document, [masked | unit.tokens for unit in units])[0]
    fall = now - after
    order = np.argsort(-fall, kind="stable")
    return [units[i].value for i in order[:top] if fall[i] > 1e-9]
