"""BM25 record linkage: score each individual's profile with the document as the query."""

from __future__ import annotations

import re

import numpy as np

from attacks.base import ProgressCallback
from attacks.retrieval import RetrievalAttack

WORD = re.compile(r"\w+")


def bm25_tokens(text: str) -> list[str]:
    """Return lower-cased word tokens."""
    return WORD.findall(text.lower())


class BM25Attack(RetrievalAttack):
    """Link a document to the individual whose profile has the highest BM25 score."""

    name = "bm25"
    # BM25 scores are unbounded sums; dividing by 5 keeps the softmax from saturating.
    temperature = 5.0

    def _index(self, progress: ProgressCallback | None) -> None:
        from rank_bm25 import BM25Okapi

        self.index = BM25Okapi([bm25_tokens(self.profiles[n]) for n in self.names])

    def _scores(self, texts: list[str], progress: ProgressCallback | None) -> np.ndarray:
        rows = []
        for done, text in enumerate(texts, 1):
            rows.append(self.index.get_scores(bm25_tokens(text)))
            if progress:
                progress("prediction", done, len(texts))
        return np.vstack(rows) if rows else np.zeros((0, len(self.names)))
