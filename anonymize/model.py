"""The Anonymizer: load the token classifier, find PSI spans, and replace them."""

from __future__ import annotations

import bisect
import hashlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from anonymize.encoding import EncodedText, encode_text
from anonymize.labels import CATEGORIES, NONE, validate_categories
from anonymize.placeholders import (
    Span,
    assign_placeholders,
    get_operator,
    normalise_value,
    render,
)
from anonymize.rules import apply_rules, resolve_rules
from anonymize.windows import Window, sliding_windows, stitch_window_outputs

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "models" / "textwash-minilm"
DEFAULT_THRESHOLD = 0.5
DEFAULT_MAX_LENGTH = 256
DEFAULT_STRIDE = 192
PRECISIONS = ("auto", "fp32", "bf16")


def cpu_supports_bf16() -> bool:
    """Return whether this CPU computes bf16 matmuls natively (AVX512-BF16 or AMX)."""
    import torch

    return torch.backends.mkldnn.is_available() and bool(
        torch.ops.mkldnn._is_mkldnn_bf16_supported()
    )


def resolve_precision(precision: str) -> str:
    """Map "auto" to bf16 where the CPU has native bf16 and fp32 elsewhere."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if precision == "auto":
        return "bf16" if cpu_supports_bf16() else "fp32"
    if precision == "bf16" and not cpu_supports_bf16():
        raise RuntimeError("bf16 requested but this CPU has no native bf16 (AVX512-BF16/AMX)")
    return precision


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


# Categories whose detected values are also replaced where the model missed a repeat mention.
# Numbers, dates and pronouns are left out: "two" or "he" recurring is not the same PSI item.
PROPAGATED_CATEGORIES = frozenset(
    {
        "PERSON_FIRSTNAME",
        "PERSON_LASTNAME",
        "LOCATION",
        "ORGANIZATION",
        "OCCUPATION",
        "OTHER_IDENTIFYING_ATTRIBUTE",
    }
)


def harmonise_mentions(text: str, spans: list[Span]) -> list[Span]:
    """Give all mentions of one value one category, and catch the mentions the model missed.

    The model decides per mention, so "Lysa" may come out as a first name once and a last name
    later, or be missed the second time. Textwash replaces every occurrence of a detected value
    (paper, section 2.4); we do the same: the category with the highest summed score wins for
    the value, and further whole-word occurrences (any case, except lower-case common English
    words such as "black") become spans too.
    """
    from wordfreq import zipf_frequency

    from anonymize.alignment import COMMON_WORD_ZIPF

    by_value: dict[str, list[Span]] = {}
    for span in spans:
        by_value.setdefault(normalise_value(span.text), []).append(span)
    category_of_value = {}
    for value, group in by_value.items():
        totals: dict[str, float] = {}
        for span in group:
            totals[span.category] = totals.get(span.category, 0.0) + span.score
        category_of_value[value] = max(totals, key=totals.__getitem__)
    result = [replace(s, category=category_of_value[normalise_value(s.text)]) for s in spans]
    taken = sorted((s.start, s.end) for s in result)
    for value, category in category_of_value.items():
        if category not in PROPAGATED_CATEGORIES or len(value) < 2:
            continue
        score = max(span.score for span in by_value[value])
        pattern = r"(?<!\w)" + r"\s+".join(map(re.escape, value.split())) + r"(?!\w)"
        for match in re.finditer(pattern, text, flags=re.IGNORECASE):
            found = match.group()
            if found.islower() and zipf_frequency(found, "en") >= COMMON_WORD_ZIPF:
                continue
            position = bisect.bisect_left(taken, (match.start(), match.start()))
            neighbours = taken[max(position - 1, 0) : position + 1]
            if any(start < match.end() and match.start() < end for start, end in neighbours):
                continue
            bisect.insort(taken, (match.start(), match.end()))
            result.append(Span(match.start(), match.end(), found, category, "", score))
    return sorted(result, key=lambda span: span.start)


_LETTERS_AFTER_DIGIT = re.compile(r"(?<=\d)[^\W\d_]+$")


def numbers_keep_their_suffix(text: str, spans: list[Span]) -> list[Span]:
    """Leave letters glued to a number outside its NUMERIC placeholder, as Textwash does.

    Textwash replaces a number's digits and keeps an ordinal or unit suffix ("5th" ->
    "NUMERIC_1th", "6ft" -> "NUMERIC_2ft"): 224 of the 225 such suffixes in the train and
    dev splits are outside the NUMERIC placeholder. (DATE placeholders take theirs: "1960s".)
    The model sometimes tags the suffix too, which splits the value from its mentions.
    """
    kept: list[Span] = []
    for span in spans:
        if span.category == "NUMERIC":
            glued = span.start > 0 and text[span.start - 1].isdigit()
            if glued and span.text.isalpha():
                continue  # a suffix tagged on its own
            suffix = _LETTERS_AFTER_DIGIT.search(span.text)
            if suffix:
                end = span.start + suffix.start()
                span = replace(span, end=end, text=text[span.start : end])
        kept.append(span)
    return kept


# A capitalised word glued by a hyphen to a detected name part: "Okafor" in "Okafor-Smythe".
_HYPHEN_BEFORE = re.compile(r"([^\W\d_]+)-$")
_HYPHEN_AFTER = re.compile(r"-([^\W\d_]+)")
NAME_CATEGORIES = frozenset({"PERSON_FIRSTNAME", "PERSON_LASTNAME"})


def join_hyphenated_names(text: str, spans: list[Span]) -> list[Span]:
    """Add the missed halves of double-barrelled names as surname spans.

    The model decides per word and has never seen a hyphenated name (the study corpus has
    none), so it may replace "Smythe" in "Okafor-Smythe" and leave "Okafor". A capitalised
    word joined by a hyphen (no spaces) to a name span is part of the same name.
    """
    taken = {(s.start, s.end) for s in spans}
    added: list[Span] = []
    for span in spans:
        if span.category not in NAME_CATEGORIES:
            continue
        glued_before = span.start > 1 and text[span.start - 1] == "-"
        before = _HYPHEN_BEFORE.search(text, 0, span.start) if glued_before else None
        after = _HYPHEN_AFTER.match(text, span.end)
        candidates = []
        if before and (before.start() == 0 or not text[before.start() - 1].isalnum()):
            candidates.append((before.start(1), before.end(1)))
        if after:
            start, end = after.span(1)
            if end == len(text) or not text[end].isalnum():
                candidates.append((start, end))
        for start, end in candidates:
            word = text[start:end]
            overlaps = any(s.start < end and start < s.end for s in (*spans, *added))
            if word[:1].isupper() and (start, end) not in taken and not overlaps:
                added.append(Span(start, end, word, "PERSON_LASTNAME", "", span.score))
    return sorted([*spans, *added], key=lambda span: span.start)


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
        that way); "auto" picks it where the CPU computes bf16 natively. `rules` names the
        deterministic guarantees of `anonymize.rules` added to the model's spans ("default",
        "all", "none" or a list of names).
        """
        self.model = model
        self.tokenizer = tokenizer
        self.model_version = model_version
        self.window_body = max_length - 2  # room for [CLS] and [SEP]
        self.stride = min(stride, self.window_body)
        self.threshold = threshold
        self.precision = resolve_precision(precision)
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

        `precision="auto"` runs bf16 autocast where the CPU has native bf16: 1.3x faster than
        fp32 here (`benchmarks/anonymize_speed.py`) with the same dev scores.
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
            for window in sliding_windows(len(item.input_ids), self.window_body, self.stride):
                if window.end > window.start:
                    jobs.append((text_index, window))
        outputs: dict[tuple[int, int], np.ndarray] = {}
        # Similar lengths in a batch waste little compute on padding.
        order = sorted(range(len(jobs)), key=lambda j: jobs[j][1].end - jobs[j][1].start)
        cls_id, sep_id = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        pad_id = self.tokenizer.pad_token_id or 0
        for batch_start in range(0, len(order), batch_size):
            batch = [jobs[j] for j in order[batch_start : batch_start + batch_size]]
            rows = [[cls_id, *encoded[t].input_ids[w.start : w.end], sep_id] for t, w in batch]
            width = max(len(row) for row in rows)
            input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
            attention = torch.zeros((len(rows), width), dtype=torch.long)
            for r, row in enumerate(rows):
                input_ids[r, : len(row)] = torch.tensor(row)
                attention[r, : len(row)] = 1
            inputs = {"input_ids": input_ids, "attention_mask": attention}
            if self.case_feature:
                case_ids = torch.zeros((len(rows), width), dtype=torch.long)
                for r, (t, w) in enumerate(batch):
                    case_ids[r, 1 : 1 + w.end - w.start] = torch.tensor(
                        encoded[t].case_ids[w.start : w.end], dtype=torch.long
                    )
                inputs["token_type_ids"] = case_ids
            # The model may sit on a GPU while it trains (dev scoring in anonymize.trainer).
            device = getattr(self.model, "device", "cpu")
            inputs = {name: tensor.to(device) for name, tensor in inputs.items()}
            with (
                torch.inference_mode(),
                torch.autocast("cpu", torch.bfloat16, enabled=self.precision == "bf16"),
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
        spans = numbers_keep_their_suffix(text, spans)
        spans = join_hyphenated_names(text, spans)
        spans = apply_rules(text, harmonise_mentions(text, spans), self.rules)
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
        chunk = max(batch_size, 1) * 4
        for start in range(0, len(texts), chunk):
            part = texts[start : start + chunk]
            for text, predictions in zip(part, self.predict_words(part, batch_size), strict=True):
                spans = self.find_spans(text, predictions, selected, cutoff)
                spans = assign_placeholders(spans, operator)
                results.append(AnonymizationResult(render(text, spans, operator), spans))
            if progress is not None:
                progress(len(results), len(texts))
        return results


def model_version_of(model_dir: Path) -> str:
    """Return '<folder name>-<first 8 hex of the weights' sha256>' to record with outputs."""
    weights = model_dir / "model.safetensors"
    digest = hashlib.sha256()
    if weights.exists():
        with weights.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return f"{model_dir.name}-{digest.hexdigest()[:8]}"
