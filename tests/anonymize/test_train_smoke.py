"""`python -m anonymize train` end to end on a made-up corpus, with a tiny random BERT."""

from __future__ import annotations

import io
import json

from anonymize import Anonymizer
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
    assert config["case_feature"] is True and config["type_vocab_size"] == 3
    # 6 training windows, batch 4: 2 steps per epoch, so dev is scored after epoch 1 and 1.5.
    assert [row["epoch"] for row in manifest["dev_history"]] == [1, 1.5]
    assert manifest["selected_epoch"] in (1, 1.5)

    for split in ("train", "dev", "test"):
        metrics = json.loads((output / f"metrics_{split}.json").read_text())
        assert metrics["documents"] == 2 * len(persons[split])
        assert 0.0 <= metrics["binary_psi"]["f1"] <= 1.0
        assert metrics["per_category"]["PERSON_FIRSTNAME"]["support"] > 0
        assert {"rate", "documents_leaking"} <= set(metrics["name_leak"])
    assert "test: weighted F1 (PSI)" in stdout.getvalue()

    code = main(
        ["calibrate", "--model-dir", str(output), "--corpus-dir", str(fixture_corpus)],
        stdout=stdout,
    )
    assert code == 0
    chosen = json.loads((output / "training_manifest.json").read_text())["threshold_selection"]
    assert chosen["split"] == "dev" and chosen["documents"] == metrics_dev_documents(output)
    assert json.loads((output / "config.json").read_text())["psi_threshold"] == chosen["threshold"]
    assert Anonymizer.load(output).threshold == chosen["threshold"]

    assert main(["card", "--model-dir", str(output)], stdout=stdout) == 0
    card = (output / "MODEL_CARD.md").read_text()
    assert "| 1 | " in card and "| 1.5 | " in card  # dev score per checked epoch
    assert f"Decision threshold {chosen['threshold']}, chosen on the dev split" in card
    assert "token type id" in card  # the case feature is described


def metrics_dev_documents(model_dir) -> int:
    """Return how many documents the saved dev metrics cover."""
    return json.loads((model_dir / "metrics_dev.json").read_text())["documents"]


def test_epoch_selector_keeps_the_epoch_best_on_dev(monkeypatch, tmp_path):
    from anonymize import train as train_module

    dev_scores = iter([0.5, 0.7, 0.6])
    monkeypatch.setattr(
        train_module,
        "score_in_memory",
        lambda *args: {
            "psi_categories": {"weighted": {"f1": next(dev_scores)}},
            "binary_psi": {"f1": 0.9},
        },
    )
    saved_at = []
    monkeypatch.setattr(train_module, "save_model", lambda *args: saved_at.append(epoch))
    config = train_module.TrainConfig(corpus_dir=tmp_path, output_dir=tmp_path)
    selector = train_module.EpochSelector(None, None, config, dev=["a document"])
    for epoch in (1, 2, 3):
        selector.check(epoch)
    assert saved_at == [1, 2]
    assert selector.best_epoch == 2
    assert [row["weighted_f1_psi"] for row in selector.history] == [0.5, 0.7, 0.6]


def test_without_dev_selection_every_epoch_is_saved(monkeypatch, tmp_path):
    from anonymize import train as train_module

    saved = []
    monkeypatch.setattr(train_module, "save_model", lambda *args: saved.append(True))
    config = train_module.TrainConfig(corpus_dir=tmp_path, output_dir=tmp_path, select_on_dev=False)
    selector = train_module.EpochSelector(None, None, config, dev=["a document"])
    selector.check(1)
    selector.check(2)
    assert len(saved) == 2 and selector.best_epoch == 2 and selector.history == []
