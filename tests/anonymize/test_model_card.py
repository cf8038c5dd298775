"""The model card template reproduces the shipped card from the shipped model's own files."""

import json
import shutil
from pathlib import Path

from anonymize.model import DEFAULT_MODEL_DIR
from anonymize.model_card import render_model_card, write_model_card

REPO = Path(__file__).resolve().parents[2]
COMPARISON = REPO / "benchmarks" / "results" / "anonymize_quality_test.json"
SPEED = REPO / "benchmarks" / "results" / "anonymize_speed.json"


def test_shipped_card_is_what_the_template_renders():
    card = render_model_card(DEFAULT_MODEL_DIR, COMPARISON, SPEED)
    assert card == (DEFAULT_MODEL_DIR / "MODEL_CARD.md").read_text()


def test_card_without_test_metrics_or_extras_leaves_their_sections_out(tmp_path):
    for name in ("training_manifest.json", "metrics_train.json", "metrics_dev.json"):
        shutil.copy(DEFAULT_MODEL_DIR / name, tmp_path / name)
    manifest = json.loads((tmp_path / "training_manifest.json").read_text())
    manifest["config"]["case_feature"] = False
    manifest.pop("dev_history", None)
    (tmp_path / "training_manifest.json").write_text(json.dumps(manifest))
    card = write_model_card(tmp_path).read_text()
    assert f"Model version: `{tmp_path.name}`" in card
    dev = json.loads((tmp_path / "metrics_dev.json").read_text())
    assert "## Scores" in card and f"| dev | {dev['documents']} |" in card
    for absent in ("### Targets", "### Threshold sweep", "## Speed", "per category", "epoch |"):
        assert absent not in card
    assert "The tokenizer is uncased, so capitalisation is not a cue" in card
    assert card.endswith("interviews) are untested.\n")
