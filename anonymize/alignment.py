"""Recover word labels from (original, Textwash output) pairs by aligning their words.

Textwash's outputs are the only labels we have, and they are noisy (see the corpus README):
replacement cascades leave bare category words, whitespace is normalised, fragments such as
"NUMERIC_5st" keep suffixes, and the described person's name sometimes survives. We align
word sequences with difflib, read each placeholder back onto the original words it replaced,
leave words we cannot attribute unlabelled (ignored in training and scoring), drop documents
that are too broken to trust, and count everything we leave out.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from wordfreq import zipf_frequency

from anonymize.labels import NONE, TEXTWASH_CATEGORIES, Word, split_words
from anonymize.names import NAME_SUFFIXES
from anonymize.placeholders import MARKER_REGEX, category_regex
from research_data.json_lines import read_json_lines

# Textwash's own categories only (no guard category, and a bare PERSON stays a word).
_CATEGORY_ALTERNATION = category_regex((*TEXTWASH_CATEGORIES, "NUMERIC"))
# One Textwash output token: an indexed placeholder, a bare category word (a cascade artefact),
# an unindexed pronoun/title marker, or an ordinary word as split by `labels.WORD_PATTERN`.
TEXTWASH_TOKEN_PATTERN = re.compile(
    rf"(?<![A-Za-z])(?P<category>{_CATEGORY_ALTERNATION})(?:_(?P<index>\d+))?"
    rf"|(?<![A-Za-z])(?P<pronoun>{MARKER_REGEX})"
    r"|(?P<word>[^\W\d_]+|\d+|[^\w\s]|_)",
    re.UNICODE,
)
# An index may stand for two values (README quirk 4); more than this marks a cascade.
MAX_STRINGS_PER_PLACEHOLDER = 2
# Documents where more than this share of words cannot be attributed are dropped.
MAX_UNALIGNED_SHARE = 0.15
# Lower-case surname spellings are relabelled only when the word is rare in English, so that
# "black hair" in a text about Charles Black is not turned into a name.
COMMON_WORD_ZIPF = 4.0


@dataclass(frozen=True)
class TextwashToken:
    """One token of a Textwash output: a placeholder (category set) or a plain word."""

    text: str
    category: str | None = None
    index: int | None = None
    bare: bool = False

    @property
    def key(self) -> str:
        """Return the comparison key; placeholders never equal an original word."""
        return f"\x00{self.text}" if self.category else self.text


@dataclass
class AlignedDocument:
    """An original text, its words and the word labels recovered from Textwash's output."""

    id: str
    person: str
    type: str
    text: str
    words: list[Word]
    # BIO label per word, or None where the word could not be attributed (ignored).
    labels: list[str | None]
    drop_reason: str | None = None
    relabelled_names: int = 0

    @property
    def ignored_words(self) -> int:
        """Return how many words carry no label."""
        return sum(label is None for label in self.labels)


@dataclass
class AlignmentReport:
    """Counts of what alignment kept, ignored and dropped, for the model card."""

    documents: int = 0
    documents_kept: int = 0
    words_total: int = 0
    words_kept: int = 0
    words_ignored_in_kept_documents: int = 0
    words_in_dropped_documents: int = 0
    names_relabelled: int = 0
    dropped_by_reason: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, object]:
        """Return the report as JSON-ready dict."""
        return {
            "documents": self.documents,
            "documents_kept": self.documents_kept,
            "documents_dropped": self.documents - self.documents_kept,
            "dropped_by_reason": dict(self.dropped_by_reason),
            "words_total": self.words_total,
            "words_kept": self.words_kept,
            "words_ignored_in_kept_documents": self.words_ignored_in_kept_documents,
            "words_in_dropped_documents": self.words_in_dropped_documents,
            "names_relabelled_as_psi": self.names_relabelled,
        }


def tokenize_textwash(text: str) -> list[TextwashToken]:
    """Split a Textwash output into placeholders and words."""
    tokens = []
    for match in TEXTWASH_TOKEN_PATTERN.finditer(text):
        if match.group("category"):
            index = match.group("index")
            tokens.append(
                TextwashToken(
                    text=match.group(),
                    category=match.group("category"),
                    index=int(index) if index else None,
                    bare=index is None,
                )
            )
        elif match.group("pronoun"):
            tokens.append(TextwashToken(text=match.group(), category="PRONOUN"))
        else:
            tokens.append(TextwashToken(text=match.group()))
    return tokens


def _placeholder_runs(tokens: list[TextwashToken]) -> list[tuple[int, int]]:
    """Return [start, end) runs of tokens that repeat one indexed placeholder.

    Textwash often writes a multi-word entity as one placeholder per word with the same index
    ("5 May 1988" -> "DATE_1 DATE_1 DATE_1"); such a run is one entity, not three.
    """
    runs: list[tuple[int, int]] = []
    for position, token in enumerate(tokens):
        previous = tokens[position - 1] if position else None
        same = (
            previous is not None
            and token.index is not None
            and (previous.category, previous.index) == (token.category, token.index)
        )
        if same:
            runs[-1] = (runs[-1][0], position + 1)
        else:
            runs.append((position, position + 1))
    return runs


def _label_replaced_block(
    original: str, words: list[Word], tokens: list[TextwashToken]
) -> tuple[list[str], list[tuple]] | None:
    """Label original words replaced by a run of placeholders; None where it is ambiguous.

    Return the labels and the placeholder uses (category, index, original string).
    """
    if any(token.category is None for token in tokens):
        return None
    runs = _placeholder_runs(tokens)
    if len(runs) == 1:
        groups = [(0, len(words))]
    elif len(tokens) == len(words):
        groups = runs
    else:
        return None
    labels: list[str] = []
    uses: list[tuple] = []
    for start, end in groups:
        token = tokens[start] if len(runs) > 1 else tokens[0]
        labels += [f"B-{token.category}"] + [f"I-{token.category}"] * (end - start - 1)
        string = original[words[start].start : words[end - 1].end]
        uses.append((token.category, token.index, string.casefold()))
    return labels, uses


def align_pair(original: str, textwash: str) -> tuple[list[Word], list[str | None], list[tuple]]:
    """Align an original with its Textwash output; return words, labels and placeholder uses.

    Each placeholder use is (category, index, original string) so callers can check that an
    index stands for one value, as Textwash's numbering promises.
    """
    words = split_words(original)
    tokens = tokenize_textwash(textwash)
    labels: list[str | None] = [None] * len(words)
    uses: list[tuple] = []
    matcher = difflib.SequenceMatcher(
        None, [w.text for w in words], [t.key for t in tokens], autojunk=False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            labels[i1:i2] = [NONE] * (i2 - i1)
        elif tag == "replace":
            block = _label_replaced_block(original, words[i1:i2], tokens[j1:j2])
            if block is not None:
                labels[i1:i2] = block[0]
                uses += block[1]
        # "delete" (original words missing from the output) and "insert" stay unlabelled.
    return words, labels, uses


def _name_parts(person: str) -> tuple[set[str], set[str]]:
    """Return the described person's first-name and surname tokens (lower case)."""
    parts = [p for p in re.split(r"[\s']+", person.casefold()) if p and p not in NAME_SUFFIXES]
    if len(parts) == 1:
        return {parts[0]}, set()
    return {parts[0]}, set(parts[1:])


def name_word_categories(person: str, words: list[Word]) -> dict[int, str]:
    """Return {word position: PERSON_FIRSTNAME/PERSON_LASTNAME} for the person's name words.

    Names are matched case-insensitively, but a lower-case common English word is left
    alone, so "black hair" in a text about Charles Black is not taken for the surname.
    """
    firsts, lasts = _name_parts(person)
    found = {}
    for position, word in enumerate(words):
        folded = word.text.casefold()
        if folded in firsts:
            category = "PERSON_FIRSTNAME"
        elif folded in lasts:
            category = "PERSON_LASTNAME"
        else:
            continue
        if word.text.islower() and zipf_frequency(folded, "en") >= COMMON_WORD_ZIPF:
            continue
        found[position] = category
    return found


def relabel_surviving_names(document: AlignedDocument) -> int:
    """Label the described person's name where Textwash left it in clear; return the count.

    Textwash's misses of the target name are exactly the leaks we must not learn.
    """
    relabelled = 0
    for position, category in name_word_categories(document.person, document.words).items():
        if document.labels[position] == NONE:
            document.labels[position] = f"B-{category}"
            relabelled += 1
    return relabelled


def _drop_reason(
    textwash: str, original: str, labels: list[str | None], uses: list[tuple]
) -> str | None:
    """Return why a document is too broken to train or score on, or None to keep it."""
    bare = [t for t in tokenize_textwash(textwash) if t.bare]
    if any(token.text not in original for token in bare):
        return "bare_category_cascade"
    strings_per_placeholder: dict[tuple, set[str]] = defaultdict(set)
    for category, index, string in uses:
        if index is not None:
            strings_per_placeholder[(category, index)].add(string)
    if any(len(s) > MAX_STRINGS_PER_PLACEHOLDER for s in strings_per_placeholder.values()):
        return "placeholder_reused_for_many_values"
    if not labels:
        return "empty"
    if sum(label is None for label in labels) / len(labels) > MAX_UNALIGNED_SHARE:
        return "unaligned_words"
    return None


def align_record(record: dict) -> AlignedDocument:
    """Align one corpus record and decide whether it is kept."""
    words, labels, uses = align_pair(record["original"], record["textwash"])
    document = AlignedDocument(
        id=record["id"],
        person=record["person"],
        type=record["type"],
        text=record["original"],
        words=words,
        labels=labels,
        drop_reason=_drop_reason(record["textwash"], record["original"], labels, uses),
    )
    if document.drop_reason is None:
        document.relabelled_names = relabel_surviving_names(document)
    return document


def read_jsonl(path: Path) -> Iterator[dict]:
    """Yield the records of a JSONL corpus file (an error names the file and line)."""
    for _, record in read_json_lines(path):
        yield record


def align_corpus(records: Iterable[dict]) -> tuple[list[AlignedDocument], AlignmentReport]:
    """Align all records; return the kept documents and a report of what was left out."""
    report = AlignmentReport()
    kept = []
    for record in records:
        document = align_record(record)
        report.documents += 1
        report.words_total += len(document.words)
        if document.drop_reason is not None:
            report.dropped_by_reason[document.drop_reason] += 1
            report.words_in_dropped_documents += len(document.words)
            continue
        kept.append(document)
        report.documents_kept += 1
        report.words_ignored_in_kept_documents += document.ignored_words
        report.words_kept += len(document.words) - document.ignored_words
        report.names_relabelled += document.relabelled_names
    return kept, report
