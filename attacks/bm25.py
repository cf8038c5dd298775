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
        self._table = None

    def _term_table(self) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
        """Return word -> row, the (words + 1) x profiles frequency matrix, the idf per row
        and the length norm per profile; the last row (0s) stands for unknown words."""
        if getattr(self, "_table", None) is None:
            index = self.index
            row_of = {word: row for row, word in enumerate(index.idf)}
            freqs = np.zeros((len(row_of) + 1, index.corpus_size), dtype=np.int64)
            for column, counts in enumerate(index.doc_freqs):
                rows = [row_of[word] for word in counts]
                freqs[rows, column] = list(counts.values())
            idf = np.zeros(len(row_of) + 1)
            idf[:-1] = [value or 0 for value in index.idf.values()]
            doc_len = np.array(index.doc_len)
            norm = index.k1 * (1 - index.b + index.b * doc_len / index.avgdl)
            self._table = (row_of, freqs, idf, norm)
        return self._table

    def _query_scores(self, tokens: list[str]) -> np.ndarray:
        """Return ``BM25Okapi.get_scores(tokens)`` to the last bit, without its per-word loop.

        Each word's summand is the same element-wise expression, and the cumulative sum adds
        them in the query's order, as get_scores does, so ranks and ties are unchanged.
        """
        row_of, freqs, idf, norm = self._term_table()
        unknown = len(row_of)
        rows = np.fromiter((row_of.get(t, unknown) for t in tokens), np.int64, len(tokens))
        if not len(rows):
            return np.zeros(freqs.shape[1])
        q_freq = freqs[rows]
        k1 = self.index.k1
        summands = idf[rows, None] * (q_freq * (k1 + 1) / (q_freq + norm))
        return np.cumsum(summands, axis=0)[-1]

    def _scores(self, texts: list[str], progress: ProgressCallback | None) -> np.ndarray:
        rows = []
        for done, text in enumerate(texts, 1):
            rows.append(self._query_scores(bm25_tokens(text)))
            if progress:
                progress("prediction", done, len(texts))
        return np.vstack(rows) if rows else np.zeros((0, len(self.names)))

    def shared_terms(self, text: str, name: str, top: int = 10) -> list[tuple[str, float]]:
        """Return the words that carry ``text``'s BM25 score for ``name``'s profile, largest first.

        BM25 is a sum over the query's words, so each word's summand (over its occurrences
        in the text) is its exact share of the score; words the profile lacks add nothing.
        """
        if name not in self.names:
            raise KeyError(f"no profile for {name!r}")
        index = self.index
        row = self.names.index(name)
        freqs, length = index.doc_freqs[row], index.doc_len[row]
        norm = index.k1 * (1 - index.b + index.b * length / index.avgdl)
        shares: dict[str, float] = {}
        for word in bm25_tokens(self._pretreat([text], None)[0]):
            count = freqs.get(word, 0)
            if count:
                weight = index.idf.get(word, 0.0) * count * (index.k1 + 1) / (count + norm)
                shares[word] = shares.get(word, 0.0) + float(weight)
        ranked = sorted(((w, v) for w, v in shares.items() if v > 0), key=lambda pair: -pair[1])
        return ranked[:top]
