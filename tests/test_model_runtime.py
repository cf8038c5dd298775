"""The facts both model libraries share: precision, the base model, length-grouped order."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_runtime import precision
from model_runtime.base_model import default_base_model
from model_runtime.batching import length_order


def test_length_order_groups_similar_lengths_and_keeps_ties_in_order():
    lengths = [3, 1, 3, 2, 1]
    assert length_order(lengths) == [1, 4, 3, 0, 2]
    assert length_order(lengths, longest_first=True) == [0, 2, 3, 1, 4]
    assert length_order([]) == []


def test_bf16_on_a_gpu_follows_the_gpu_not_the_cpu(monkeypatch, claim_cpu):
    torch = pytest.importorskip("torch")
    claim_cpu("bf16")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)
    assert precision.resolve_precision("auto", "cpu") == "bf16"
    assert precision.resolve_precision("auto", "cuda") == "fp32"
    with pytest.raises(RuntimeError, match="this GPU has no native bf16"):
        precision.resolve_precision("bf16", "cuda")


def test_the_base_model_is_a_local_folder_with_a_config():
    assert (Path(default_base_model()) / "config.json").is_file()


def test_the_cpu_override_claims_units_and_rejects_unknown_names(claim_cpu):
    from model_runtime.hardware import CpuFeatures, cpu_features

    claim_cpu("none")
    assert cpu_features() == CpuFeatures(bf16=False, vnni=False)
    claim_cpu("BF16, vnni")
    assert cpu_features() == CpuFeatures(bf16=True, vnni=True)
    claim_cpu("avx9")
    with pytest.raises(ValueError, match="MODEL_RUNTIME_CPU must be"):
        cpu_features()
    claim_cpu("host")
    assert isinstance(cpu_features().bf16, bool)  # the real CPU answers, whatever it has
