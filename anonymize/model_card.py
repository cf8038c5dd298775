"""Write MODEL_CARD.md for a trained model from its own manifest and metrics files.

The card's text is the Jinja template `templates/model_card.md.j2`; this module only reads
the JSON files and hands them over, with the per-category rows from `score_table`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from anonymize.score_table import MEASURES, score_rows

TEMPLATES = Path(__file__).resolve().parent / "templates"
# Groups averaged in the card's per-category table, with the name each row shows.
CARD_GROUPS: tuple[tuple[str, str], ...] = (
    ("psi_categories", "PSI categories"),
    ("textwash_categories", "Textwash's 11"),
)
# (what, where in metrics_test.json, target, direction): the goals the model was trained to.
TARGETS: tuple[tuple[str, tuple[str, ...], float, str], ...] = (
    ("weighted F1 over PSI categories", ("psi_categories", "weighted", "f1"), 0.90, ">="),
    ("binary PSI F1", ("binary_psi", "f1"), 0.95, ">="),
    ("share of documents leaking the person's name", ("name_leak", "rate"), 0.01, "<="),
)


def _environment() -> Environment:
    environment = Environment(
        loader=FileSystemLoader(TEMPLATES),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=StrictUndefined,
        autoescape=False,  # Markdown, not HTML
    )
    environment.filters.update(
        f3=lambda value: f"{value:.3f}",
        g=lambda value: f"{value:g}",
        pct=lambda value: f"{value:.1%}",
        prf=lambda scores: " / ".join(f"{scores[m]:.3f}" for m in MEASURES),
    )
    return environment


def _targets(test: dict[str, Any]) -> list[dict[str, Any]]:
    """Return each target with the test split's value and whether it is met."""
    rows = []
    for name, keys, target, direction in TARGETS:
        value = test
        for key in keys:
            value = value[key]
        met = value >= target if direction == ">=" else value <= target
        rows.append(
            {"name": name, "value": value, "target": target, "direction": direction, "met": met}
        )
    return rows


def _read_json(path: Path | None) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path is not None and path.exists() else None


def render_model_card(
    model_dir: Path, comparison: Path | None = None, speed: Path | None = None
) -> str:
    """Return the card's Markdown from training_manifest.json, metrics_<split>.json and the
    optional comparison (`evaluate --output`) and speed (`benchmarks/anonymize_speed.py`) JSON."""
    manifest = json.loads((model_dir / "training_manifest.json").read_text())
    metrics = {
        split: json.loads((model_dir / f"metrics_{split}.json").read_text())
        for split in ("train", "dev", "test")
        if (model_dir / f"metrics_{split}.json").exists()
    }
    compared = _read_json(comparison)
    systems = compared["systems"] if compared else {}
    alignment = manifest["alignment"]
    context = {
        "model_version": metrics.get("test", {}).get("model_version", model_dir.name),
        "manifest": manifest,
        "config": manifest["config"],
        "alignment": alignment,
        "dropped_by_reason": ", ".join(
            f"{k}: {v}" for k, v in alignment["dropped_by_reason"].items()
        ),
        "metrics": metrics,
        "systems": systems,
        "score_rows": score_rows(systems, CARD_GROUPS) if systems else [],
        "comparison_name": comparison.name if comparison else "",
        "targets": _targets(metrics["test"]) if "test" in metrics else [],
        "speed": _read_json(speed),
        "speed_name": speed.name if speed else "",
    }
    return _environment().get_template("model_card.md.j2").render(context)


def write_model_card(
    model_dir: Path, comparison: Path | None = None, speed: Path | None = None
) -> Path:
    """Render the card (`render_model_card`) into model_dir/MODEL_CARD.md."""
    path = model_dir / "MODEL_CARD.md"
    path.write_text(render_model_card(model_dir, comparison, speed))
    return path
