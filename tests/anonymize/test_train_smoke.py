"""`python -m anonymize train` end to end on a made-up corpus, with a tiny random BERT."""

from __future__ import annotations

import io
import json

from anonymize.cli import main
from anonymize.labels import LABEL2ID


def test_train_smoke_saves_a_self_describing_model_and_metrics(fixture_corpus, tmp_path):
    output = tmp_path / "model"
    stdout = io.StringIO()
    code = main(
        [
            "train",
            "--corpus-dir",
            str(fixture_corpus),
            "--output-dir",
            str(output),
            "--tiny-random-model",
            "--max-steps",
            "3",
            "--batch-size",
            "4",
            "--max-length",
            "32",
            "--stride",
            "24",
            "--threads",
            "1",
        ],
        stdout=stdout,
    )
    assert code == 0
    config = json.loads((output / "config.json").read_text())
    assert config["label2id"] == LABEL2ID
    assert (output / "model.safetensors").exists() and (output / "tokenizer.json").exists()

    manifest = json.loads((output / "training_manifest.json").read_text())
    persons = {split: set(names) for split, names in manifest["split_persons"].items()}
    assert not persons["train"] & persons["test"] and not persons["dev"] & persons["test"]
    assert not persons["train"] & persons["dev"]
    assert manifest["alignment"]["documents"] == 18
    assert manifest["alignment"]["documents_dropped"] == 0
    assert manifest["log_history"][-1]["step"] == 3

    for split in ("train", "dev", "test"):
        metrics = json.loads((output / f"metrics_{split}.json").read_text())
        assert metrics["documents"] == 2 * len(persons[split])
        assert 0.0 <= metrics["binary_psi"]["f1"] <= 1.0
        assert metrics["per_category"]["PERSON_FIRSTNAME"]["support"] > 0
        assert {"rate", "documents_leaking"} <= set(metrics["name_leak"])
    assert "test: weighted F1 (PSI)" in stdout.getvalue()
