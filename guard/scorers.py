"""How the guard asks an attack "how likely is the true person, if these words were masked?"

Each scorer wraps one fitted attack and answers for many candidate maskings at once with the
log-probability of the true person and its rank, the same softmax and tie order the attack's
own `predict` uses (`attacks.prediction.predictions_from_scores`).

- TF-IDF and BM25 are exact and cheap: the curated text of every masking is rebuilt from the
  tokens' curated pieces and scored with the fitted index in one batch.
- Any other attack (dense retrieval, TRIA) is asked through its own `predict` on the rendered
  texts, leave-one-out over a shortlist of candidates, since each call runs the network.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from attacks.base import Attack
from attacks.prepared import PreparedAttack
from guard.document import GuardDocument

Masking = frozenset[int]
RESAMPLE_MARK = "~"


def log_softmax_outcome(scores: np.ndarray, column: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (log p(true), rank of true) per row of a (maskings x persons) score matrix.

    Ties rank by column order, as the attack's stable argsort does.
    """
    shifted = scores - scores.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    true = scores[:, [column]]
    above = (scores > true).sum(axis=1)
    tied_before = (scores[:, :column] == true).sum(axis=1)
    return log_probs[:, column], above + tied_before + 1


class Scorer:
    """Base: score candidate maskings of one document for one fitted attack."""

    exact: ClassVar[bool] = False

    def __init__(self, name: str, attack: Attack | PreparedAttack) -> None:
        self.name = name
        # `attack.predict` takes raw texts; the exact scorers read the fitted index itself.
        self.attack = attack
        self.fitted = attack.fitted if isinstance(attack, PreparedAttack) else attack

    def outcomes(
        self, document: GuardDocument, maskings: Sequence[Masking]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Return (log p(true person), true rank) per masking (guard tokens masked)."""
        raise NotImplementedError

    def vocabulary(self) -> set[str] | None:
        """Return the lower-cased terms the fitted background holds (None: not a lexical one)."""
        return None

    def column(self, document: GuardDocument) -> int | None:
        """Return the true person's column, None when the attack has no background for them."""
        try:
            return self.attack.names.index(document.target)
        except ValueError:
            return None


class TFIDFScorer(Scorer):
    """Exact TF-IDF cosine of every masking, from the fitted vectorizer and profile matrix."""

    exact = True

    def vocabulary(self) -> set[str]:
        """Return the fitted vectorizer's terms (lemmas and lemma bigrams)."""
        return set(self.fitted.vectorizer.vocabulary_)

    def outcomes(self, document, maskings):
        """Score every masking's curated text in one sparse product."""
        texts = [document.curated(m) for m in maskings]
        cosines = (self.fitted.vectorizer.transform(texts) @ self.fitted.matrix.T).toarray()
        return log_softmax_outcome(cosines / self.fitted.temperature, self.column(document))


class BM25Scorer(Scorer):
    """Exact BM25 of every masking: a sum over query tokens of a per-token weight row.

    rank_bm25's score is additive over the query's tokens (duplicates count again), so a
    (vocabulary x persons) weight table turns scoring into table look-ups and one sum.
    """

    exact = True

    def __init__(self, name: str, attack: Attack | PreparedAttack) -> None:
        super().__init__(name, attack)
        index = self.fitted.index
        doc_len = np.asarray(index.doc_len, dtype=np.float64)
        norm = index.k1 * (1 - index.b + index.b * doc_len / index.avgdl)
        self.row_of: dict[str, int] = {}
        rows = []
        for term, idf in index.idf.items():
            freqs = np.array([doc.get(term, 0) for doc in index.doc_freqs], dtype=np.float64)
            self.row_of[term] = len(rows)
            rows.append(idf * freqs * (index.k1 + 1) / (freqs + norm))
        self.weights = np.vstack(rows) if rows else np.zeros((0, len(doc_len)))

    def vocabulary(self) -> set[str]:
        """Return the terms of the fitted index."""
        return set(self.row_of)

    def outcomes(self, document, maskings):
        """Sum the weight rows of each masking's query tokens."""
        from attacks.bm25 import bm25_tokens

        scores = np.zeros((len(maskings), self.weights.shape[1]))
        for row, masking in enumerate(maskings):
            rows = [
                self.row_of[t] for t in bm25_tokens(document.curated(masking)) if t in self.row_of
            ]
            if rows:
                scores[row] = self.weights[rows].sum(axis=0)
        return log_softmax_outcome(scores / self.fitted.temperature, self.column(document))


class PredictScorer(Scorer):
    """Any attack, through its own predict on the rendered texts (leave-one-out)."""

    def outcomes(self, document, maskings):
        """Render each masking and let the attack rank every person for it."""
        documents = {str(i): document.render(m) for i, m in enumerate(maskings)}
        truth = dict.fromkeys(documents, document.target)
        predictions = self.attack.predict(documents, top_k=1, true_names=truth)
        log_p = np.array([np.log(max(p.true_prob or 0.0, 1e-300)) for p in predictions])
        ranks = np.array([p.true_rank or len(self.attack.names) + 1 for p in predictions])
        return log_p, ranks


SCORERS: dict[str, type[Scorer]] = {"tfidf": TFIDFScorer, "bm25": BM25Scorer}
# The guard's default adversaries: the attacks it beats exactly, in one batch per step.
DEFAULT_ATTACKS: tuple[str, ...] = tuple(SCORERS)


def scorer_for(name: str, attack: Attack | PreparedAttack) -> Scorer:
    """Return the exact scorer of a lexical attack, else the predict-based one.

    "tfidf~2" (`fit_attacks(resamples=...)`) is TF-IDF fitted on a resampled background.
    """
    return SCORERS.get(name.split(RESAMPLE_MARK)[0], PredictScorer)(name, attack)
