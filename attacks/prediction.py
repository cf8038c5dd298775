"""One re-identified document (`Prediction`) and how a score matrix becomes predictions.

Its own module so that the attacks (`base`) and TRIR (`metrics`) both read it without
importing each other.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


@dataclass
class Prediction:
    """Hold the outcome of re-identifying one document."""

    doc_id: str
    true_name: str | None
    predicted_name: str
    # 1-based rank of the true individual; None when unknown or absent from the background.
    true_rank: int | None
    true_prob: float | None
    top_k: list[tuple[str, float]] = field(default_factory=list)

    @property
    def correct(self) -> bool:
        """Return whether the top prediction is the true individual."""
        return self.true_name is not None and self.predicted_name == self.true_name

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        values = asdict(self)
        values["top_k"] = [[name, prob] for name, prob in self.top_k]
        return values


def predictions_from_scores(
    doc_ids: list[str],
    scores: np.ndarray,
    names: list[str],
    true_names: dict[str, str] | None,
    top_k: int,
) -> list[Prediction]:
    """Turn a (documents x individuals) score matrix into predictions via a softmax."""
    scores = np.asarray(scores, dtype=np.float64)
    shifted = scores - scores.max(axis=1, keepdims=True)
    probs = np.exp(shifted)
    probs /= probs.sum(axis=1, keepdims=True)
    column_of = {name: i for i, name in enumerate(names)}
    predictions = []
    for row, doc_id in enumerate(doc_ids):
        order = np.argsort(-probs[row], kind="stable")
        true_name = (true_names or {}).get(doc_id)
        true_rank = true_prob = None
        if true_name is not None and true_name in column_of:
            column = column_of[true_name]
            true_rank = int(np.flatnonzero(order == column)[0]) + 1
            true_prob = float(probs[row, column])
        predictions.append(
            Prediction(
                doc_id=doc_id,
                true_name=true_name,
                predicted_name=names[int(order[0])],
                true_rank=true_rank,
                true_prob=true_prob,
                top_k=[(names[int(i)], float(probs[row, i])) for i in order[:top_k]],
            )
        )
    return predictions
