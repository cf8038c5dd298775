"""Turn detected PSI spans into replacement strings: placeholder, category-only or redaction.

Operators are small strategy classes picked by name from `OPERATORS`, so callers (CLI, web
side) choose one with a string and new styles plug in without touching the anonymizer.
The grammar of what the placeholder operator writes is read back here too
(`PLACEHOLDER_PATTERN`), so the writer and every reader (alignment of Textwash outputs, the
web side's analyses, leak checks and review page) share one definition.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from anonymize.labels import SPAN_CATEGORIES, UNINDEXED_CATEGORIES

# Textwash writes titles as MR/MS (Mr, Mrs, Ms, Miss) or TITLE (Dr, Sir, Dame, ...), and every
# other PRONOUN item as "PRONOUN"; none of them carries an index.
MR_MS_WORDS = frozenset({"mr", "mrs", "ms", "miss", "mister", "missus"})
TITLE_WORDS = frozenset(
    {"dr", "doctor", "sir", "dame", "lady", "lord", "prof", "professor", "rev", "madam", "madame"}
)

# The unindexed markers `pronoun_marker` writes for pronouns and titles.
MARKERS: tuple[str, ...] = ("PRONOUN", "TITLE", "MR/MS")
# Categories an indexed placeholder (CATEGORY_N) names: every span category but the unindexed
# ones, plus the bare PERSON some Textwash outputs carry. Longest first, so that a regex
# alternation prefers PERSON_FIRSTNAME to its prefix PERSON.
PLACEHOLDER_CATEGORIES: tuple[str, ...] = tuple(
    sorted({*SPAN_CATEGORIES, "PERSON"} - UNINDEXED_CATEGORIES, key=lambda c: (-len(c), c))
)


def category_regex(categories: tuple[str, ...] | list[str] = PLACEHOLDER_CATEGORIES) -> str:
    """Return a regex alternation of `categories`, longest first (no prefix wins early)."""
    return "|".join(re.escape(c) for c in sorted(categories, key=lambda c: (-len(c), c)))


MARKER_REGEX = "|".join(re.escape(marker) for marker in MARKERS)
# One placeholder as the writer writes it, wherever it stands (even glued to letters):
# group `category` and `index` for CATEGORY_N, group `marker` for PRONOUN / TITLE / MR/MS.
# Readers with other needs (bare categories, word boundaries) build on `category_regex` and
# `MARKER_REGEX`.
PLACEHOLDER_PATTERN = re.compile(
    rf"(?P<category>{category_regex()})_(?P<index>\d+)|(?P<marker>{MARKER_REGEX})"
)


@dataclass(frozen=True)
class Span:
    """One PSI item: character offsets into the original text and its replacement."""

    start: int
    end: int
    text: str
    category: str
    placeholder: str
    score: float

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], text: str) -> Span:
        """Return the span a JSON object (`to_dict`'s shape) marks in the original `text`.

        The span's text is cut from `text` (never trusted from the object); a missing
        placeholder is left for `assign_placeholders`, and a missing score is a hand-made
        span's 1.0. Malformed fields raise KeyError, TypeError or ValueError.
        """
        start, end = int(data["start"]), int(data["end"])
        if not 0 <= start <= end <= len(text):
            raise ValueError(f"span {start}-{end} outside text of length {len(text)}")
        score = data.get("score")
        return cls(
            start=start,
            end=end,
            text=text[start:end],
            category=str(data["category"]),
            placeholder=str(data.get("placeholder") or ""),
            score=1.0 if score is None else float(score),
        )

    def to_dict(self) -> dict[str, object]:
        """Return the span as the JSON object of the CLI output."""
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "category": self.category,
            "placeholder": self.placeholder,
            "score": round(self.score, 4),
        }


def normalise_value(text: str) -> str:
    """Return the key under which two mentions count as the same value (case, spacing)."""
    return re.sub(r"\s+", " ", text).strip().casefold()


def pronoun_marker(text: str) -> str:
    """Return Textwash's marker for a pronoun or title: MR/MS, TITLE or PRONOUN."""
    word = normalise_value(text).rstrip(".")
    if word in MR_MS_WORDS:
        return "MR/MS"
    if word in TITLE_WORDS:
        return "TITLE"
    return "PRONOUN"


class Operator:
    """Base strategy: decide the replacement string of each span of one document."""

    name = ""

    def replacements(self, spans: list[Span]) -> list[str]:
        """Return one replacement per span (same order)."""
        raise NotImplementedError


class PlaceholderOperator(Operator):
    """Replace with CATEGORY_N; N is per distinct value and category, in order of appearance."""

    name = "placeholder"

    def replacements(self, spans: list[Span]) -> list[str]:
        """Number values per category so repeated mentions share one index (paper, 2.4)."""
        indices: dict[tuple[str, str], int] = {}
        counters: dict[str, int] = {}
        result = []
        for span in spans:
            if span.category in UNINDEXED_CATEGORIES:
                result.append(pronoun_marker(span.text))
                continue
            key = (span.category, normalise_value(span.text))
            if key not in indices:
                counters[span.category] = counters.get(span.category, 0) + 1
                indices[key] = counters[span.category]
            result.append(f"{span.category}_{indices[key]}")
        return result


class CategoryOperator(Operator):
    """Replace with the bare category in brackets, e.g. [LOCATION]."""

    name = "category"

    def replacements(self, spans: list[Span]) -> list[str]:
        """Return [CATEGORY] for each span."""
        return [f"[{span.category}]" for span in spans]


class RedactOperator(Operator):
    """Replace with *** whatever the category, for the most conservative output."""

    name = "redact"

    def replacements(self, spans: list[Span]) -> list[str]:
        """Return *** for each span."""
        return ["***" for _ in spans]


OPERATORS: dict[str, type[Operator]] = {
    operator.name: operator for operator in (PlaceholderOperator, CategoryOperator, RedactOperator)
}


def get_operator(name: str) -> Operator:
    """Return the operator registered under `name`, with a clear error for unknown names."""
    try:
        return OPERATORS[name]()
    except KeyError:
        raise ValueError(f"unknown operator {name!r}; choose from {sorted(OPERATORS)}") from None


def assign_placeholders(spans: list[Span], operator: str = "placeholder") -> list[Span]:
    """Return the spans sorted by position with replacements recomputed by `operator`.

    Overlapping spans are rejected: they would make the rebuilt text ambiguous.
    """
    ordered = sorted(spans, key=lambda span: (span.start, span.end))
    for previous, current in itertools.pairwise(ordered):
        if current.start < previous.end:
            raise ValueError(f"overlapping spans {previous} and {current}")
    replacements = get_operator(operator).replacements(ordered)
    return [
        replace(span, placeholder=text) for span, text in zip(ordered, replacements, strict=True)
    ]


def render(text: str, spans: list[Span], operator: str = "placeholder") -> str:
    """Rebuild the anonymized text from (possibly edited) spans, re-indexing consistently."""
    pieces = []
    cursor = 0
    for span in assign_placeholders(spans, operator):
        if not 0 <= span.start <= span.end <= len(text):
            raise ValueError(f"span {span.start}-{span.end} outside text of length {len(text)}")
        pieces += [text[cursor : span.start], span.placeholder]
        cursor = span.end
    pieces.append(text[cursor:])
    return "".join(pieces)
