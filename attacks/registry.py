"""Pick an attack by name."""

from __future__ import annotations

from pathlib import Path

from attacks.base import Attack
from attacks.bm25 import BM25Attack
from attacks.config import TRIAConfig
from attacks.dense import DenseAttack
from attacks.tfidf import TFIDFAttack
from attacks.tria import TRIAAttack

ATTACKS: dict[str, type[Attack]] = {
    cls.name: cls for cls in (TRIAAttack, BM25Attack, TFIDFAttack, DenseAttack)
}


def get_attack(name: str, config: TRIAConfig | None = None) -> Attack:
    """Return a new attack ``name`` ('tria', 'bm25', 'tfidf' or 'dense')."""
    try:
        cls = ATTACKS[name]
    except KeyError:
        raise ValueError(f"unknown attack {name!r}; choose one of {sorted(ATTACKS)}") from None
    return cls(config)


def load_attack(directory: str | Path) -> Attack:
    """Load any saved attack, dispatching on the name in its attack.json."""
    payload = Attack._read_attack_file(Path(directory))
    return ATTACKS[payload["attack"]].load(directory)
