"""The strongest adversary: a document counts as re-identified when any attack ranks it first.

A risk estimate built on one attack understates the risk whenever another attack does better
(on WikiActors the cheap TF-IDF linkage beats TRIA on every column), so reports combine every
attack that ran into one per-document outcome.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from attacks.prediction import Prediction

STRONGEST = "strongest"


def _strength(prediction: Prediction) -> tuple[float, float]:
    """Return a sort key: better rank first, then higher probability of the true person."""
    rank = prediction.true_rank if prediction.true_rank is not None else math.inf
    return (rank, -(prediction.true_prob or 0.0))


def strongest_adversary(
    predictions_by_attack: Mapping[str, Sequence[Prediction]],
) -> list[Prediction]:
    """Return, per document, the prediction of the attack that ranks the true person best.

    Documents keep the order of their first appearance. The chosen prediction is correct
    exactly when some attack ranks the true person first, so ``trir`` of the result is the
    strongest adversary's TRIR.
    """
    best: dict[str, Prediction] = {}
    for predictions in predictions_by_attack.values():
        for prediction in predictions:
            current = best.get(prediction.doc_id)
            if current is None or _strength(prediction) < _strength(current):
                best[prediction.doc_id] = prediction
    return list(best.values())


def reidentified_by(
    predictions_by_attack: Mapping[str, Sequence[Prediction]],
) -> dict[str, list[str]]:
    """Return doc_id -> the attacks (sorted by name) that rank the true person first."""
    hits: dict[str, list[str]] = {}
    for attack, predictions in sorted(predictions_by_attack.items()):
        for prediction in predictions:
            names = hits.setdefault(prediction.doc_id, [])
            if prediction.correct:
                names.append(attack)
    return hits


def strongest_permutation_null(
    top_by_attack: Mapping[str, Mapping[str, str | None]],
    names: Sequence[str],
    seed: int = 0,
    draws: int = 200,
) -> tuple[float, float]:
    """Return (mean, 95th percentile) % of documents the strongest adversary hits by chance.

    The label-permutation null of the any-attack rule: each attack keeps its real top-1
    prediction per document (so the attacks' agreement is kept), and each document's person
    is drawn uniformly from `names`. With m attacks over n persons it lies between 1/n and
    1 - (1 - 1/n)^m; the strongest of four over 20 persons is about 15 %, not 5 %.
    """
    import random

    documents = sorted({doc for top in top_by_attack.values() for doc in top})
    if not documents or not names:
        return 0.0, 0.0
    rng = random.Random(seed)
    pool = list(names)
    null = []
    for _ in range(draws):
        drawn = {doc: rng.choice(pool) for doc in documents}
        hits = sum(
            any(top.get(doc) == drawn[doc] for top in top_by_attack.values()) for doc in documents
        )
        null.append(100.0 * hits / len(documents))
    null.sort()
    return sum(null) / len(null), null[min(len(null) - 1, int(0.95 * len(null)))]
