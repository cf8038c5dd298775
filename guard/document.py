"""A text prepared for greedy masking: its tokens, their curated pieces, and what may be masked.

The guard masks spaCy tokens of the original text. Each token knows the piece it adds to the
attack's curated text (`attacks.curation.curated_piece`), so the curated text of any masking
is rebuilt by joining pieces instead of running spaCy again for every candidate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from anonymize import Span, render
from anonymize.labels import GUARD_CATEGORY
from anonymize.placeholders import assign_placeholders

# What a masked run adds to the curated text: a word no background contains, standing for
# the placeholder, so masked words neither count themselves nor join their neighbours into a
# bigram that the real (placeholder-holding) text does not have.
MASK_PIECE = " zzmaskedzz"
GUARD_SCORE = 1.0
_CONTENT = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class Token:
    """One spaCy token of the original text."""

    start: int
    end: int
    text: str
    piece: str | None  # curated piece; None = dropped by curation (stop word)
    candidate: bool  # a clear word the guard may mask

    @property
    def key(self) -> str:
        """Return what groups occurrences of one word: its lemma (else its lower-cased form).

        Masking "actress" while "actresses" stays would leave the lemma the attacks count.
        """
        piece = (self.piece or "").strip().lower()
        return piece if piece and piece != "." else self.text.lower()


@dataclass(frozen=True)
class Unit:
    """A maskable unit: a word (every occurrence) or an adjacent two-word phrase."""

    value: str  # lower-cased surface form, "word" or "word word"
    tokens: frozenset[int]
    key: str = ""  # lemma(s) of the unit: what groups its occurrences


@dataclass
class GuardDocument:
    """One text, its target person, the spans masked before guarding, and its tokens."""

    doc_id: str
    text: str
    target: str
    spans: list[Span]
    tokens: list[Token]
    masked_before: frozenset[int] = field(default_factory=frozenset)

    @property
    def word_count(self) -> int:
        """Return the number of word tokens (the denominator of words-masked shares)."""
        return sum(bool(_CONTENT.search(t.text)) for t in self.tokens)

    def curated(self, masked: Iterable[int] = ()) -> str:
        """Return the curated text with the spans and the tokens `masked` replaced."""
        hidden = self.masked_before | set(masked)
        pieces = []
        previous_hidden = False
        for index, token in enumerate(self.tokens):
            if index in hidden:
                if not previous_hidden:
                    pieces.append(MASK_PIECE)
                previous_hidden = True
                continue
            previous_hidden = False
            if token.piece:
                pieces.append(token.piece)
        return "".join(pieces)

    def guard_spans(self, masked: Iterable[int]) -> list[Span]:
        """Return one span of category GUARD_CATEGORY per run of adjacent masked tokens."""
        masked = set(masked)
        spans: list[Span] = []
        for index in sorted(masked - self.masked_before):
            token = self.tokens[index]
            joinable = (
                spans
                and index - 1 in masked
                and not self.text[spans[-1].end : token.start].strip()
                and spans[-1].end == self.tokens[index - 1].end
            )
            if joinable:
                last = spans.pop()
                token_start = last.start
            else:
                token_start = token.start
            spans.append(
                Span(
                    token_start,
                    token.end,
                    self.text[token_start : token.end],
                    GUARD_CATEGORY,
                    "",
                    GUARD_SCORE,
                )
            )
        return spans

    def all_spans(self, masked: Iterable[int]) -> list[Span]:
        """Return the spans masked before guarding plus the guard's spans."""
        return assign_placeholders([*self.spans, *self.guard_spans(masked)])

    def render(self, masked: Iterable[int] = ()) -> str:
        """Return the anonymized text with the guard's masks added."""
        return render(self.text, self.all_spans(masked))

    def units(self, masked: Iterable[int], phrases: bool = True) -> list[Unit]:
        """Return the clear words (every occurrence of a lemma) and adjacent phrases to mask."""
        hidden = self.masked_before | set(masked)
        by_word: dict[str, set[int]] = {}
        by_phrase: dict[str, set[int]] = {}
        values: dict[str, str] = {}
        previous: int | None = None
        for index, token in enumerate(self.tokens):
            clear = token.candidate and index not in hidden
            if not clear:
                previous = None
                continue
            key = token.key
            by_word.setdefault(key, set()).add(index)
            values.setdefault(key, token.text.lower())
            if phrases and previous is not None:
                phrase = f"{self.tokens[previous].key} {key}"
                by_phrase.setdefault(phrase, set()).update((previous, index))
                surface = f"{self.tokens[previous].text.lower()} {token.text.lower()}"
                values.setdefault(phrase, surface)
            adjacent = index + 1 < len(self.tokens)
            nxt = self.tokens[index + 1] if adjacent else None
            previous = (
                index if nxt is not None and not self.text[token.end : nxt.start].strip() else None
            )
        units = [Unit(values[k], frozenset(t), k) for k, t in by_word.items()]
        units += [Unit(values[k], frozenset(t), k) for k, t in by_phrase.items()]
        return units


def prepare_documents(
    items: Sequence[tuple[str, str, str, Sequence[Span]]],
    nlp: Any | None = None,
    keep_stop_words: bool = True,
) -> list[GuardDocument]:
    """Tokenize (id, text, target, spans) items once with the attacks' spaCy pipeline.

    `keep_stop_words`: capitalised stop words the curation keeps may be masked too.
    """
    from attacks.curation import CURATION_PIPES, curated_piece, load_spacy

    nlp = nlp or load_spacy()
    stop_words = nlp.Defaults.stop_words
    documents = []
    with nlp.select_pipes(enable=list(CURATION_PIPES)):
        texts = (text for _, text, _, _ in items)
        for (doc_id, text, target, spans), doc in zip(items, nlp.pipe(texts), strict=True):
            ordered = sorted(spans, key=lambda s: s.start)
            tokens, masked = [], set()
            for index, token in enumerate(doc):
                start, end = token.idx, token.idx + len(token.text)
                covered = any(s.start < end and start < s.end for s in ordered)
                if covered:
                    masked.add(index)
                content = bool(_CONTENT.search(token.text))
                piece = curated_piece(token, stop_words)
                # A stop word counts only where the curation keeps it: capitalised ("She",
                # "His" open a sentence) it reaches the lexical attacks and tells gender.
                counted = piece is not None and (
                    keep_stop_words or token.text.lower() not in stop_words
                )
                tokens.append(
                    Token(
                        start,
                        end,
                        token.text,
                        piece,
                        candidate=content and counted and not covered and not token.is_space,
                    )
                )
            documents.append(
                GuardDocument(doc_id, text, target, list(ordered), tokens, frozenset(masked))
            )
    return documents
