"""Run an attack on a data file and write its outputs (per-epoch TRIR, final JSON, predictions)."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attacks.base import Attack, Prediction, ProgressCallback
from attacks.config import TRIAConfig
from attacks.data import TRIADataset, load_dataset
from attacks.metrics import trir
from attacks.registry import get_attack
from attacks.tria import TRIAAttack, set_seed

RESULTS_CSV = "results.csv"
FINAL_JSON = "final.json"
PREDICTIONS_JSONL = "predictions.jsonl"
PREDICTIONS_CSV = "predictions.csv"
MODEL_DIR = "model"


@dataclass
class RunResult:
    """Hold what a run produced."""

    attack: Attack
    history: list[dict[str, Any]]
    predictions: dict[str, list[Prediction]]
    final: dict[str, Any] = field(default_factory=dict)


def run_attack(
    dataset: TRIADataset,
    config: TRIAConfig,
    attack_name: str = "tria",
    progress: ProgressCallback | None = None,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
) -> RunResult:
    """Fit ``attack_name`` on the background knowledge and re-identify every column.

    ``on_epoch`` receives TRIA's per-epoch record (epoch, loss, TRIR per column) as it comes.
    """
    set_seed(config.seed)
    attack = get_attack(attack_name, config)
    start = time.perf_counter()
    if isinstance(attack, TRIAAttack):
        monitor = {c: dataset.document_sets[c] for c in dataset.method_columns}
        result = attack.fit(
            dataset.background,
            progress,
            dev_set=dataset.dev_set,
            monitor_sets=monitor,
            on_epoch=on_epoch,
        )
        history, predictions = result.history, result.best_predictions
    else:
        attack.fit(dataset.background, progress)
        predictions = {
            column: attack.predict(documents.texts, config.top_k, documents.true_names)
            for column, documents in dataset.document_sets.items()
        }
        history = [{"epoch": 0, "trir": {c: trir(p).accuracy for c, p in predictions.items()}}]
    wall = time.perf_counter() - start
    final = {
        "attack": attack_name,
        "config": config.to_dict(),
        "individuals_in_background": len(dataset.background),
        "best_epoch": attack.stats.get("best_epoch"),
        "epochs_run": attack.stats.get("epochs_run"),
        "dev_column": dataset.dev_column,
        "trir": {c: trir(p).to_dict() for c, p in predictions.items()},
        "wall_seconds": wall,
        "stats": {k: v for k, v in attack.stats.items() if k != "history"},
    }
    attack.stats["final_trir"] = {c: v["accuracy"] for c, v in final["trir"].items()}
    return RunResult(attack, history, predictions, final)


def write_history_csv(history: list[dict[str, Any]], path: Path) -> None:
    """Write TRIR per method (columns) per epoch (rows), like the reference's Results.csv."""
    columns = sorted({c for record in history for c in record["trir"]})
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["epoch", "train_loss", *columns])
        for record in history:
            writer.writerow(
                [record["epoch"], record.get("train_loss", "")]
                + [f"{record['trir'].get(c, float('nan')):.2f}" for c in columns]
            )


def write_predictions(predictions: dict[str, list[Prediction]], out_dir: Path) -> None:
    """Write per-document predictions as JSONL and CSV (one row per column and document)."""
    with (
        (out_dir / PREDICTIONS_JSONL).open("w", encoding="utf-8") as jsonl,
        (out_dir / PREDICTIONS_CSV).open("w", newline="", encoding="utf-8") as csv_handle,
    ):
        writer = csv.writer(csv_handle)
        writer.writerow(
            ["column", "doc_id", "true_name", "predicted_name", "true_rank", "true_prob", "top_k"]
        )
        for column, preds in predictions.items():
            for p in preds:
                row = {"column": column, **p.to_dict()}
                jsonl.write(json.dumps(row, ensure_ascii=False) + "\n")
                writer.writerow(
                    [
                        column,
                        p.doc_id,
                        p.true_name,
                        p.predicted_name,
                        p.true_rank,
                        p.true_prob,
                        json.dumps(row["top_k"], ensure_ascii=False),
                    ]
                )


def write_outputs(result: RunResult, out_dir: str | Path) -> Path:
    """Write results.csv, final.json, predictions and the saved model under ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_history_csv(result.history, out_dir / RESULTS_CSV)
    (out_dir / FINAL_JSON).write_text(json.dumps(result.final, indent=2), encoding="utf-8")
    write_predictions(result.predictions, out_dir)
    result.attack.save(out_dir / MODEL_DIR)
    return out_dir


def run_from_config(
    config: TRIAConfig,
    attack_name: str,
    out_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
) -> RunResult:
    """Load the config's data file, run the attack and write its outputs."""
    dataset = load_dataset(None, config)
    result = run_attack(dataset, config, attack_name, progress)
    write_outputs(result, out_dir or config.output_folder_path)
    return result
