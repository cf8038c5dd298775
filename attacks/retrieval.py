"""Shared base of the cheap record-linkage attacks: one pretreated profile per individual."""

from __future__ import annotations

import time
from abc import abstractmethod
from pathlib import Path

import numpy as np

from attacks.base import Attack, ProgressCallback
from attacks.config import AttackConfig
from attacks.curation import pretreat_background, pretreat_documents
from attacks.prediction import Prediction, predictions_from_scores
from attacks.runtime import set_seed
from attacks.timing import StageTimer

CORPUS_FILE = "profiles.json"


class RetrievalAttack(Attack):
    """Rank individuals by the similarity of a document to their background profile.

    Scores become probabilities through a softmax with ``temperature``: a ranking confidence
    for top-k lists, not a calibrated probability.
    """

    cheap = True
    reusable = True
    temperature: float = 1.0
    # Dense retrieval works on raw sentences; lexical retrieval profits from curation.
    uses_curation: bool = True

    def __init__(self, config: AttackConfig | None = None) -> None:
        super().__init__(config)
        self.profiles: dict[str, str] = {}

    @property
    def _curate(self) -> bool:
        return self.uses_curation and self.config.use_document_curation

    def _pretreat(self, texts: list[str], progress: ProgressCallback | None) -> list[str]:
        return pretreat_documents(texts, self.config, progress, self._curate)

    def fit(self, background: dict[str, str], progress: ProgressCallback | None = None) -> None:
        """Build one profile per individual from B_D (and B_D' when asked) and index it."""
        set_seed(self.config.seed)
        timer = StageTimer(self.stats)
        start = time.perf_counter()
        texts, names = pretreat_background(background, self.config, progress, self._curate)
        profiles: dict[str, list[str]] = {}
        for name, text in zip(names, texts, strict=True):
            profiles.setdefault(name, []).append(text)
        self.profiles = {name: "\n".join(parts) for name, parts in sorted(profiles.items())}
        self.names = list(self.profiles)
        timer.record("pretreatment", time.perf_counter() - start)
        start = time.perf_counter()
        self._index(progress)
        timer.record("indexing", time.perf_counter() - start)

    @abstractmethod
    def _index(self, progress: ProgressCallback | None) -> None:
        """Build the search index from ``self.profiles``."""

    @abstractmethod
    def _scores(self, texts: list[str], progress: ProgressCallback | None) -> np.ndarray:
        """Return a (documents x individuals) similarity matrix."""

    def predict(
        self,
        documents: dict[str, str],
        top_k: int = 5,
        true_names: dict[str, str] | None = None,
        progress: ProgressCallback | None = None,
    ) -> list[Prediction]:
        """Rank every individual for each document."""
        if not self.profiles:
            raise RuntimeError("fit or load the attack before predicting")
        doc_ids = list(documents)
        start = time.perf_counter()
        texts = self._pretreat([documents[d] for d in doc_ids], progress)
        scores = self._scores(texts, progress)
        StageTimer(self.stats).record("prediction", time.perf_counter() - start)
        return predictions_from_scores(
            doc_ids, scores / self.temperature, self.names, true_names, top_k
        )

    def save(self, directory: str | Path) -> None:
        """Save the profiles and attack.json; the index is rebuilt on load."""
        self._save_state(directory, CORPUS_FILE, self.profiles)

    @classmethod
    def load(cls, directory: str | Path) -> RetrievalAttack:
        """Load a retrieval attack saved by ``save`` and rebuild its index."""
        attack, profiles = cls._load_state(directory, CORPUS_FILE)
        attack.profiles = profiles
        attack.names = list(attack.profiles)  # the index's column order
        attack._index(None)
        return attack
