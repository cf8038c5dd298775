"""Text Re-Identification Risk (TRIR, Eq. 3): accuracy of the attack on anonymized texts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from attacks.prediction import Prediction

# The JSON key of TRIR in final.json, results and the Django side's stored runs: the
# reference's name for it (its Results.csv reports accuracy), kept so older files still read.
TRIR_KEY = "accuracy"


@dataclass
class TRIRResult:
    """Hold TRIR over the documents of individuals with a known identity."""

    trir_pct: float  # percentage of documents re-identified (TRIR), 0-100
    n: int  # documents with a known true individual
    correct: int
    n_absent: int  # of which the individual has no background knowledge
    cap: float  # highest reachable TRIR (percentage): absent individuals can never match
    mean_true_rank: float | None  # over individuals present in the background

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict, TRIR under ``TRIR_KEY``."""
        values = asdict(self)
        return {TRIR_KEY: values.pop("trir_pct"), **values}


def trir(predictions: Sequence[Prediction]) -> TRIRResult:
    """Return TRIR = correct re-identifications / protected individuals, with its cap."""
    labelled = [p for p in predictions if p.true_name is not None]
    n = len(labelled)
    correct = sum(p.correct for p in labelled)
    ranks = [p.true_rank for p in labelled if p.true_rank is not None]
    n_absent = n - len(ranks)
    return TRIRResult(
        trir_pct=100.0 * correct / n if n else 0.0,
        n=n,
        correct=correct,
        n_absent=n_absent,
        cap=100.0 * (n - n_absent) / n if n else 0.0,
        mean_true_rank=sum(ranks) / len(ranks) if ranks else None,
    )
