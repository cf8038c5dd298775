"""The Anonymizer: load the token classifier, find PSI spans, and replace them."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from anonymize.cleanup import clean_up_spans
from anonymize.encoding import EncodedText, encode_text, window_features
from anonymize.labels import CATEGORIES, NONE, validate_categories
from anonymize.placeholders import (
    Span,
    assign_placeholders,
    get_operator,
    render,
)
from anonymize.rules import apply_rules, resolve_rules
from anonymize.windows import Window, covering_windows, stitch_window_outputs
from model_runtime.batching import length_order
from model_runtime.int8 import int8_supported, quantize_linears
from model_runtime.precision import PRECISIONS, cpu_supports_bf16, resolve_precision

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "models" / "textwash-minilm"
# For a model saved without a calibrated threshold (`calibrate` writes `psi_threshold`).
DEFAULT_THRESHOLD = 0.5
DEFAULT_MAX_LENGTH = 256
DEFAULT_STRIDE = 192
# The anonymizer's inference precisions: the shared float ones plus int8 (per-channel int8
# weights in the encoder's Linear layers after the first, `model_runtime.int8`). "auto"
# picks int8 where torch has an x86 int8 engine, VNNI and native bf16 (attention, the first
# layer and the head run in bf16 autocast): less CPU per text than bf16 with the test F1
# within 0.003 (`benchmarks/anonymize_speed.py`).
ANONYMIZER_PRECISIONS = (*PRECISIONS, "int8")
# Texts whose windows are sorted by length together; batches within a group pad little.
LENGTH_GROUP_BATCHES = 16


def resolve_anonymizer_precision(precision: str) -> str:
    """Return "int8", "bf16" or "fp32" for the anonymizer's `precision` on this CPU."""
    if precision not in ANONYMIZER_PRECISIONS:
        choices = ", ".join(ANONYMIZER_PRECISIONS)
        raise ValueError(f"precision must be one of {choices}, not {precision!r}")
    # int8 was measured with attention and the head in bf16 autocast; with them in fp32 the
    # test F1 fell 0.005, so int8 needs native bf16 as well.
    int8_here = int8_supported() and cpu_supports_bf16()
    if precision == "int8" and not int8_here:
        raise RuntimeError("int8 needs torch's x86 int8 engine, VNNI and native bf16 here")
    if precision == "int8" or (precision == "auto" and int8_here):
        return "int8"
    return resolve_precision(precision)


def runs_in_int8(module_name: str) -> bool:
    """Return whether a Linear runs in int8: encoder layers after the first.

    The first layer and the classifier head stay in bf16 autocast: with the first layer in
    int8 too, one more test description leaked a name and dev weighted F1 fell 0.0013 more,
    for no measurable CPU gain (`benchmarks/RESULTS.md`, h25-anon).
    """
    name = f".{module_name}."
    return ".encoder." in name and ".encoder.layer.0." not in name


@dataclass
class AnonymizationResult:
    """The anonymized text and the spans (offsets into the original) that were replaced."""

    text: str
    spans: list[Span]

    def to_dict(self) -> dict[str, object]:
        """Return the fields the CLI adds to each output line."""
        return {"anonymized": self.text, "spans": [span.to_dict() for span in self.spans]}


@dataclass
class WordPredictions:
    """Per-word label probabilities of one text (rows follow `encoded.words`)."""

    encoded: EncodedText
    probabilities: np.ndarray


class LabelSpace:
    """Index arithmetic over the BIO label set of a saved model."""

    def __init__(self, id2label: dict[int, str]) -> None:
        """Precompute which label columns belong to which category."""
        self.id2label = {int(k): v for k, v in id2label.items()}
        self.none_id = next(i for i, label in self.id2label.items() if label == NONE)
        self.categories = [c for c in CATEGORIES if f"B-{c}" in self.id2label.values()]
        label2id = {label: i for i, label in self.id2label.items()}
        self.begin_ids = np.array([label2id[f"B-{c}"] for c in self.categories])
        self.inside_ids = np.array([label2id[f"I-{c}"] for c in self.categories])


def decode_spans(
    text: str,
    predictions: WordPredictions,
    labels: LabelSpace,
    entities: frozenset[str],
    threshold: float,
) -> list[Span]:
    """Group PSI words into spans.

    A word is PSI when P(not NONE) >= threshold (lower threshold = more masking); its category
    is the most probable one. Adjacent PSI words of one category join a span unless the model
    says the second begins a new item (B more likely than I).
    """
    words = predictions.encoded.words
    if not words:
        return []
    probs = predictions.probabilities
    begin = probs[:, labels.begin_ids]
    inside = probs[:, labels.inside_ids]
    category_probs = begin + inside
    best = category_probs.argmax(axis=1)
    psi = 1.0 - probs[:, labels.none_id]
    spans: list[Span] = []
    current: list[int] = []  # word positions of the open span

    def close() -> None:
        if not current:
            return
        category = labels.categories[best[current[0]]]
        start, end = words[current[0]].start, words[current[-1]].end
        score = float(np.mean([category_probs[i, best[current[0]]] for i in current]))
        spans.append(Span(start, end, text[start:end], category, "", score))
        current.clear()

    for position in range(len(words)):
        category_index = best[position]
        is_psi = psi[position] >= threshold and labels.categories[category_index] in entities
        if not is_psi:
            close()
            continue
        continues = (
            current
            and current[-1] == position - 1
            and best[current[-1]] == category_index
            and inside[position, category_index] >= begin[position, category_index]
        )
        if not continues:
            close()
        current.append(position)
    close()
    return spans


class Anonymizer:
    """Find potentially sensitive information with a token classifier and replace it."""

    def __init__(
        self,
        model,
        tokenizer,
        model_version: str,
        max_length: int = DEFAULT_MAX_LENGTH,
        stride: int = DEFAULT_STRIDE,
        threshold: float = DEFAULT_THRESHOLD,
        precision: str = "fp32",
        rules: str | Sequence[str] | None = "default",
    ) -> None:
        """Wrap a loaded model; use `Anonymizer.load` to get the shipped one.

        `precision` "bf16" runs the matmuls in bf16 autocast (the shipped model was trained
        that way); "int8" quantizes the encoder's Linear layers after the first layer of
        `model` in place (CPU only; the rest in bf16 autocast); "auto" picks int8 where
        torch has an x86 int8 engine, VNNI and native bf16, else bf16 where the CPU computes
        it natively, else fp32. `rules` names the deterministic guarantees of
        `anonymize.rules` added to the model's spans ("default", "all", "none" or a list of
        names).
        """
        self.model = model
        self.tokenizer = tokenizer
        self.model_version = model_version
        self.window_body = max_length - 2  # room for [CLS] and [SEP]
        self.stride = min(stride, self.window_body)
        self.threshold = threshold
        self.precision = resolve_anonymizer_precision(precision)
        if self.precision == "int8":
            quantize_linears(model, runs_in_int8)
        self.labels = LabelSpace(model.config.id2label)
        self.rules = resolve_rules(rules)
        # Models trained with the capitalisation feature read it from token type ids.
        self.case_feature = bool(getattr(model.config, "case_feature", False))

    @classmethod
    def load(
        cls,
        path: str | Path | None = None,
        *,
        threads: int | None = None,
        precision: str = "auto",
        **options,
    ) -> Anonymizer:
        """Load a saved model folder (default: the shipped textwash-minilm) from local disk.

        `precision="auto"` runs the encoder in int8 where torch has an x86 int8 engine (test F1
        within 0.003 of bf16, `benchmarks/anonymize_speed.py`), else bf16 autocast where the
        CPU has native bf16 (1.3x faster than fp32 with the same dev scores).
        """
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from transformers import AutoModelForTokenClassification, AutoTokenizer

        if threads:
            torch.set_num_threads(threads)
        model_dir = Path(path) if path is not None else DEFAULT_MODEL_DIR
        if not (model_dir / "config.json").exists():
            raise FileNotFoundError(f"no model at {model_dir} (config.json missing)")
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        # Weights ship in fp16 to stay small; CPUs compute faster and exactly in fp32.
        model = AutoModelForTokenClassification.from_pretrained(model_dir, dtype=torch.float32)
        model.eval()
        # A model may carry the threshold chosen for it on the dev split.
        options.setdefault("threshold", getattr(model.config, "psi_threshold", DEFAULT_THRESHOLD))
        return cls(model, tokenizer, model_version_of(model_dir), precision=precision, **options)

    def predict_words(self, texts: Sequence[str], batch_size: int = 16) -> list[WordPredictions]:
        """Return per-word label probabilities, running all windows of `texts` in batches."""
        import torch

        encoded = [encode_text(self.tokenizer, text) for text in texts]
        jobs: list[tuple[int, Window]] = []
        for text_index, item in enumerate(encoded):
            for window in covering_windows(len(item.input_ids), self.window_body, self.stride):
                if window.end > window.start:
                    jobs.append((text_index, window))
        outputs: dict[tuple[int, int], np.ndarray] = {}
        order = length_order([w.end - w.start for _, w in jobs])
        for batch_start in range(0, len(order), batch_size):
            batch = [jobs[j] for j in order[batch_start : batch_start + batch_size]]
            features = [
                window_features(self.tokenizer, encoded[t], w, self.case_feature) for t, w in batch
            ]
            inputs = dict(self.tokenizer.pad(features, return_tensors="pt"))
            # The model may sit on a GPU while it trains (dev scoring in anonymize.trainer).
            device = getattr(self.model, "device", "cpu")
            inputs = {name: tensor.to(device) for name, tensor in inputs.items()}
            with (
                torch.inference_mode(),
                torch.autocast("cpu", torch.bfloat16, enabled=self.precision != "fp32"),
            ):
                logits = self.model(**inputs).logits
            probs = torch.softmax(logits.float(), dim=-1).cpu().numpy()
            for r, (t, w) in enumerate(batch):
                outputs[(t, w.start)] = probs[r, 1 : 1 + w.end - w.start]
        results = []
        for text_index, item in enumerate(encoded):
            windows = [w for t, w in jobs if t == text_index]
            token_probs = stitch_window_outputs(
                len(item.input_ids), windows, [outputs[(text_index, w.start)] for w in windows]
            )
            if item.words and len(token_probs):
                word_probs = token_probs[item.word_first_token]
            else:
                word_probs = np.zeros((len(item.words), len(self.labels.id2label)), np.float32)
            results.append(WordPredictions(item, word_probs))
        return results

    def find_spans(
        self, text: str, predictions: WordPredictions, entities: frozenset[str], threshold: float
    ) -> list[Span]:
        """Return the PSI spans of the selected categories, consistent across mentions."""
        every_category = frozenset(self.labels.categories)
        spans = decode_spans(text, predictions, self.labels, every_category, threshold)
        spans = apply_rules(text, clean_up_spans(text, spans), self.rules)
        return [s for s in spans if s.category in entities]

    def anonymize(
        self,
        text: str,
        entities: Sequence[str] | None = None,
        threshold: float | None = None,
        operator: str = "placeholder",
    ) -> AnonymizationResult:
        """Return `text` with every PSI item of the selected categories replaced."""
        return self.anonymize_many(
            [text], entities=entities, threshold=threshold, operator=operator
        )[0]

    def anonymize_many(
        self,
        texts: Sequence[str],
        batch_size: int = 16,
        progress: Callable[[int, int], None] | None = None,
        entities: Sequence[str] | None = None,
        threshold: float | None = None,
        operator: str = "placeholder",
    ) -> list[AnonymizationResult]:
        """Anonymize many texts; `progress(done, total)` is called after each chunk."""
        selected = validate_categories(entities)
        get_operator(operator)  # fail before any compute on a bad operator name
        cutoff = self.threshold if threshold is None else threshold
        if not 0.0 <= cutoff <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {cutoff}")
        results: list[AnonymizationResult] = []
        # Larger groups pad less (12 % of tokens were padding with groups of 4 batches, 3 %
        # with 16); each group still reports progress.
        chunk = max(batch_size, 1) * LENGTH_GROUP_BATCHES
        for start in range(0, len(texts), chunk):
            part = texts[start : start + chunk]
            for text, predictions in zip(part, self.predict_words(part, batch_size), strict=True):
                spans = self.find_spans(text, predictions, selected, cutoff)
                spans = assign_placeholders(spans, operator)
                results.append(AnonymizationResult(render(text, spans, operator), spans))
            if progress is not None:
                progress(len(results), len(texts))
        return results


def saved_threshold(model_dir: Path | None = None) -> float:
    """Return the threshold a saved model uses by default (its config's `psi_threshold`).

    The shipped model's is chosen on the dev split (`python -m anonymize calibrate`); a model
    saved without one uses DEFAULT_THRESHOLD, as `Anonymizer.load` does.
    """
    config_path = (model_dir or DEFAULT_MODEL_DIR) / "config.json"
    try:
        config = json.loads(config_path.read_text())
    except (OSError, ValueError):
        return DEFAULT_THRESHOLD
    return float(config.get("psi_threshold", DEFAULT_THRESHOLD))


def model_version_of(model_dir: Path) -> str:
    """Return '<folder name>-<first 8 hex of the weights' sha256>' to record with outputs."""
    weights = model_dir / "model.safetensors"
    digest = hashlib.sha256()
    if weights.exists():
        with weights.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return f"{model_dir.name}-{digest.hexdigest()[:8]}"
