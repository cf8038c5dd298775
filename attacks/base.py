"""Shared interface of every attack: fit on background knowledge, predict, save, load.

``Attack.reidentify_dataset`` is the one entry point the runner calls for any attack: fit on
a dataset's background knowledge and re-identify each of its columns.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

from attacks.config import AttackConfig
from attacks.metrics import trir
from attacks.prediction import Prediction

if TYPE_CHECKING:
    from attacks.data import TRIADataset

ProgressCallback = Callable[[str, int, int], None]
ATTACK_FILE = "attack.json"


EpochCallback = Callable[[dict[str, Any]], None]


@dataclass
class Reidentification:
    """Hold an attack's predictions per column and its TRIR per column per epoch."""

    # One record per epoch: {"epoch", "trir": {column: TRIR %}, ...}; epoch 0 for one-shot fits.
    history: list[dict[str, Any]]
    predictions: dict[str, list[Prediction]]


class Attack(ABC):
    """Re-identify documents by learning from named background texts."""

    name: ClassVar[str]
    # Facts about the attack, read by callers from the class (`registry.attacks_where`):
    # seconds on a CPU, so part of the pre-release risk check and the default set of a run.
    cheap: ClassVar[bool] = False
    # Each `fit` rebuilds all fitted state, so one instance serves every fold of a k-fold run
    # and keeps what it loaded once (the dense encoder).
    reusable: ClassVar[bool] = False
    # Sends the texts to an outside endpoint (and may cost money): never in 'all'.
    sends_texts_out: ClassVar[bool] = False

    def __init__(self, config: AttackConfig | None = None) -> None:
        self.config = config or AttackConfig()
        self.names: list[str] = []
        self.stats: dict[str, Any] = {}

    @abstractmethod
    def fit(self, background: dict[str, str], progress: ProgressCallback | None = None) -> Any:
        """Learn to recognise each individual from its background text."""

    @abstractmethod
    def predict(
        self,
        documents: dict[str, str],
        top_k: int = 5,
        true_names: dict[str, str] | None = None,
    ) -> list[Prediction]:
        """Return one prediction per document (doc_id -> text)."""

    def reidentify_dataset(
        self,
        dataset: TRIADataset,
        progress: ProgressCallback | None = None,
        on_epoch: EpochCallback | None = None,
    ) -> Reidentification:
        """Fit on the dataset's background knowledge and re-identify every document set.

        Attacks fitted in one shot predict each set once (a single epoch-0 history record);
        attacks trained over epochs override this to score the sets as they train and report
        each epoch to ``on_epoch``.
        """
        self.fit(dataset.background, progress)
        predictions = {
            column: self.predict(documents.texts, self.config.top_k, documents.true_names)
            for column, documents in dataset.document_sets.items()
        }
        history = [{"epoch": 0, "trir": {c: trir(p).trir_pct for c, p in predictions.items()}}]
        return Reidentification(history, predictions)

    @abstractmethod
    def save(self, directory: str | Path) -> None:
        """Save everything needed to predict without retraining."""

    @classmethod
    @abstractmethod
    def load(cls, directory: str | Path) -> Attack:
        """Load an attack saved by ``save``."""

    def _write_attack_file(self, directory: Path, extra: dict[str, Any] | None = None) -> None:
        """Write attack.json: the attack name, config, individuals and run statistics."""
        directory.mkdir(parents=True, exist_ok=True)
        payload = {
            "attack": self.name,
            "config": self.config.to_dict(),
            "names": self.names,
            "stats": self.stats,
            **(extra or {}),
        }
        (directory / ATTACK_FILE).write_text(json.dumps(payload, indent=2), encoding="utf-8")

    def _save_state(self, directory: str | Path, filename: str, state: Any) -> None:
        """Save `state` as JSON in `filename`, then attack.json (last: it marks a whole save)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / filename).write_text(json.dumps(state), encoding="utf-8")
        self._write_attack_file(directory)

    @classmethod
    def _load_state(cls, directory: str | Path, filename: str) -> tuple[Self, Any]:
        """Return the attack restored from attack.json and the state `_save_state` wrote."""
        directory = Path(directory)
        attack = cls._restore(directory)
        return attack, json.loads((directory / filename).read_text(encoding="utf-8"))

    @staticmethod
    def _read_attack_file(directory: Path) -> dict[str, Any]:
        """Read attack.json from a saved attack directory."""
        path = Path(directory) / ATTACK_FILE
        if not path.is_file():
            raise FileNotFoundError(f"no saved attack in {directory} ({ATTACK_FILE} missing)")
        return json.loads(path.read_text(encoding="utf-8"))

    @classmethod
    def _restore(cls, directory: Path) -> Self:
        """Return an attack of this class with the config, individuals and stats saved there."""
        payload = cls._read_attack_file(directory)
        attack = cls(AttackConfig.from_dict(payload["config"]))
        attack.names = payload["names"]
        attack.stats = payload.get("stats", {})
        return attack
