"""Fixtures for the attack tests: a synthetic data file and a tiny TRIA config over it.

The tiny random BERT (`tiny_bert_dir`) is in tests/conftest.py: the web side's attack-run
tests train TRIA on it too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attacks.builders import synthetic_frame


@pytest.fixture
def synthetic_json(tmp_path: Path) -> Path:
    """Write the synthetic dataset as a reference-format JSON file."""
    path = tmp_path / "synthetic.json"
    synthetic_frame().to_json(path, orient="records")
    return path


@pytest.fixture
def tiny_config_values(tiny_bert_dir: Path, tmp_path: Path, synthetic_json: Path) -> dict:
    """Return config values for a seconds-long TRIA run on the synthetic data."""
    return {
        "data_file_path": str(synthetic_json),
        "base_model_name": str(tiny_bert_dir),
        "pretraining_epochs": 1,
        "pretraining_sliding_window": "64-16",
        "finetuning_epochs": 12,
        "finetuning_batch_size": 8,
        "finetuning_learning_rate": 2e-3,
        "finetuning_sliding_window": "32-8",
        "early_stopping_patience": 0,
        "precision": "fp32",
        "cache_dir": str(tmp_path / "cache"),
        "output_folder_path": str(tmp_path / "out"),
    }
