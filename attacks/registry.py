"""Pick an attack by name, and the attacks by what their classes say about themselves.

An attack's module is imported only when it is asked for; every module stays light (TRIA
loads torch and transformers when it first fits or loads), so listing the attacks and
reading their facts (`attacks_where`) never loads torch.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path

from attacks.base import Attack
from attacks.config import AttackConfig

# name -> "module:class"; the class's ``name`` attribute equals its key here. The order is
# the order of `attacks_where`: the cheap attacks first.
ATTACK_CLASSES = {
    "tfidf": "attacks.tfidf:TFIDFAttack",
    "bm25": "attacks.bm25:BM25Attack",
    "dense": "attacks.dense:DenseAttack",
    "tria": "attacks.tria.attack:TRIAAttack",
    "llm": "attacks.llm:LLMAttack",
}


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


def attacks_where(fact: str, value: bool = True) -> tuple[str, ...]:
    """Return the names of the attacks whose class sets `fact` ("cheap", "reusable", ...)."""
    if not hasattr(Attack, fact):
        raise ValueError(f"attacks state no fact {fact!r}")
    return tuple(name for name, cls in ATTACKS.items() if getattr(cls, fact) == value)


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
