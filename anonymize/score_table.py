"""The rows of the per-category score table, shared by the CLI report and the model card.

`evaluate` prints it as text and `model_card` renders it as Markdown; both read the same rows
from the metrics JSON so the two cannot disagree about what the table holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from anonymize.labels import CATEGORIES, NONE

MEASURES: tuple[str, ...] = ("precision", "recall", "f1")
AVERAGES: tuple[str, ...] = ("macro", "weighted")


@dataclass(frozen=True)
class ScoreRow:
    """One row: a label, one {precision, recall, f1} dict per system, and its support.

    `support` is None for averages, whose support each renderer states its own way.
    """

    label: str
    scores: list[dict[str, float]]
    support: int | None


def score_rows(systems: dict[str, dict], groups: Sequence[tuple[str, str]]) -> list[ScoreRow]:
    """Return the category rows, the macro/weighted average of each (group, title), then binary.

    `systems` maps a system name to its metrics (`evaluate.evaluate_documents` output); support
    is the first system's (all systems are scored on the same words).
    """
    names = list(systems)
    first = systems[names[0]]
    rows = [
        ScoreRow(
            category,
            [systems[n]["per_category"][category] for n in names],
            first["per_category"][category]["support"],
        )
        for category in (*CATEGORIES, NONE)
    ]
    rows += [
        ScoreRow(f"{kind} avg ({title})", [systems[n][group][kind] for n in names], None)
        for group, title in groups
        for kind in AVERAGES
    ]
    rows.append(
        ScoreRow(
            "binary PSI vs NONE",
            [systems[n]["binary_psi"] for n in names],
            first["binary_psi"]["support"],
        )
    )
    return rows
