"""TRIA's model: the base checkpoint, the autocast precision and the attention kernel."""

from __future__ import annotations

from pathlib import Path

import torch

from attacks.config import AttackConfig
from model_runtime.base_model import default_base_model
from model_runtime.precision import resolve_precision


def resolve_base_model(config: AttackConfig) -> str:
    """Return the base model directory, refusing hub names (the attack runs offline)."""
    path = config.base_model_name or default_base_model()
    if not Path(path).is_dir():
        raise FileNotFoundError(
            f"base model {path!r} is not a local directory; pass a local BERT-family model path"
        )
    return path


def autocast_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    """Return the autocast dtype for ``precision`` on ``device`` (None = full fp32)."""
    return torch.bfloat16 if resolve_precision(precision, device.type) == "bf16" else None


def training_attention(device: torch.device) -> str:
    """Return the attention kernel for training on ``device``.

    With attention dropout on (BERT's 0.1) or a padding mask, PyTorch's CPU SDPA falls back
    to its unfused math path, which is slower than transformers' eager attention: on
    WikiActors, 512-token MLM windows train 1.4-1.5x and 100-token fine-tuning windows
    1.1-1.3x faster with eager, and prediction is as fast either way
    (``benchmarks/tria_levers.py --only attention``). The math is the same; on a GPU SDPA's
    fused kernels win.
    """
    return "sdpa" if device.type == "cuda" else "eager"
