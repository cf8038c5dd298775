"""Text preserved information (TPI): how much of a text's information content survives masking.

Paper 002 (Manzanares-Salor et al. 2025, section 4.2), the utility measure beside TRIR:

- terms: spaCy entities, then noun chunks that overlap no entity, then every remaining
  non-blank token (`term_ranges`);
- IC(term) = -ln p(term), p from an information-content source (`anonymize.information`):
  a masked language model with N-term alternation, as the paper, or a corpus-frequency
  stand-in, reported under its own name;
- TPI(doc) = sum of IC over the unmasked terms / sum of IC over all terms, where a term is
  masked when any masked character range overlaps it; a corpus's TPI is the mean over its
  documents. A document with no information content (empty, or every term IC 0) has no TPI
  and is left out of the mean, and counted as such.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

Range = tuple[int, int]
WORD = re.compile(r"\w+")


class InformationSource(Protocol):
    """Give each term of a text its information content, -ln p (natural log)."""

    name: str  # e.g. "bert-base-uncased" or "wordfreq"
    metric: str  # "TPI" for a masked LM (the paper's), another name for any stand-in

    def term_ics(self, text: str, terms: Sequence[Range]) -> list[float]:
        """Return IC per term, in order."""
        ...


def term_ranges(doc: Any) -> list[Range]:
    """Return the character ranges of a spaCy Doc's terms, in text order.

    Entities first, then noun chunks that share no token with a term already taken, then every
    token not yet covered that is not blank.
    """
    taken = [False] * len(doc)
    ranges: list[Range] = []

    def take(start: int, end: int) -> None:
        first, last = doc[start], doc[end - 1]
        ranges.append((first.idx, last.idx + len(last.text)))
        taken[start:end] = [True] * (end - start)

    for entity in doc.ents:
        take(entity.start, entity.end)
    for chunk in doc.noun_chunks:
        if not any(taken[chunk.start : chunk.end]):
            take(chunk.start, chunk.end)
    for token in doc:
        if not taken[token.i] and token.text.strip():
            take(token.i, token.i + 1)
    return sorted(ranges)


def masked_terms(terms: Sequence[Range], masked: Iterable[Range]) -> list[bool]:
    """Return, per term, whether any masked range overlaps it (shares at least one character)."""
    ranges = sorted((s, e) for s, e in masked if e > s)
    return [any(s < end and start < e for s, e in ranges) for start, end in terms]


def alternation_passes(count: int, n: int) -> list[list[int]]:
    """Return the term indexes masked in each of the N passes: pass i masks i, i + n, ..."""
    if n < 1:
        raise ValueError(f"alternation N must be at least 1, got {n}")
    return [list(range(i, count, n)) for i in range(min(n, count))]


def document_tpi(ics: Sequence[float], masked: Sequence[bool]) -> float | None:
    """Return sum IC(unmasked) / sum IC(all); None when the text holds no information."""
    total = float(sum(ics))
    if total <= 0.0:
        return None
    return float(sum(ic for ic, m in zip(ics, masked, strict=True) if not m)) / total


def masked_ranges_from_texts(original: str, anonymized: str) -> list[Range]:
    """Return the original's word ranges that the anonymized text does not keep unchanged.

    For outputs that come without spans (Textwash's): words are aligned with difflib, the
    same alignment the benchmark's "words masked" share uses.
    """
    before = list(WORD.finditer(original))
    after = WORD.findall(anonymized)
    matcher = difflib.SequenceMatcher(None, [m.group() for m in before], after, autojunk=False)
    kept = set()
    for block in matcher.get_matching_blocks():
        kept.update(range(block.a, block.a + block.size))
    return [m.span() for i, m in enumerate(before) if i not in kept]


@dataclass
class DocumentTPI:
    """One document's TPI and the terms behind it."""

    doc_id: str
    tpi: float | None
    terms: int
    masked_terms: int
    ic_total: float

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON object the CLI writes per document."""
        return {
            "id": self.doc_id,
            "tpi": None if self.tpi is None else round(self.tpi, 6),
            "terms": self.terms,
            "masked_terms": self.masked_terms,
            "ic_total": round(self.ic_total, 4),
        }


@dataclass
class CorpusTPI:
    """A corpus's TPI (mean over documents with information) under one IC source."""

    metric: str
    ic_source: str
    tpi: float | None
    documents: list[DocumentTPI] = field(default_factory=list)

    @property
    def undefined(self) -> int:
        """Return how many documents had no information content (left out of the mean)."""
        return sum(d.tpi is None for d in self.documents)

    def to_dict(self, per_document: bool = True) -> dict[str, Any]:
        """Return the summary (and the per-document rows) as JSON."""
        out: dict[str, Any] = {
            "metric": self.metric,
            "ic_source": self.ic_source,
            "tpi": None if self.tpi is None else round(self.tpi, 6),
            "documents": len(self.documents),
            "documents_without_information": self.undefined,
        }
        if per_document:
            out["per_document"] = [d.to_dict() for d in self.documents]
        return out


class TPIScorer:
    """Score maskings of original texts; each original's term ICs are computed once."""

    def __init__(self, source: InformationSource, nlp: Any = None) -> None:
        self.source = source
        self._nlp = nlp
        self._cache: dict[str, tuple[list[Range], list[float]]] = {}

    @property
    def nlp(self) -> Any:
        """Return the spaCy pipeline (the project's pip package, loaded on first use)."""
        if self._nlp is None:
            self._nlp = load_term_pipeline()
        return self._nlp

    def terms_and_ics(self, text: str) -> tuple[list[Range], list[float]]:
        """Return the text's terms and their ICs (cached by text)."""
        if text not in self._cache:
            terms = term_ranges(self.nlp(text)) if text.strip() else []
            ics = self.source.term_ics(text, terms) if terms else []
            self._cache[text] = (terms, [float(ic) for ic in ics])
        return self._cache[text]

    def document(self, doc_id: str, text: str, masked: Iterable[Range]) -> DocumentTPI:
        """Return one document's TPI given the masked character ranges of its original."""
        terms, ics = self.terms_and_ics(text)
        flags = masked_terms(terms, masked)
        return DocumentTPI(doc_id, document_tpi(ics, flags), len(terms), sum(flags), sum(ics))

    def corpus(self, items: Iterable[tuple[str, str, Iterable[Range]]]) -> CorpusTPI:
        """Return the corpus TPI of (id, original text, masked ranges) items."""
        documents = [self.document(i, t, m) for i, t, m in items]
        values = [d.tpi for d in documents if d.tpi is not None]
        mean = sum(values) / len(values) if values else None
        return CorpusTPI(self.source.metric, self.source.name, mean, documents)


def load_term_pipeline() -> Any:
    """Return spaCy's English pipeline with the parser (noun chunks) and NER the terms need."""
    import spacy

    from anonymize.baseline_spacy import SPACY_MODEL

    return spacy.load(SPACY_MODEL, disable=["lemmatizer"])
