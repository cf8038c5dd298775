"""`python -m anonymize train` end to end on a made-up corpus, with a tiny random BERT."""

from __future__ import annotations

import io
import json
import math
from dataclasses import replace

import pytest

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


def tiny_config(corpus, output, **overrides):
    """Return the smoke-test settings: tiny random BERT, 6 windows, 2 steps per epoch."""
    from anonymize.train import TrainConfig

    settings = dict(
        corpus_dir=corpus,
        output_dir=output,
        tiny_random_model=True,
        batch_size=4,
        max_length=32,
        stride=24,
        threads=1,
        evaluate_splits=("dev",),
    )
    return TrainConfig(**(settings | overrides))


def scripted_dev_scores(monkeypatch, scores):
    """Make the in-training dev score return `scores` in turn, to drive epoch selection."""
    from anonymize import trainer

    remaining = iter(scores)
    monkeypatch.setattr(
        trainer,
        "score_in_memory",
        lambda *args: {
            "psi_categories": {"weighted": {"f1": next(remaining)}},
            "binary_psi": {"f1": 0.9},
        },
    )


def saved_weights(folder):
    """Return the weights saved in `folder`, as fp16 like the shipped model."""
    from safetensors.torch import load_file

    return {k: v.half() for k, v in load_file(folder / "model.safetensors").items()}


def same_weights(first, second) -> bool:
    return first.keys() == second.keys() and all(first[k].equal(second[k]) for k in first)


def test_training_keeps_the_epoch_best_on_dev(monkeypatch, fixture_corpus, tmp_path):
    from anonymize.train import train

    scripted_dev_scores(monkeypatch, [0.5, 0.7, 0.6])
    config = tiny_config(fixture_corpus, tmp_path / "m", epochs=3, keep_checkpoints=True)
    train(config)
    manifest = json.loads((config.output_dir / "training_manifest.json").read_text())
    assert [row["weighted_f1_psi"] for row in manifest["dev_history"]] == [0.5, 0.7, 0.6]
    assert manifest["selected_epoch"] == 2
    # Epoch 2 ends at step 4: the saved model is that checkpoint, not the last one (step 6).
    saved = saved_weights(config.output_dir)
    assert same_weights(saved, saved_weights(config.checkpoint_dir / "checkpoint-4"))
    assert not same_weights(saved, saved_weights(config.checkpoint_dir / "checkpoint-6"))


def test_without_dev_selection_the_last_epoch_is_saved(monkeypatch, fixture_corpus, tmp_path):
    from anonymize.train import train

    scripted_dev_scores(monkeypatch, [])  # dev is never scored
    config = tiny_config(
        fixture_corpus, tmp_path / "m", epochs=2, select_on_dev=False, keep_checkpoints=True
    )
    train(config)
    manifest = json.loads((config.output_dir / "training_manifest.json").read_text())
    assert manifest["dev_history"] == [] and manifest["selected_epoch"] == 2
    saved = saved_weights(config.output_dir)
    assert same_weights(saved, saved_weights(config.checkpoint_dir / "checkpoint-4"))


def test_early_stopping_ends_training_after_patience_epochs(monkeypatch, fixture_corpus, tmp_path):
    from anonymize.train import train

    scripted_dev_scores(monkeypatch, [0.5, 0.7, 0.6, 0.65])
    config = tiny_config(fixture_corpus, tmp_path / "m", epochs=6, early_stopping_patience=2)
    train(config)
    manifest = json.loads((config.output_dir / "training_manifest.json").read_text())
    assert [row["epoch"] for row in manifest["dev_history"]] == [1, 2, 3, 4]
    assert manifest["selected_epoch"] == 2 and manifest["log_history"][-1]["step"] == 8
    assert not config.checkpoint_dir.exists()  # a finished run leaves only the model


def test_an_interrupted_run_resumes_from_its_last_checkpoint(monkeypatch, fixture_corpus, tmp_path):
    from anonymize import trainer
    from anonymize.train import train

    class Interrupted(Exception):
        pass

    def crash_after_epoch_one(self, args, state, control, **kwargs):
        if state.global_step == 3:
            raise Interrupted

    scripted_dev_scores(monkeypatch, [0.5, 0.7, 0.6])
    config = tiny_config(fixture_corpus, tmp_path / "m", epochs=3)
    with monkeypatch.context() as patch:
        patch.setattr(trainer.LogLossAtEpochEnd, "on_step_end", crash_after_epoch_one)
        with pytest.raises(Interrupted):
            train(config)
    with pytest.raises(SystemExit, match="--resume"):
        train(config)  # a fresh run never silently mixes into the unfinished one
    train(replace(config, resume=True))
    manifest = json.loads((config.output_dir / "training_manifest.json").read_text())
    assert manifest["resumed_from"].endswith("checkpoint-2")
    # Epoch 1's dev score comes back from the checkpoint; dev is scored once per epoch.
    assert [row["weighted_f1_psi"] for row in manifest["dev_history"]] == [0.5, 0.7, 0.6]
    assert manifest["selected_epoch"] == 2 and manifest["log_history"][-1]["step"] == 6


@pytest.mark.slow  # two torchrun processes, each loading torch and the model
def test_two_processes_under_torchrun_save_one_model(fixture_corpus, tmp_path):
    """The multi-process command of docs/anonymize-training.md, on CPU (gloo) with 2 ranks."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    output = tmp_path / "m"
    command = [
        *(sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"),
        *("-m", "anonymize", "train", "--corpus-dir", str(fixture_corpus)),
        *("--output-dir", str(output), "--tiny-random-model", "--epochs", "2"),
        *("--batch-size", "2", "--max-length", "32", "--stride", "24", "--threads", "1"),
        *("--evaluate-splits", "dev"),
    ]
    root = Path(__file__).resolve().parents[2]
    environment = os.environ | {"PYTHONPATH": str(root)}
    done = subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    manifest = json.loads((output / "training_manifest.json").read_text())
    # 6 windows, 2 per process and step: 4 per step, so 2 steps per epoch (one process: 3).
    assert manifest["log_history"][-1]["step"] == 4
    assert [row["epoch"] for row in manifest["dev_history"]] == [1, 2]
    assert done.stdout.count("dev: weighted F1 (PSI)") == 1  # only the main process reports
    # An untrained classifier's mean token loss is about ln(labels); a loss scaled by the
    # process count (Trainer's default for models that divide by all processes' tokens) is 2x.
    assert manifest["log_history"][0]["loss"] < 1.3 * math.log(len(LABEL2ID))
    assert not (output / "checkpoints").exists()


def test_split_seed_keeps_the_persons_of_each_split_across_training_seeds(fixture_corpus, tmp_path):
    from anonymize.train import train

    splits = []
    for seed in (1, 2):
        config = tiny_config(
            fixture_corpus, tmp_path / f"s{seed}", seed=seed, split_seed=5, max_steps=1
        )
        train(config)
        manifest = json.loads((config.output_dir / "training_manifest.json").read_text())
        assert manifest["config"]["seed"] == seed and manifest["config"]["split_seed"] == 5
        splits.append(manifest["split_persons"])
    assert splits[0] == splits[1]
