"""The open-world ladder of the human-vs-machine benchmark: TRIR as the candidate set grows.

Humans choose from everyone they know; the platform's attack run chooses among the study's
persons only. Here each fold of the study's own k-fold background (the same folds and seed
as the platform's run) is attacked again with distractor candidates added: WikiActors
persons (their Wikipedia article body, `public_knowledge`, as background), de-duplicated
against the study's persons by name. Distractor sets are nested (the first 50 of a seeded
shuffle are in the 500), so the ladder's steps differ by the added persons only.

Distractors are never a study text's own background: a distractor's key is
`distractor:<name>`, never a study target key, and the texts attacked are the study's.
"""

from __future__ import annotations

import dataclasses
import json
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

DISTRACTOR_PREFIX = "distractor:"
WIKIACTORS_FILE = "WikiActors_500_random.json"


def normalise_name(name: str) -> str:
    """Return a name folded for comparison: no accents, case or punctuation."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def load_distractors(
    folder: Path, study_names: Sequence[str], *, seed: int = 0
) -> tuple[list[tuple[str, str]], list[str]]:
    """Return (name, background) of WikiActors persons not in the study, seeded order, and
    the names dropped as study persons."""
    rows = json.loads((folder / WIKIACTORS_FILE).read_text(encoding="utf-8"))
    study = {normalise_name(n) for n in study_names}
    kept, dropped = [], []
    for row in rows:
        text = row.get("public_knowledge")
        if not text:
            continue
        if normalise_name(row["name"]) in study:
            dropped.append(row["name"])
            continue
        kept.append((row["name"], text))
    order = np.random.default_rng(seed).permutation(len(kept))
    return [kept[i] for i in order], dropped


def ladder(
    *,
    study: Any,
    run: Any,
    method: str,
    attacks: Sequence[str],
    distractors: list[tuple[str, str]],
    levels: Sequence[int],
    config: dict[str, Any],
) -> pd.DataFrame:
    """Return one row per (text, level, attack): N candidates and the true person's rank."""
    from attacks.background import BackgroundRecord
    from attacks.config import AttackConfig
    from attacks.crossval import attack_cells, fold_backgrounds
    from attacks.prepared import PreparedTexts
    from intruder.models import AnonymizedText, Description

    descriptions = list(
        Description.objects.filter(study=study).select_related("target").order_by("pk")
    )
    keep = set(run.summary.get("description_ids") or [d.pk for d in descriptions])
    descriptions = [d for d in descriptions if d.pk in keep]
    key_of = {d.pk: d.target.key for d in descriptions}
    group_of = {d.pk: d.target.group for d in descriptions}
    seen = dict(
        AnonymizedText.objects.filter(description__in=descriptions, method=method).values_list(
            "description_id", "text"
        )
    )
    records = [
        BackgroundRecord(
            text_id=str(d.pk),
            target=d.target.key,
            writer=None if d.writer_id is None else str(d.writer_id),
            text=d.text,
        )
        for d in descriptions
    ]
    folds = fold_backgrounds(records, folds=run.folds, seed=run.seed)
    prepared = PreparedTexts(AttackConfig.from_dict(config))
    instances: dict[str, Any] = {}
    rows = []
    for fold in folds:
        own = fold.texts_by_person
        for level in levels:
            extra = {f"{DISTRACTOR_PREFIX}{name}": [text] for name, text in distractors[:level]}
            assert not set(extra) & set(own)  # never a study person's own background
            background = dataclasses.replace(fold, texts_by_person={**own, **extra})
            for cell in attack_cells(
                prepared,
                [background],
                attacks,
                [method],
                texts=lambda _, ids: {i: seen[int(i)] for i in ids},
                true_names={str(i): key for i, key in key_of.items()},
                remaining=lambda fold, name, method, ids: [i for i in ids if int(i) in seen],
                reuse=instances,
                reusable=attacks,
            ):
                for doc_id, prediction in cell.predictions.items():
                    i = int(doc_id)
                    rows.append(
                        {
                            "description_id": i,
                            "target_key": key_of[i],
                            "group": group_of[i],
                            "fold": fold.index,
                            "distractors": level,
                            "candidates": len(background.texts_by_person),
                            "attack": cell.attack_name,
                            "true_rank": prediction.true_rank if prediction else None,
                            "correct": prediction is not None and prediction.true_rank == 1,
                        }
                    )
    return pd.DataFrame(rows)


def ladder_trir(frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Return N (as a string) -> attack -> TRIR %, with the strongest and the chance 1/N.

    N is the median candidate count of the step's folds (a fold lacks a study person whose
    texts are all in it; it rarely happens).
    """
    out: dict[str, dict[str, Any]] = {}
    for level, part in frame.groupby("distractors"):
        n = int(part["candidates"].median())
        step: dict[str, Any] = {"distractors": int(level), "chance_pct": 100.0 / n}
        for attack, rows in part.groupby("attack"):
            step[str(attack)] = 100.0 * float(rows["correct"].mean())
        any_hit = part.groupby("description_id")["correct"].any()
        step["strongest"] = 100.0 * float(any_hit.mean())
        step["texts"] = int(any_hit.size)
        out[str(n)] = step
    return out


def text_ranks(frame: pd.DataFrame, level: int) -> pd.DataFrame:
    """Return one row per text at one ladder step: each attack's true rank, as columns."""
    part = frame[frame["distractors"] == level]
    wide = part.pivot_table(
        index=["description_id", "target_key", "group"],
        columns="attack",
        values="true_rank",
        aggfunc="first",
    )
    wide.columns = [f"{a}_true_rank" for a in wide.columns]
    return wide.reset_index()
