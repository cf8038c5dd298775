"""Pick an attack by name; an attack's module is imported only when it is asked for.

TRIA's module loads torch and transformers (seconds), so listing the attacks, the CLI's
``--help`` and the cheap attacks never import it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path

from attacks.base import Attack
from attacks.config import AttackConfig

# name -> "module:class"; the class's ``name`` attribute equals its key here.
ATTACK_CLASSES = {
    "tria": "attacks.tria.attack:TRIAAttack",
    "bm25": "attacks.bm25:BM25Attack",
    "tfidf": "attacks.tfidf:TFIDFAttack",
    "dense": "attacks.dense:DenseAttack",
    "llm": "attacks.llm:LLMAttack",
}
# Attacks that send the texts to an outside endpoint (and may cost money): never in 'all'.
ENDPOINT_ATTACKS = frozenset({"llm"})


class AttackRegistry(Mapping[str, type[Attack]]):
    """Map attack names to their classes, importing each class's module on first use."""

    def __init__(self, paths: Mapping[str, str]) -> None:
        self._paths = dict(paths)

    def __getitem__(self, name: str) -> type[Attack]:
        module_name, class_name = self._paths[name].split(":")
        return getattr(importlib.import_module(module_name), class_name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


ATTACKS: Mapping[str, type[Attack]] = AttackRegistry(ATTACK_CLASSES)


def get_attack(name: str, config: AttackConfig | None = None) -> Attack:
    """Return a new attack ``name`` ('tria', 'bm25', 'tfidf', 'dense' or 'llm')."""
    try:
        cls = ATTACKS[name]
    except KeyError:
        raise ValueError(f"unknown attack {name!r}; choose one of {sorted(ATTACKS)}") from None
    return cls(config)


def load_attack(directory: str | Path) -> Attack:
    """Load any saved attack, dispatching on the name in its attack.json."""
    payload = Attack._read_attack_file(Path(directory))
    return ATTACKS[payload["attack"]].load(directory)
