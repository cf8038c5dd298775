"""TF-IDF record linkage: cosine similarity between a document and each profile."""

from __future__ import annotations

import itertools

import numpy as np

from attacks.base import ProgressCallback
from attacks.retrieval import RetrievalAttack

# Lines whose words an instance keeps for later fits and predictions; past it the cache
# starts afresh, so a long-lived worker stays bounded.
LINE_CACHE_LIMIT = 200_000


class LineCachedAnalyzer:
    """The word analyzer of ``TfidfVectorizer(ngram_range=(1, 2))``, each line analysed once.

    A k-fold or knowledge-budget run fits a vectorizer per fold on profiles joined from the
    same texts, so sklearn tokenized every text again in every fold. Tokens never span a
    newline (the token pattern is word characters) and lower-casing a line does not depend
    on its neighbours, so the profile's unigrams are its lines' unigrams in order and its
    bigrams are the lines' bigrams with one across each line break: the same list, in the
    same order, as sklearn's analyzer returns, so the fitted matrix is the same to the bit.
    """

    def __init__(self) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        word = TfidfVectorizer()
        self._preprocess = word.build_preprocessor()
        self._tokenize = word.build_tokenizer()
        self._lines: dict[str, tuple[list[str], list[str]]] = {}

    def _line(self, line: str) -> tuple[list[str], list[str]]:
        found = self._lines.get(line)
        if found is None:
            if len(self._lines) >= LINE_CACHE_LIMIT:
                self._lines.clear()
            words = self._tokenize(self._preprocess(line))
            found = self._lines[line] = (words, [f"{a} {b}" for a, b in itertools.pairwise(words)])
        return found

    def __call__(self, text: str) -> list[str]:
        unigrams: list[str] = []
        bigrams: list[str] = []
        for line in text.split("\n"):
            words, pairs = self._line(line)
            if not words:
                continue
            if unigrams:
                bigrams.append(f"{unigrams[-1]} {words[0]}")
            bigrams.extend(pairs)
            unigrams.extend(words)
        return unigrams + bigrams


class TFIDFAttack(RetrievalAttack):
    """Link a document to the profile with the most similar TF-IDF vector."""

    name = "tfidf"
    # Cosines lie in [0, 1]; a 0.05 temperature spreads them into a usable softmax.
    temperature = 0.05

    def _index(self, progress: ProgressCallback | None) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        if getattr(self, "_analyzer", None) is None:
            self._analyzer = LineCachedAnalyzer()  # kept across refits: texts recur per fold
        self.vectorizer = TfidfVectorizer(sublinear_tf=True, analyzer=self._analyzer, min_df=1)
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
