"""Compare anonymizer training runs: loss curve, dev scores per epoch, final dev scores, speed.

Used to check that moving `python -m anonymize train` onto `transformers.Trainer` left the
model's quality unchanged. Train each run with the CLI (under the heavy-job lock), e.g.

    flock /tmp/heavy.lock python -m anonymize train --output-dir runs/new --evaluate-splits dev

then compare the saved folders, the first one as the reference:

    python benchmarks/anonymize_training_parity.py --run shipped=anonymize/models/textwash-minilm \
        --run trainer=runs/new --evaluation shipped=shipped_dev.json --evaluation trainer=new.json \
        --out benchmarks/results/anonymize_training_parity.json

`--evaluation NAME=FILE` adds the output of `python -m anonymize evaluate --output FILE` for
that run, so models can also be compared at one threshold with today's rules.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HEADLINE_THRESHOLDS = (0.4, 0.5)


def named_paths(pairs: list[str]) -> dict[str, Path]:
    """Parse NAME=PATH arguments, keeping their order."""
    parsed = {}
    for pair in pairs:
        name, separator, path = pair.partition("=")
        if not separator:
            raise SystemExit(f"error: expected NAME=PATH, got {pair!r}")
        parsed[name] = Path(path)
    return parsed


def dev_scores(metrics: dict) -> dict[str, float]:
    """Return the headline dev scores of a metrics_<split>.json-shaped dict."""
    return {
        "threshold": metrics.get("threshold"),
        "weighted_f1_psi": round(metrics["psi_categories"]["weighted"]["f1"], 4),
        "macro_f1_psi": round(metrics["psi_categories"]["macro"]["f1"], 4),
        "binary_psi_f1": round(metrics["binary_psi"]["f1"], 4),
        "name_leak_rate": round(metrics["name_leak"]["rate"], 4),
    }


def summarise(model_dir: Path, evaluation: Path | None) -> dict[str, object]:
    """Return one run's settings, speed, loss curve and dev scores."""
    manifest = json.loads((model_dir / "training_manifest.json").read_text())
    metrics = json.loads((model_dir / "metrics_dev.json").read_text())
    losses = [row for row in manifest["log_history"] if "loss" in row]
    steps = losses[-1]["step"]
    summary = {
        "model_dir": str(model_dir),
        "config": manifest["config"],
        "train_windows": manifest["train_windows"],
        "steps": steps,
        "train_runtime_s": round(manifest["train_runtime_s"], 1),
        "seconds_per_step": round(manifest["train_runtime_s"] / steps, 3),
        "loss_by_step": {row["step"]: round(row["loss"], 4) for row in losses},
        "dev_history": manifest.get("dev_history", []),
        "selected_epoch": manifest.get("selected_epoch"),
        "dev_saved_metrics": dev_scores(metrics),
        "dev_sweep": {
            row["threshold"]: {k: round(v, 4) for k, v in row.items() if k != "threshold"}
            for row in metrics["threshold_sweep"]
            if row["threshold"] in HEADLINE_THRESHOLDS
        },
    }
    if evaluation is not None:
        systems = json.loads(evaluation.read_text())["systems"]
        summary["dev_evaluation"] = dev_scores(next(iter(systems.values())))
    return summary


def differences(reference: dict, other: dict) -> dict[str, object]:
    """Return other minus reference for the dev scores both runs have."""
    result = {}
    for key in ("dev_saved_metrics", "dev_evaluation"):
        if key in reference and key in other:
            result[key] = {
                metric: round(other[key][metric] - reference[key][metric], 4)
                for metric in ("weighted_f1_psi", "macro_f1_psi", "binary_psi_f1")
            }
    for threshold in HEADLINE_THRESHOLDS:
        if threshold in reference["dev_sweep"] and threshold in other["dev_sweep"]:
            result[f"dev_sweep_{threshold}"] = {
                metric: round(
                    other["dev_sweep"][threshold][metric]
                    - reference["dev_sweep"][threshold][metric],
                    4,
                )
                for metric in ("weighted_f1_psi", "binary_psi_f1")
            }
    shared = sorted(set(reference["loss_by_step"]) & set(other["loss_by_step"]))
    result["loss_by_step"] = {
        step: round(other["loss_by_step"][step] - reference["loss_by_step"][step], 4)
        for step in shared
    }
    result["seconds_per_step_ratio"] = round(
        other["seconds_per_step"] / reference["seconds_per_step"], 3
    )
    return result


def main() -> None:
    """Summarise every run, compare each with the first, print and save the result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", required=True, help="NAME=MODEL_DIR")
    parser.add_argument("--evaluation", action="append", default=[], help="NAME=EVALUATE_JSON")
    parser.add_argument("--note", default="", help="how the runs were made")
    parser.add_argument("--out", required=True, help="JSON file to write")
    args = parser.parse_args()
    runs, evaluations = named_paths(args.run), named_paths(args.evaluation)
    summaries = {name: summarise(path, evaluations.get(name)) for name, path in runs.items()}
    reference = next(iter(summaries))
    from did_work import require_work

    require_work(
        "anonymize_training_parity",
        runs=len(summaries),
        training_steps=min(s["steps"] for s in summaries.values()),
    )
    result = {
        "note": args.note,
        "reference": reference,
        "runs": summaries,
        "differences": {
            name: differences(summaries[reference], summary)
            for name, summary in summaries.items()
            if name != reference
        },
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    for name, summary in summaries.items():
        print(
            f"{name}: {summary['steps']} steps, {summary['seconds_per_step']} s/step, "
            f"selected epoch {summary['selected_epoch']}, dev {summary['dev_saved_metrics']}, "
            f"evaluation {summary.get('dev_evaluation')}"
        )
    for name, delta in result["differences"].items():
        print(f"{name} - {reference}: {json.dumps(delta)}")


if __name__ == "__main__":
    main()
