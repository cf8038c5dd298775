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

    def _scores(self, texts: list[str], progress: ProgressCallback | None) -> np.ndarray:
        if not texts:
            return np.zeros((0, len(self.names)))
        # Rows are L2-normalised by the vectorizer, so the dot product is the cosine.
        return (self.vectorizer.transform(texts) @ self.matrix.T).toarray()
