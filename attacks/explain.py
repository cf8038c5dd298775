"""Which words drove a match: the TF-IDF terms a document shares with a person's background.

A reviewer fixing a risky text needs to know what to mask. The weight of a term is the
product of its TF-IDF weight in the document and in the person's background (the term's
share of their cosine), so the top terms are the rare words both have in common.
Placeholders (PERSON_FIRSTNAME_1, PRONOUN ...) are never terms: the token pattern takes
letter-only words of three or more letters, and a placeholder's letters touch an underscore.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

# Letter-only words of 3+ letters not glued to an underscore or digit.
TERM_PATTERN = r"(?u)(?<![\w])[^\W\d_]{3,}(?![\w])"


class SharedTerms:
    """Fit one TF-IDF space on the backgrounds, then explain any number of matches."""

    def __init__(self, backgrounds: Mapping[str, str]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.names = list(backgrounds)
        self.row_of = {name: i for i, name in enumerate(self.names)}
        self.vectorizer = TfidfVectorizer(
            sublinear_tf=True, stop_words="english", token_pattern=TERM_PATTERN
        )
        texts = [backgrounds[name] for name in self.names]
        self.matrix = self.vectorizer.fit_transform(texts) if texts else None
        self.terms = self.vectorizer.get_feature_names_out() if texts else np.array([])

    def top(self, document: str, person: str, n: int = 8) -> list[str]:
        """Return up to ``n`` terms of ``document`` that most tie it to ``person``."""
        if self.matrix is None or person not in self.row_of:
            return []
        doc = self.vectorizer.transform([document])
        weights = doc.multiply(self.matrix[self.row_of[person]]).toarray().ravel()
        order = np.argsort(-weights, kind="stable")[:n]
        return [str(self.terms[i]) for i in order if weights[i] > 0]
