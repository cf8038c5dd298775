"""TF-IDF record linkage: cosine similarity between a document and each profile."""

from __future__ import annotations

import numpy as np

from attacks.base import ProgressCallback
from attacks.retrieval import RetrievalAttack


class TFIDFAttack(RetrievalAttack):
    """Link a document to the profile with the most similar TF-IDF vector."""

    name = "tfidf"
    # Cosines lie in [0, 1]; a 0.05 temperature spreads them into a usable softmax.
    temperature = 0.05

    def _index(self, progress: ProgressCallback | None) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=1)
        self.matrix = self.vectorizer.fit_transform([self.profiles[n] for n in self.names])
        self._terms: np.ndarray | None = None

    def _scores(self, texts: list[str], progress: ProgressCallback | None) -> np.ndarray:
        if not texts:
            return np.zeros((0, len(self.names)))
        # Rows are L2-normalised by the vectorizer, so the dot product is the cosine.
        return (self.vectorizer.transform(texts) @ self.matrix.T).toarray()

    def shared_terms(self, text: str, name: str, top: int = 10) -> list[tuple[str, float]]:
        """Return the terms that carry ``text``'s similarity to ``name``'s profile, largest first.

        A cosine of L2-normalised vectors is the sum over terms of the two weights' product,
        so each product is that term's exact share of the score.
        """
        if name not in self.names:
            raise KeyError(f"no profile for {name!r}")
        document = self.vectorizer.transform(self._pretreat([text], None))
        profile = self.matrix[self.names.index(name)]
        contributions = document.multiply(profile).tocoo()
        if getattr(self, "_terms", None) is None:
            # Built once per fit: the vocabulary (with bigrams) is large, and a risk run asks
            # for the terms of every correct match.
            self._terms = self.vectorizer.get_feature_names_out()
        terms = self._terms
        cells = zip(contributions.col, contributions.data, strict=True)
        pairs = sorted(((str(terms[j]), float(v)) for j, v in cells), key=lambda pair: -pair[1])
        return pairs[:top]
