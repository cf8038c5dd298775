"""What an annotation is: mentions with TAB's attributes, documents, schemes and word snapping.

Offsets are Python character offsets (code points), as in TAB's standoff JSON; a browser's
UTF-16 offsets are converted before they reach this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from anonymize.labels import CATEGORIES

IDENTIFIER_TYPES: tuple[str, ...] = ("DIRECT", "QUASI", "NO_MASK")
CONFIDENTIAL_STATUSES: tuple[str, ...] = (
    "NOT_CONFIDENTIAL",
    "BELIEF",
    "POLITICS",
    "SEX",
    "ETHNIC",
    "HEALTH",
)
# TAB's edit_type: "check" = a pre-annotation kept as it was, "correct" = a pre-annotation
# changed, "insert" = a mention the annotator added.
EDIT_TYPES: tuple[str, ...] = ("check", "correct", "insert")
DATASET_TYPES: tuple[str, ...] = ("train", "dev", "test")

TAB_CATEGORIES: tuple[str, ...] = (
    "PERSON",
    "CODE",
    "LOC",
    "ORG",
    "DEM",
    "DATETIME",
    "QUANTITY",
    "MISC",
)
# Textwash categories that name a person or reach them directly: TAB calls these DIRECT.
DIRECT_BY_DEFAULT: frozenset[str] = frozenset(
    {"PERSON_FIRSTNAME", "PERSON_LASTNAME", "PHONE_NUMBER", "EMAIL_ADDRESS", "PERSON", "CODE"}
)
# The closest TAB category of each model category, so that model suggestions and per-category
# scores work in a TAB-scheme project too.
MODEL_TO_TAB: dict[str, str] = {
    "PERSON_FIRSTNAME": "PERSON",
    "PERSON_LASTNAME": "PERSON",
    "OCCUPATION": "DEM",
    "LOCATION": "LOC",
    "ADDRESS": "LOC",
    "TIME": "DATETIME",
    "DATE": "DATETIME",
    "ORGANIZATION": "ORG",
    "PHONE_NUMBER": "CODE",
    "EMAIL_ADDRESS": "CODE",
    "OTHER_IDENTIFYING_ATTRIBUTE": "MISC",
    "NUMERIC": "QUANTITY",
    "PRONOUN": "DEM",
}
SCHEMES: dict[str, tuple[str, ...]] = {"textwash": CATEGORIES, "tab": TAB_CATEGORIES}

_WORD_CHAR = re.compile(r"\w", re.UNICODE)


@dataclass(frozen=True)
class Mention:
    """One annotated span with TAB's attributes; `entity_id` groups co-referent mentions."""

    start: int
    end: int
    entity_type: str
    entity_id: str
    identifier_type: str = "QUASI"
    confidential_status: str = "NOT_CONFIDENTIAL"
    edit_type: str = "insert"
    mention_id: str = ""
    related_mentions: tuple[str, ...] = ()

    @property
    def masked(self) -> bool:
        """Return whether the annotator wants this mention masked (DIRECT or QUASI)."""
        return self.identifier_type in ("DIRECT", "QUASI")


@dataclass
class AnnotatedDocument:
    """A text and each annotator's mentions, as one document of TAB's gold file."""

    doc_id: str
    text: str
    annotations: dict[str, list[Mention]] = field(default_factory=dict)
    dataset_type: str = "train"
    meta: dict = field(default_factory=dict)


def default_identifier_type(category: str) -> str:
    """Return the identifier type a new mention of `category` starts with."""
    return "DIRECT" if category in DIRECT_BY_DEFAULT else "QUASI"


def category_for_scheme(model_category: str, scheme_categories: tuple[str, ...]) -> str | None:
    """Return the scheme's category for a model category, or None when the scheme lacks it."""
    if model_category in scheme_categories:
        return model_category
    mapped = MODEL_TO_TAB.get(model_category)
    return mapped if mapped in scheme_categories else None


def snap_to_words(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen [start, end) to whole words and trim surrounding white space.

    A selection that starts or ends inside a word takes the whole word, so annotators need
    not aim at letters; punctuation at the edges stays as selected.
    """
    start = max(0, min(start, len(text)))
    end = max(start, min(end, len(text)))
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start == end:
        return start, end
    while start > 0 and _WORD_CHAR.match(text[start - 1]) and _WORD_CHAR.match(text[start]):
        start -= 1
    while end < len(text) and _WORD_CHAR.match(text[end]) and _WORD_CHAR.match(text[end - 1]):
        end += 1
    return start, end
