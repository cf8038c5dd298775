"""TRIA's training on ``transformers.Trainer``: arguments, callbacks, TRIR after every epoch.

The Trainer brings what the reference's own ``tri.py`` used it for (AdamW, a constant rate,
gradient clipping, dev selection with early stopping) plus checkpoint/resume, bf16 autocast,
length-grouped batches and multi-process training (``torchrun``/``accelerate launch``). What
is TRIA's own lives here: TRIR per method after every epoch, scored on whole documents by
summing window logits (the masked-only MLM loss is pre-training's, ``attacks.tria.pretraining``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import SequentialSampler
from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

from attacks.base import ProgressCallback
from attacks.config import AttackConfig
from attacks.tria.model import autocast_dtype
from attacks.windows import Windows


def fused_adamw_available(device: torch.device) -> bool:
    """Return whether torch has a fused AdamW kernel for ``device`` (CPU since torch 2.4)."""
    try:
        probe = torch.nn.Parameter(torch.zeros(1, device=device))
        torch.optim.AdamW([probe], fused=True)
    except (RuntimeError, TypeError, ValueError):
        return False
    return True


def training_arguments(
    config: AttackConfig,
    output_dir: str | Path,
    device: torch.device,
    *,
    learning_rate: float = 5e-5,
    epochs: int = 1,
    batch_size: int = 8,
    **overrides: Any,
) -> TrainingArguments:
    """Return the reference's optimisation as Trainer arguments.

    AdamW with betas (0.9, 0.999), eps 1e-6 and no weight decay under a constant rate, as
    the reference's ``tri.py``; gradient clipping at ``max_grad_norm`` (the Trainer default
    the reference inherits). The fused AdamW kernel computes the same update in one pass
    (+3 % fine-tuning windows/s, benchmarks/tria_levers.py). bf16 autocast follows
    ``config.precision`` on ``device``. Checkpoints are written every
    epoch so a crashed run resumes; the caller deletes them once training has finished.
    """
    values: dict[str, Any] = {
        "output_dir": str(output_dir),
        "learning_rate": learning_rate,
        "num_train_epochs": epochs,
        "per_device_train_batch_size": batch_size,
        "per_device_eval_batch_size": config.eval_batch_size,
        "adam_beta1": 0.9,
        "adam_beta2": 0.999,
        "adam_epsilon": 1e-6,
        "weight_decay": 0.0,
        "lr_scheduler_type": "constant",
        "max_grad_norm": config.max_grad_norm,
        "optim": "adamw_torch_fused" if fused_adamw_available(device) else "adamw_torch",
        "bf16": autocast_dtype(config.precision, device) is not None,
        "use_cpu": device.type == "cpu",
        "train_sampling_strategy": "group_by_length" if config.length_bucketing else "random",
        "seed": config.seed,
        "save_strategy": "epoch",
        "save_total_limit": 1,
        "logging_strategy": "epoch",
        "report_to": "none",
        "disable_tqdm": True,
        "remove_unused_columns": False,
        "dataloader_pin_memory": device.type == "cuda",
    }
    values.update(overrides)
    return TrainingArguments(**values)


def window_dataset(windows: Windows, labels: list[int] | None = None) -> list[dict[str, Any]]:
    """Return the windows as Trainer samples (``input_ids``, plus ``labels`` to train)."""
    if labels is None:
        return [{"input_ids": ids} for ids in windows.input_ids]
    return [
        {"input_ids": ids, "labels": label}
        for ids, label in zip(windows.input_ids, labels, strict=True)
    ]


class ProgressReporter(TrainerCallback):
    """Report optimisation steps to a ``progress(stage, done, total)`` callback."""

    def __init__(self, progress: ProgressCallback | None, stage: str) -> None:
        self.progress = progress
        self.stage = stage

    def on_step_end(self, args, state, control, **kwargs):
        if self.progress and state.is_world_process_zero:
            self.progress(self.stage, state.global_step, state.max_steps)


class EpochTimer(TrainerCallback):
    """Time each epoch's training steps (evaluation and checkpointing excluded)."""

    def __init__(self) -> None:
        self.started = 0.0
        self.last_seconds = 0.0
        self.total_seconds = 0.0
        self.epochs = 0

    def on_epoch_begin(self, args, state, control, **kwargs):
        self.started = time.perf_counter()

    def on_epoch_end(self, args, state, control, **kwargs):
        self.last_seconds = time.perf_counter() - self.started
        self.total_seconds += self.last_seconds
        self.epochs += 1


class TRIATrainer(Trainer):
    """Train and predict TRIA's models; score every evaluation set after each epoch.

    ``evaluate`` returns ``eval_<column>`` = TRIR for each set, so the Trainer's own
    ``metric_for_best_model``, ``load_best_model_at_end`` and ``EarlyStoppingCallback`` pick
    the epoch, as the reference's Trainer does with dev accuracy. TRIR needs documents, not
    windows: ``score_sets`` sums window logits per document.
    """

    def __init__(
        self,
        *args: Any,
        score_sets: Callable[[Trainer], dict[str, Any]] | None = None,
        epoch_timer: EpochTimer | None = None,
        on_epoch: Callable[[dict[str, Any], dict[str, Any]], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        # Progress goes through ProgressReporter; the Trainer's printer would dump log dicts.
        self.remove_callback(PrinterCallback)
        self.score_sets = score_sets
        self.epoch_timer = epoch_timer
        self.on_epoch = on_epoch
        self.epoch_predictions: dict[int, dict[str, Any]] = {}

    def _get_eval_sampler(self, eval_dataset):
        """Keep prediction in the dataset's order.

        Under ``group_by_length`` the Trainer also shuffles evaluation batches by length and
        returns predictions in that shuffled order, which would pair window logits with the
        wrong documents; ``attacks.tria.finetuning.predict_window_logits`` groups lengths itself.
        """
        if self.args.world_size <= 1:
            return SequentialSampler(eval_dataset)
        return None

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix: str = "eval"):
        """Score every set with the current model; log TRIR per set and the epoch's timings."""
        from attacks.metrics import trir

        if self.score_sets is None:
            return super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
        start = time.perf_counter()
        predictions = self.score_sets(self)
        epoch = round(self.state.epoch or 0)
        self.epoch_predictions[epoch] = predictions
        metrics = {f"{metric_key_prefix}_{c}": trir(p).trir_pct for c, p in predictions.items()}
        metrics[f"{metric_key_prefix}_seconds"] = time.perf_counter() - start
        metrics["train_seconds"] = self.epoch_timer.last_seconds if self.epoch_timer else 0.0
        self.log(metrics)
        if self.on_epoch:
            self.on_epoch(self.state.log_history[-1], predictions)
        self.control = self.callback_handler.on_evaluate(
            self.args, self.state, self.control, metrics
        )
        return metrics
