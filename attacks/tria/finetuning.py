"""TRIA's fine-tuning and prediction (Sect. 5.5): a classifier over windows, scored per document.

Each window is classified; a document's scores are the sum of its windows' logits. After
every epoch each evaluation set is scored (TRIR per method per epoch) and the dev set picks
the epoch that is kept.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import DataCollatorWithPadding, EarlyStoppingCallback, Trainer

from attacks.base import ProgressCallback
from attacks.config import AttackConfig
from attacks.prediction import Prediction, predictions_from_scores
from attacks.runtime import is_main_process, set_seed, wait_for_everyone
from attacks.timing import StageTimer
from attacks.tria.checkpoints import resume_checkpoint
from attacks.tria.trainer import (
    EpochTimer,
    ProgressReporter,
    TRIATrainer,
    training_arguments,
    window_dataset,
)
from attacks.windows import Windows
from model_runtime.batching import length_order


def predict_window_logits(trainer: Trainer, windows: Windows, bucketing: bool) -> np.ndarray:
    """Return the classifier's logits for every window (n_windows x n_labels).

    With ``bucketing`` the windows are fed longest first, so each batch pads to nearly its own
    length; the logits come back in the windows' order.
    """
    lengths = [len(ids) for ids in windows.input_ids]
    order = length_order(lengths, longest_first=True) if bucketing else list(range(len(windows)))
    dataset = [{"input_ids": windows.input_ids[i]} for i in order]
    logits = np.asarray(trainer.predict(dataset).predictions, dtype=np.float32)
    restored = np.empty_like(logits)
    restored[order] = logits
    return restored


def prediction_trainer(
    model: torch.nn.Module,
    tokenizer: Any,
    config: AttackConfig,
    device: torch.device,
    scratch_dir: str | Path,
) -> Trainer:
    """Return a Trainer that only predicts (``eval_batch_size`` batches).

    The Trainer creates its output directory even to predict: ``scratch_dir`` is one the
    caller removes afterwards.
    """
    args = training_arguments(
        config,
        scratch_dir,
        device,
        save_strategy="no",
    )
    return TRIATrainer(model=model, args=args, data_collator=DataCollatorWithPadding(tokenizer))


def document_logits(logits: np.ndarray, doc_index: Sequence[int], n_documents: int) -> np.ndarray:
    """Sum window logits per document (Sect. 5.5: the sum keeps confident windows decisive)."""
    summed = np.zeros((n_documents, logits.shape[1]), dtype=np.float64)
    np.add.at(summed, np.asarray(doc_index, dtype=np.int64), logits)
    return summed


@dataclass
class EvalSet:
    """Hold a pretreated, windowed document set evaluated after every epoch."""

    doc_ids: list[str]
    true_names: dict[str, str]
    windows: Windows


@dataclass
class FinetuneResult:
    """Hold the fine-tuning history and the predictions of the selected epoch."""

    history: list[dict[str, Any]] = field(default_factory=list)
    best_epoch: int = 0
    best_predictions: dict[str, list[Prediction]] = field(default_factory=dict)


def evaluate_sets(
    trainer: Trainer, eval_sets: dict[str, EvalSet], names: list[str], config: AttackConfig
) -> dict[str, list[Prediction]]:
    """Predict every evaluation set with the trainer's current model."""
    results = {}
    for column, eval_set in eval_sets.items():
        logits = predict_window_logits(trainer, eval_set.windows, config.length_bucketing)
        scores = document_logits(logits, eval_set.windows.doc_index, len(eval_set.doc_ids))
        results[column] = predictions_from_scores(
            eval_set.doc_ids, scores, names, eval_set.true_names, config.top_k
        )
    return results


def epoch_records(log_history: list[dict[str, Any]], columns: Sequence[str]) -> list[dict]:
    """Return one record per evaluated epoch (loss, seconds, TRIR per set) from the Trainer's log.

    The log survives a resume (it is saved with each checkpoint), so the per-epoch table
    covers the epochs run before a crash too.
    """
    records = []
    loss = None
    for entry in log_history:
        if "loss" in entry:
            loss = entry["loss"]
        if "train_seconds" in entry:
            records.append(
                {
                    "epoch": round(entry["epoch"]),
                    "step": entry["step"],
                    "train_loss": loss,
                    "train_seconds": entry["train_seconds"],
                    "eval_seconds": entry["eval_seconds"],
                    "trir": {c: entry[f"eval_{c}"] for c in columns},
                }
            )
    return records


def finetune_classifier(
    model: torch.nn.Module,
    windows: Windows,
    labels: Sequence[int],
    names: list[str],
    config: AttackConfig,
    device: torch.device,
    tokenizer: Any,
    eval_sets: dict[str, EvalSet] | None = None,
    dev_column: str | None = None,
    progress: ProgressCallback | None = None,
    timer: StageTimer | None = None,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
    checkpoint_dir: Path | None = None,
) -> FinetuneResult:
    """Train the individual classification layer and encoder with cross-entropy.

    After each epoch every evaluation set is scored (TRIR per method per epoch). The epoch
    with the best dev TRIR is kept (the first one on ties, as the reference's Trainer), and
    training stops after ``early_stopping_patience`` epochs without dev improvement. Without
    a dev set the last epoch is kept. ``checkpoint_dir`` (content-keyed by the caller) holds
    a checkpoint per epoch, resumed from after a crash and removed once training is done.
    """
    eval_sets = eval_sets or {}
    columns = list(eval_sets)
    selecting = dev_column is not None and dev_column in eval_sets
    set_seed(config.seed)
    output_dir = checkpoint_dir or Path(config.output_folder_path) / "finetuning-checkpoints"
    args = training_arguments(
        config,
        output_dir,
        device,
        learning_rate=config.finetuning_learning_rate,
        epochs=config.finetuning_epochs,
        batch_size=config.finetuning_batch_size,
        eval_strategy="epoch" if eval_sets else "no",
        save_strategy="epoch" if checkpoint_dir or selecting else "no",
        load_best_model_at_end=selecting,
        metric_for_best_model=dev_column if selecting else None,
        greater_is_better=True,
    )
    epoch_timer = EpochTimer()
    callbacks: list[Any] = [ProgressReporter(progress, "finetuning"), epoch_timer]
    if selecting and config.early_stopping_patience:
        callbacks.append(EarlyStoppingCallback(config.early_stopping_patience))

    def report_epoch(_entry: dict[str, Any], _predictions: dict[str, Any]) -> None:
        record = epoch_records(trainer.state.log_history, columns)[-1]
        if on_epoch:
            on_epoch(record)
        if progress:
            progress("epochs", record["epoch"], config.finetuning_epochs)

    trainer = TRIATrainer(
        model=model,
        args=args,
        train_dataset=window_dataset(windows, list(labels)),
        # Any non-empty set satisfies the Trainer's check; evaluate() scores all of eval_sets.
        eval_dataset=window_dataset(next(iter(eval_sets.values())).windows) if eval_sets else None,
        data_collator=DataCollatorWithPadding(tokenizer),
        callbacks=callbacks,
        score_sets=lambda t: evaluate_sets(t, eval_sets, names, config),
        epoch_timer=epoch_timer,
        on_epoch=report_epoch,
    )
    trainer.train(resume_from_checkpoint=resume_checkpoint(checkpoint_dir))
    wait_for_everyone()
    if is_main_process():
        shutil.rmtree(output_dir, ignore_errors=True)

    result = FinetuneResult(history=epoch_records(trainer.state.log_history, columns))
    epochs_run = round(trainer.state.epoch or 0)
    result.best_epoch = epochs_run
    if selecting and trainer.state.best_global_step:
        steps = {r["step"]: r["epoch"] for r in result.history}
        result.best_epoch = steps.get(trainer.state.best_global_step, epochs_run)
    result.best_predictions = trainer.epoch_predictions.get(result.best_epoch) or (
        evaluate_sets(trainer, eval_sets, names, config)
    )
    if timer:
        # Epochs trained by this process (a resumed run's earlier epochs are not timed here).
        timer.record(
            "finetuning",
            epoch_timer.total_seconds,
            len(windows) * epoch_timer.epochs,
            epochs=epochs_run,
        )
        if result.history:
            timer.record(
                "epoch_evaluation",
                sum(r["eval_seconds"] for r in result.history),
                sum(len(s.windows) for s in eval_sets.values()) * len(result.history),
            )
    return result
