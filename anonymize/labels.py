"""Label inventory of the Textwash-style PSI tagger and the word tokenisation it works on."""

from __future__ import annotations

import re
from dataclasses import dataclass

NONE = "NONE"

# The eleven categories of the Textwash annotation scheme (paper, section 2.5).
TEXTWASH_CATEGORIES: tuple[str, ...] = (
    "PERSON_FIRSTNAME",
    "PERSON_LASTNAME",
    "OCCUPATION",
    "LOCATION",
    "TIME",
    "ORGANIZATION",
    "DATE",
    "ADDRESS",
    "PHONE_NUMBER",
    "EMAIL_ADDRESS",
    "OTHER_IDENTIFYING_ATTRIBUTE",
)
# Textwash replaces numbers and pronouns/titles too; our model learns them from its outputs.
RULE_LIKE_CATEGORIES: tuple[str, ...] = ("NUMERIC", "PRONOUN")
CATEGORIES: tuple[str, ...] = TEXTWASH_CATEGORIES + RULE_LIKE_CATEGORIES

# Words masked by the risk guard (`guard/`) because they let a machine attacker rank the
# described person; not a PSI type the model predicts, so not in CATEGORIES (or BIO_LABELS).
GUARD_CATEGORY = "REIDENTIFYING"
# Every category a span may carry: what the model predicts plus the guard's.
SPAN_CATEGORIES: tuple[str, ...] = (*CATEGORIES, GUARD_CATEGORY)

# PRONOUN carries no index; titles are rendered as MR/MS or TITLE like Textwash does.
UNINDEXED_CATEGORIES: frozenset[str] = frozenset({"PRONOUN"})

BIO_LABELS: tuple[str, ...] = (
    NONE,
    *(f"{prefix}-{category}" for category in CATEGORIES for prefix in ("B", "I")),
)
LABEL2ID: dict[str, int] = {label: index for index, label in enumerate(BIO_LABELS)}
ID2LABEL: dict[int, str] = dict(enumerate(BIO_LABELS))

# A "word" is a run of letters, a run of digits, or one other non-space character. Splitting
# digits from letters mirrors Textwash's outputs ("21st" -> "NUMERIC_5st").
WORD_PATTERN = re.compile(r"[^\W\d_]+|\d+|[^\w\s]|_", re.UNICODE)


@dataclass(frozen=True)
class Word:
    """One word of a text with its character offsets."""

    start: int
    end: int
    text: str


def split_words(text: str) -> list[Word]:
    """Return the words of `text` with offsets, the unit that is labelled and evaluated."""
    return [Word(m.start(), m.end(), m.group()) for m in WORD_PATTERN.finditer(text)]


def category_of(label: str) -> str:
    """Return the category of a BIO label ("B-DATE" -> "DATE", "NONE" -> "NONE")."""
    return label.split("-", 1)[1] if "-" in label else label


def validate_categories(entities: list[str] | tuple[str, ...] | None) -> frozenset[str]:
    """Return the selected categories, rejecting unknown names so typos do not unmask text."""
    if entities is None:
        return frozenset(CATEGORIES)
    selected = {entity.strip().upper() for entity in entities if entity.strip()}
    unknown = sorted(selected - set(CATEGORIES))
    if unknown:
        raise ValueError(f"unknown categories {unknown}; choose from {list(CATEGORIES)}")
    return frozenset(selected)
