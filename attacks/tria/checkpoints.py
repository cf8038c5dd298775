"""Where TRIA's pre-trained models and crashed runs' checkpoints live: content-keyed folders.

A key hashes everything a stage's result depends on (base model, settings, windows), so a
rerun with the same inputs reuses the result and a changed input never does.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from attacks.config import AttackConfig
from attacks.runtime import resolve_device
from attacks.tria.model import training_attention
from attacks.windows import Windows


def windows_digest(windows: Windows) -> str:
    """Return a hash of the windows' token ids (a cache key part)."""
    digest = hashlib.sha256()
    for ids in windows.input_ids:
        digest.update(np.asarray(ids, dtype=np.int32).tobytes())
        digest.update(b"|")
    return digest.hexdigest()


def content_key(**values: Any) -> str:
    """Return a short hash of ``values`` (JSON), naming a cache or checkpoint directory."""
    text = json.dumps(values, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def pretraining_cache_dir(base_model: str, windows: Windows, config: AttackConfig) -> Path | None:
    """Return where the pre-trained model for these inputs is cached (None = no cache)."""
    if not config.cache_dir:
        return None
    key = content_key(
        base_model=str(Path(base_model).resolve()),
        epochs=config.pretraining_epochs,
        batch_size=config.pretraining_batch_size,
        lr=config.pretraining_learning_rate,
        mlm_probability=config.pretraining_mlm_probability,
        head_warmup=[
            config.pretraining_head_warmup_epochs,
            config.pretraining_head_warmup_learning_rate,
        ],
        max_grad_norm=config.max_grad_norm,
        seed=config.seed,
        precision=config.precision,
        bucketing=config.length_bucketing,
        attention=training_attention(resolve_device()),
        windows=windows_digest(windows),
    )
    return Path(config.cache_dir) / "pretrained" / key


def finetuning_checkpoint_dir(
    config: AttackConfig,
    encoder_dir: str,
    windows: Windows,
    labels: list[int],
    eval_windows: dict[str, Windows],
    dev_column: str | None,
) -> Path | None:
    """Return where a fit with these inputs checkpoints each epoch (None = no cache).

    A crashed fit with the same inputs resumes from its last epoch's checkpoint.
    """
    if not config.cache_dir:
        return None
    key = content_key(
        encoder=str(Path(encoder_dir).resolve()),
        config={k: v for k, v in config.to_dict().items() if k != "output_folder_path"},
        windows=windows_digest(windows),
        labels=labels,
        eval_sets={c: windows_digest(w) for c, w in eval_windows.items()},
        dev=dev_column,
    )
    return Path(config.cache_dir) / "finetuning-checkpoints" / key


def resume_checkpoint(directory: Path | None) -> str | None:
    """Return the newest Trainer checkpoint in ``directory`` (a crashed run's), if any."""
    from transformers.trainer_utils import get_last_checkpoint

    if directory is None or not directory.is_dir():
        return None
    return get_last_checkpoint(str(directory))
