"""Run an attack on a data file and write its outputs (per-epoch TRIR, final JSON, predictions)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attacks.base import Attack, EpochCallback, ProgressCallback
from attacks.config import AttackConfig, ConfigError
from attacks.data import TRIADataset, load_dataset
from attacks.metrics import TRIR_KEY, trir
from attacks.prediction import Prediction
from attacks.registry import ATTACKS, attacks_where, get_attack
from attacks.runtime import is_main_process, set_seed
from attacks.strongest import STRONGEST, reidentified_by, strongest_adversary
from csv_safe import SafeWriter

RESULTS_CSV = "results.csv"
REIDENTIFICATION_CSV = "reidentification.csv"
ALL_ATTACKS = "all"
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
    config: AttackConfig,
    attack_name: str = "tria",
    progress: ProgressCallback | None = None,
    on_epoch: EpochCallback | None = None,
) -> RunResult:
    """Fit ``attack_name`` on the background knowledge and re-identify every column.

    ``on_epoch`` receives TRIA's per-epoch record (epoch, loss, TRIR per column) as it comes.
    """
    set_seed(config.seed)
    attack = get_attack(attack_name, config)
    start = time.perf_counter()
    outcome = attack.reidentify_dataset(dataset, progress, on_epoch)
    history, predictions = outcome.history, outcome.predictions
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
    attack.stats["final_trir"] = {c: v[TRIR_KEY] for c, v in final["trir"].items()}
    return RunResult(attack, history, predictions, final)


def write_history_csv(history: list[dict[str, Any]], path: Path) -> None:
    """Write TRIR per method (columns) per epoch (rows), like the reference's Results.csv."""
    columns = sorted({c for record in history for c in record["trir"]})
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = SafeWriter(handle)
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
        writer = SafeWriter(csv_handle)
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
    """Write results.csv, final.json, predictions and the saved model under ``out_dir``.

    Under ``torchrun``/``accelerate launch`` every process holds the same results; only the
    main one writes.
    """
    out_dir = Path(out_dir)
    if not is_main_process():
        return out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    write_history_csv(result.history, out_dir / RESULTS_CSV)
    (out_dir / FINAL_JSON).write_text(json.dumps(result.final, indent=2), encoding="utf-8")
    write_predictions(result.predictions, out_dir)
    result.attack.save(out_dir / MODEL_DIR)
    return out_dir


def run_from_config(
    config: AttackConfig,
    attack_name: str,
    out_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
) -> RunResult:
    """Load the config's data file, run the attack and write its outputs."""
    dataset = load_dataset(None, config)
    result = run_attack(dataset, config, attack_name, progress)
    write_outputs(result, out_dir or config.output_folder_path)
    return result


def attack_names(spec: str) -> list[str]:
    """Return the attacks named by ``spec``: one name, a comma list, or 'all' (cheap first)."""
    if spec == ALL_ATTACKS:
        # The cheap attacks first, so their results are on disk before TRIA's long training.
        local = attacks_where("sends_texts_out", False)
        return sorted(local, key=lambda name: (not ATTACKS[name].cheap, name))
    names = [part.strip() for part in spec.split(",") if part.strip()]
    unknown = [name for name in names if name not in ATTACKS]
    if unknown or not names:
        raise ConfigError(
            f"unknown attack(s) {unknown or [spec]}; choose from {sorted(ATTACKS)} or 'all'"
        )
    return list(dict.fromkeys(names))


@dataclass
class MultiRunResult:
    """Hold the runs of several attacks on one dataset and their strongest adversary."""

    runs: dict[str, RunResult]
    final: dict[str, Any]

    def predictions_by_column(self) -> dict[str, dict[str, list[Prediction]]]:
        """Return column -> attack -> predictions."""
        columns = {c for run in self.runs.values() for c in run.predictions}
        return {
            column: {
                attack: run.predictions[column]
                for attack, run in self.runs.items()
                if column in run.predictions
            }
            for column in sorted(columns)
        }


def run_attacks(
    dataset: TRIADataset,
    config: AttackConfig,
    names: list[str],
    progress: ProgressCallback | None = None,
    on_run: Callable[[str, RunResult], None] | None = None,
) -> MultiRunResult:
    """Run every attack in ``names`` on the same data and add the strongest adversary.

    The attacks share the pretreatment through ``config.cache_dir``. ``on_run`` receives
    each attack's result as soon as it finishes, so a caller can write it out before the
    next (possibly long) attack starts.
    """
    runs: dict[str, RunResult] = {}
    for name in names:
        runs[name] = run_attack(dataset, config, name, progress)
        if on_run is not None:
            on_run(name, runs[name])
    result = MultiRunResult(runs, {})
    by_column = result.predictions_by_column()
    trir_by_attack: dict[str, dict[str, float]] = {
        name: {c: trir(p).trir_pct for c, p in run.predictions.items()}
        for name, run in runs.items()
    }
    trir_by_attack[STRONGEST] = {
        column: trir(strongest_adversary(by_attack)).trir_pct
        for column, by_attack in by_column.items()
    }
    result.final = {
        "attacks": names,
        "config": config.to_dict(),
        "individuals_in_background": len(dataset.background),
        "trir_by_attack": trir_by_attack,
        "strongest": {
            column: trir(strongest_adversary(by_attack)).to_dict()
            for column, by_attack in by_column.items()
        },
        "wall_seconds": {name: run.final["wall_seconds"] for name, run in runs.items()},
    }
    return result


def write_reidentification_csv(result: MultiRunResult, path: Path) -> None:
    """Write one row per column and document: which attacks rank the true person first."""
    names = list(result.runs)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = SafeWriter(handle)
        writer.writerow(["column", "doc_id", "true_name", *names, STRONGEST, "reidentified_by"])
        for column, by_attack in result.predictions_by_column().items():
            hits = reidentified_by(by_attack)
            true_names = {p.doc_id: p.true_name for preds in by_attack.values() for p in preds}
            for doc_id, attacks in hits.items():
                writer.writerow(
                    [column, doc_id, true_names[doc_id]]
                    + [int(name in attacks) for name in names]
                    + [int(bool(attacks)), ";".join(attacks)]
                )


def write_multi_outputs(result: MultiRunResult, out_dir: str | Path) -> Path:
    """Write the combined final.json and reidentification.csv under ``out_dir``."""
    out_dir = Path(out_dir)
    if not is_main_process():
        return out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / FINAL_JSON).write_text(json.dumps(result.final, indent=2), encoding="utf-8")
    write_reidentification_csv(result, out_dir / REIDENTIFICATION_CSV)
    return out_dir


def run_many_from_config(
    config: AttackConfig,
    names: list[str],
    out_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
) -> MultiRunResult:
    """Run several attacks on the config's data file; each writes to ``out_dir/<attack>``."""
    out_dir = Path(out_dir or config.output_folder_path)
    dataset = load_dataset(None, config)
    result = run_attacks(
        dataset,
        config,
        names,
        progress,
        on_run=lambda name, run: write_outputs(run, out_dir / name),
    )
    write_multi_outputs(result, out_dir)
    return result
