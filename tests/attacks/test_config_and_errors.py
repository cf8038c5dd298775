"""Config round trip and clear errors for bad input (nothing is written on failure)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attacks import AttackConfig, ConfigError, DatasetError, load_dataset
from attacks.cli import main as cli_main
from attacks.config import parse_sliding_window
from tests.attacks.builders import synthetic_frame


def test_config_round_trips_through_json(tmp_path: Path):
    config = AttackConfig(
        data_file_path="data.json",
        finetuning_sliding_window="200-50",
        finetuning_epochs=7,
        dev_set_column_name=None,
        seed=3,
    )
    path = tmp_path / "config.json"
    config.to_json(path)
    assert AttackConfig.from_json(path) == config


def test_reference_config_keys_load():
    reference = {
        "output_folder_path": "outputs/WikiActors/50_eval",
        "data_file_path": "data/WikiActors_50_eval.json",
        "individual_name_column": "name",
        "background_knowledge_column": "public_knowledge",
        "load_saved_pretreatment": True,
        "save_finetuning": True,
        "tokenization_block_size": 250,
        "pretraining_sliding_window": "512-128",
        "finetuning_sliding_window": "100-25",
        "dev_set_column_name": "dev_abstract",
    }
    config = AttackConfig.from_dict(reference)
    assert config.finetuning_window == (100, 25)
    assert config.pretraining_window == (512, 128)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"finetuning_epoch": 3}, "unknown config key(s): finetuning_epoch"),
        ({"finetuning_sliding_window": "100"}, "must look like 'N-M'"),
        ({"finetuning_sliding_window": "10-9"}, "N - M - 2 >= 1"),
        ({"precision": "fp8"}, "precision must be one of"),
        ({"finetuning_batch_size": 0}, "finetuning_batch_size must be between 1 and 4096, got 0"),
        ({"max_grad_norm": -1}, "max_grad_norm must be between 0 and"),
        ({"num_threads": 10000}, "num_threads must be between 0 and 256, got 10000"),
        ({"top_k": 100000000}, "top_k must be between 1 and 1000, got 100000000"),
        ({"finetuning_epochs": 10**6}, "finetuning_epochs must be between 0 and 200"),
        ({"seed": -1}, "seed must be between 0 and"),
        ({"finetuning_sliding_window": "100000-25"}, "4 <= N <= 512"),
        ({"finetuning_learning_rate": 5.0}, "finetuning_learning_rate must be between 0 and 1"),
    ],
)
def test_bad_config_raises_clear_error(values: dict, message: str):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        AttackConfig.from_dict(values)


@pytest.mark.parametrize(("length", "overlap"), [(100, 25), (512, 128), (4, 0)])
def test_parse_sliding_window(length: int, overlap: int):
    assert parse_sliding_window(f"{length}-{overlap}") == (length, overlap)


@pytest.mark.parametrize("spec", ["No", "no", " NO "])
def test_no_sliding_window_means_sentence_splitting(spec: str):
    assert parse_sliding_window(spec) is None
    config = AttackConfig(finetuning_sliding_window=spec, pretraining_sliding_window=spec)
    assert config.finetuning_window is None and config.pretraining_window is None


def _without(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    return frame.drop(columns=[column])


def _empty_background(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(public_knowledge=[np.nan, "", "  ", None])


def _duplicate_name(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(name=[frame.name[0], frame.name[0], frame.name[2], frame.name[3]])


@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (lambda f: _without(f, "public_knowledge"), "missing column"),
        (lambda f: _without(f, "name"), "missing column"),
        (_empty_background, "background knowledge column 'public_knowledge' is empty"),
        (_duplicate_name, "duplicate individual name"),
        (lambda f: f[["name", "public_knowledge"]], "no anonymization column"),
    ],
)
def test_bad_data_raises_clear_error_and_writes_nothing(corrupt, message: str, tmp_path: Path):
    data = tmp_path / "bad.csv"
    corrupt(synthetic_frame()).to_csv(data, index=False)
    with pytest.raises(DatasetError, match=message):
        load_dataset(data, AttackConfig())

    config = tmp_path / "config.json"
    config.write_text(json.dumps({"data_file_path": str(data), "cache_dir": ""}))
    out = tmp_path / "out"
    assert cli_main(["run", "--config", str(config), "--attack", "tfidf", "--out", str(out)]) == 2
    assert not out.exists()


def test_a_named_dev_column_must_exist_and_cannot_be_the_only_text(tmp_path: Path):
    config = AttackConfig(dev_set_column_name="dev_abstract")
    data = tmp_path / "bad.csv"
    _without(synthetic_frame(), "dev_abstract").to_csv(data, index=False)
    with pytest.raises(DatasetError, match="missing column"):
        load_dataset(data, config)
    synthetic_frame()[["name", "public_knowledge", "dev_abstract"]].to_csv(data, index=False)
    with pytest.raises(DatasetError, match="no anonymization column"):
        load_dataset(data, config)


def test_default_config_has_no_dev_set_like_the_reference(tmp_path: Path):
    data = tmp_path / "d.csv"
    _without(synthetic_frame(), "dev_abstract").to_csv(data, index=False)
    dataset = load_dataset(data, AttackConfig())
    assert AttackConfig().dev_set_column_name is None
    assert dataset.dev_set is None
    assert dataset.method_columns == ["clear_abstract", "masked_abstract"]


def test_cli_rejects_unknown_config_key_without_writing(tmp_path: Path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"data_file_path": "x.json", "learning_rate": 1e-3}))
    out = tmp_path / "out"
    assert cli_main(["run", "--config", str(config), "--out", str(out)]) == 2
    assert not out.exists()


def test_missing_data_file_is_a_clear_error(tmp_path: Path):
    with pytest.raises(DatasetError, match="data file not found"):
        load_dataset(tmp_path / "absent.json", AttackConfig())


def test_csv_and_json_load_the_same_dataset(tmp_path: Path):
    frame = synthetic_frame()
    frame.to_json(tmp_path / "d.json", orient="records")
    frame.to_csv(tmp_path / "d.csv", index=False)
    config = AttackConfig(dev_set_column_name="dev_abstract")
    from_json = load_dataset(tmp_path / "d.json", config)
    from_csv = load_dataset(tmp_path / "d.csv", config)
    assert from_json.background == from_csv.background
    assert from_json.method_columns == ["clear_abstract", "masked_abstract"]
    assert from_json.dev_set is not None and len(from_json.dev_set) == 4
