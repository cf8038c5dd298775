"""Deterministic masking guarantees on top of the model, as Textwash gives them by rule.

The model learns Textwash's rule-made replacements (digits, months, repeated mentions) from
its outputs, and a learned rule can miss. Each rule here is a small strategy class that finds
character ranges to mask; `apply_rules` adds them only where nothing is masked yet, so a rule
never unmasks, shortens or re-categorises what the model masked.

Which rules run by default, and why, is decided on the dev split (`python -m anonymize
evaluate --split dev --rules ...`); the numbers are in `benchmarks/RESULTS.md` and
`DEFAULT_RULES` below.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from typing import ClassVar

from anonymize.placeholders import Span, normalise_value

RULE_SCORE = 1.0  # rule spans are certain; the score field is the model's confidence elsewhere

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
# Lower-case "march" and "may" are far more often a verb than a month.
AMBIGUOUS_LOWERCASE_MONTHS = frozenset({"march", "may"})
NUMBER_WORDS = (
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
)
# A year as Textwash labels it (DATE), any other digit run is NUMERIC.
YEAR = re.compile(r"1[0-9]{3}|20[0-9]{2}")
YEAR_LIST = re.compile(r"(?:1[0-9]{3}|20[0-9]{2})(?:\s*[-./ ]\s*\d{2,4})+")


class Rule:
    """Base strategy: return (start, end, category) ranges of a text that must be masked."""

    name: ClassVar[str] = ""
    help: ClassVar[str] = ""

    def matches(self, text: str, spans: Sequence[Span]) -> Iterable[tuple[int, int, str]]:
        """Yield the ranges to mask; `spans` are the spans found so far."""
        raise NotImplementedError


class UrlRule(Rule):
    """Mask web addresses (with or without a scheme)."""

    name = "urls"
    help = "URLs (http://..., www....., example.com/path)"
    pattern = re.compile(
        r"(?i)\b(?:https?://|www\.)[^\s<>\"']+"
        r"|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|edu|gov|io|co|uk|de|fr)/[^\s<>\"']*"
    )

    def matches(self, text: str, spans: Sequence[Span]) -> Iterable[tuple[int, int, str]]:
        """Yield each URL without trailing sentence punctuation."""
        for match in self.pattern.finditer(text):
            value = match.group().rstrip(".,;:!?)]}")
            yield match.start(), match.start() + len(value), "OTHER_IDENTIFYING_ATTRIBUTE"


class EmailRule(Rule):
    """Mask e-mail addresses."""

    name = "emails"
    help = "e-mail addresses"
    pattern = re.compile(r"(?i)\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b")

    def matches(self, text: str, spans: Sequence[Span]) -> Iterable[tuple[int, int, str]]:
        """Yield each address."""
        for match in self.pattern.finditer(text):
            yield match.start(), match.end(), "EMAIL_ADDRESS"


class PhoneRule(Rule):
    """Mask phone numbers: 7 to 15 digits in groups, optionally with +country and (area)."""

    name = "phones"
    help = "phone numbers (7-15 digits with separators, +country, (area))"
    pattern = re.compile(
        r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d[\d .-]{5,}\d(?!\w)"
    )

    def matches(self, text: str, spans: Sequence[Span]) -> Iterable[tuple[int, int, str]]:
        """Yield runs with 7-15 digits of a phone-like shape, not lists or ranges of years."""
        for match in self.pattern.finditer(text):
            value = match.group()
            digits = sum(c.isdigit() for c in value)
            phone_shaped = value.startswith(("+", "(")) or re.search(r"\d[ .-]\d{3}", value)
            years = YEAR_LIST.fullmatch(value)  # "1990-2000", "1990 2005"
            if 7 <= digits <= 15 and phone_shaped and not years:
                yield match.start(), match.end(), "PHONE_NUMBER"


class MonthNameRule(Rule):
    """Mask month names (capitalised; lower case too except "march" and "may")."""

    name = "months"
    help = "month names"
    pattern = re.compile(r"(?i)\b(?:" + "|".join(MONTHS) + r")\b")

    def matches(self, text: str, spans: Sequence[Span]) -> Iterable[tuple[int, int, str]]:
        """Yield each month name."""
        for match in self.pattern.finditer(text):
            word = match.group()
            if word.islower() and word in AMBIGUOUS_LOWERCASE_MONTHS:
                continue
            if word[0].isupper() or word.islower():
                yield match.start(), match.end(), "DATE"


class NumberWordRule(Rule):
    """Mask the written numbers one to twenty (any case)."""

    name = "number_words"
    help = 'written numbers "one" to "twenty"'
    pattern = re.compile(r"(?i)\b(?:" + "|".join(NUMBER_WORDS) + r")\b")

    def matches(self, text: str, spans: Sequence[Span]) -> Iterable[tuple[int, int, str]]:
        """Yield each number word."""
        for match in self.pattern.finditer(text):
            yield match.start(), match.end(), "NUMERIC"


class DigitRunRule(Rule):
    """Mask every run of digits: years as DATE, anything else as NUMERIC."""

    name = "digits"
    help = "every digit run (years 1000-2099 as DATE, others NUMERIC)"
    pattern = re.compile(r"\d+")

    def matches(self, text: str, spans: Sequence[Span]) -> Iterable[tuple[int, int, str]]:
        """Yield each digit run."""
        for match in self.pattern.finditer(text):
            category = "DATE" if YEAR.fullmatch(match.group()) else "NUMERIC"
            yield match.start(), match.end(), category


class EveryOccurrenceRule(Rule):
    """Mask every occurrence of every masked string, in every category and in any case.

    The model's own propagation (`cleanup.harmonise_mentions`) covers six categories and leaves
    lower-case common words alone; this rule has no exceptions: once "Black" is a surname,
    "black" is masked too, and a masked "two" or "Rolling Stones" is masked everywhere.
    """

    name = "every_occurrence"
    help = "every masked string at every occurrence, every category, lower case too"

    def matches(self, text: str, spans: Sequence[Span]) -> Iterable[tuple[int, int, str]]:
        """Yield every whole-word, case-insensitive occurrence of each masked value."""
        category_of: dict[str, str] = {}
        for span in spans:
            category_of.setdefault(normalise_value(text[span.start : span.end]), span.category)
        for value, category in category_of.items():
            if not re.search(r"\w", value):
                continue
            pattern = r"(?<!\w)" + r"\s+".join(map(re.escape, value.split())) + r"(?!\w)"
            for match in re.finditer(pattern, text, flags=re.IGNORECASE):
                yield match.start(), match.end(), category


RULES: dict[str, type[Rule]] = {
    rule.name: rule
    for rule in (
        UrlRule,
        EmailRule,
        PhoneRule,
        MonthNameRule,
        NumberWordRule,
        DigitRunRule,
        EveryOccurrenceRule,
    )
}
# Rules run in this order: specific shapes (a phone number) before their parts (its digits),
# and propagation last, so it also spreads what the other rules masked.
RULE_ORDER: tuple[str, ...] = tuple(RULES)
# On by default, chosen on the dev split (`benchmarks/results/anonymize_rules_dev.json`, 255
# documents, the model alone: weighted F1 0.9108, binary 0.9569, 197 gold-PSI words unmasked).
# Each of these costs nothing measurable and closes a hole: digits 0.9110 / 0.9571 (3 more
# PSI words masked), months 0.9107 / 0.9568 (1 word), number words, URLs, e-mails and phones
# unchanged (the model already masks them, or dev has none). every_occurrence is off: it
# masks 172 more words, 10 of them PSI, and costs 0.008 weighted and 0.011 binary F1, beyond
# the 0.005 the threshold calibration treats as noise. Switch it on (`--rules all`) where
# recall matters more than agreement with Textwash; the guard benchmark does.
DEFAULT_RULES: tuple[str, ...] = tuple(name for name in RULE_ORDER if name != "every_occurrence")


def resolve_rules(names: str | Sequence[str] | None) -> tuple[str, ...]:
    """Return rule names in running order from "all", "none", "default" or a list of names."""
    if names is None or names == "default":
        return DEFAULT_RULES
    if isinstance(names, str):
        if names in ("all", "none"):
            return RULE_ORDER if names == "all" else ()
        names = [n for n in names.split(",") if n.strip()]
    chosen = {n.strip() for n in names}
    unknown = sorted(chosen - set(RULES))
    if unknown:
        raise ValueError(f"unknown rules {unknown}; choose from {list(RULE_ORDER)}")
    return tuple(n for n in RULE_ORDER if n in chosen)


def _uncovered(start: int, end: int, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return the parts of [start, end) outside the sorted, disjoint intervals `taken`."""
    pieces = []
    cursor = start
    position = max(bisect.bisect_left(taken, (start, start)) - 1, 0)
    for taken_start, taken_end in taken[position:]:
        if taken_start >= end:
            break
        if taken_end <= cursor:
            continue
        if taken_start > cursor:
            pieces.append((cursor, taken_start))
        cursor = max(cursor, taken_end)
    if cursor < end:
        pieces.append((cursor, end))
    return pieces


def add_masks(
    text: str, spans: Sequence[Span], ranges: Iterable[tuple[int, int, str]]
) -> list[Span]:
    """Return `spans` plus a span for each part of `ranges` that no span covers yet.

    Existing spans are kept exactly as they are; a range that overlaps one is clipped to its
    uncovered parts (trimmed of spaces), so masking only ever grows.
    """
    result = list(spans)
    taken = sorted((s.start, s.end) for s in spans)
    for start, end, category in ranges:
        for piece_start, piece_end in _uncovered(start, end, taken):
            value = text[piece_start:piece_end]
            stripped = value.strip()
            if not re.search(r"\w", stripped):
                continue
            piece_start += len(value) - len(value.lstrip())
            piece_end = piece_start + len(stripped)
            bisect.insort(taken, (piece_start, piece_end))
            result.append(Span(piece_start, piece_end, stripped, category, "", RULE_SCORE))
    return sorted(result, key=lambda span: span.start)


def apply_rules(
    text: str, spans: Sequence[Span], rules: Sequence[str] = DEFAULT_RULES
) -> list[Span]:
    """Return `spans` with the masks of `rules` (names, run in `RULE_ORDER`) added."""
    result = list(spans)
    for name in resolve_rules(list(rules)):
        result = add_masks(text, result, list(RULES[name]().matches(text, result)))
    return result
