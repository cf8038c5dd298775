"""TAB's evaluation metrics (Pilán et al. 2022, section 6), computed as TAB's `evaluation.py` does.

- entity-level recall on direct (ER_di) and quasi identifiers (ER_qi): an entity counts as
  masked only when every mention that needs masking is masked;
- token- and mention-level recall, micro-averaged over annotators (and per entity type);
- token- and mention-level precision, micro-averaged over annotators: each masked token earns
  the share of the document's annotators who masked it, optionally weighted by its
  information content.

A mention is masked when all its characters are, ignoring white space and punctuation
(`CHARACTERS_TO_IGNORE`) and tokens TAB ignores (determiners, adpositions, particles,
conjunctions and a few titles, found with spaCy's tagger). `tests/anonymize/test_tab_metrics.py`
checks hand-computed values and benchmarks/tab_crosscheck.py checks against TAB's own script.

Weighted precision: TAB weighs each masked token by -log p(token | context) from BERT's masked
LM. The shipped base model has no trained MLM head, so we use the context-free version of the
same quantity, each token's unigram surprisal -ln p(word) from `wordfreq`'s English frequencies
(floored at `MIN_WORD_FREQUENCY`, so unseen words weigh the most). Like TAB's weighting it
makes rare, specific words count more than common ones; unlike it, it ignores the context.
Uniform precision is always reported beside it.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from anonymize.annotations.schema import AnnotatedDocument
from anonymize.baseline_spacy import SPACY_MODEL

POS_TO_IGNORE = frozenset({"ADP", "PART", "CCONJ", "DET"})
TOKENS_TO_IGNORE = frozenset({"mr", "mrs", "ms", "no", "nr", "about"})
CHARACTERS_TO_IGNORE = frozenset(" ,.-;:/&()[]–'\" ’“”")
TOKEN_PATTERN = re.compile(r"\w+")
MIN_WORD_FREQUENCY = 1e-8

# Returns the character offsets of the tokens TAB ignores in a text.
IgnorableOffsets = Callable[[str], frozenset[int]]
Span = tuple[int, int]


@dataclass(frozen=True)
class SystemSpan:
    """A span masked by a system; `category` (in the project's scheme) is optional."""

    start: int
    end: int
    category: str | None = None


@dataclass
class GoldEntity:
    """One annotator's entity: its mentions and whether each needs masking (TAB's rules)."""

    entity_id: str
    annotator: str
    entity_type: str
    is_direct: bool
    need_masking: bool
    mentions: list[Span] = field(default_factory=list)
    mention_masking: list[bool] = field(default_factory=list)
    mention_types: list[str] = field(default_factory=list)


def gold_entities(document: AnnotatedDocument) -> list[GoldEntity]:
    """Group each annotator's mentions into entities, as TAB's GoldDocument does.

    Type and directness come from an entity's first mention; an entity whose mentions
    disagree on masking needs masking.
    """
    entities: list[GoldEntity] = []
    for annotator, mentions in document.annotations.items():
        by_id: dict[str, GoldEntity] = {}
        for mention in mentions:
            entity = by_id.get(mention.entity_id)
            if entity is None:
                entity = by_id[mention.entity_id] = GoldEntity(
                    entity_id=mention.entity_id,
                    annotator=annotator,
                    entity_type=mention.entity_type,
                    is_direct=mention.identifier_type == "DIRECT",
                    need_masking=mention.masked,
                )
            entity.mentions.append((mention.start, mention.end))
            entity.mention_masking.append(mention.masked)
            entity.mention_types.append(mention.entity_type)
        for entity in by_id.values():
            if set(entity.mention_masking) != {entity.need_masking}:
                entity.need_masking = True
        entities.extend(by_id.values())
    return entities


def split_by_tokens(text: str, start: int, end: int) -> list[Span]:
    """Return the [start, end) of each \\w+ token inside a span (TAB's token unit)."""
    return [(start + m.start(), start + m.end()) for m in TOKEN_PATTERN.finditer(text[start:end])]


@lru_cache(maxsize=1)
def _spacy_tagger():
    import spacy

    return spacy.load(SPACY_MODEL, disable=["ner", "lemmatizer", "parser"])


def spacy_ignorable_offsets(text: str) -> frozenset[int]:
    """Return the offsets of tokens TAB ignores, tagged by spaCy's small English pipeline."""
    offsets: set[int] = set()
    for token in _spacy_tagger()(text):
        if token.pos_ in POS_TO_IGNORE or token.lower_ in TOKENS_TO_IGNORE:
            offsets.update(range(token.idx, token.idx + len(token)))
    return frozenset(offsets)


class TokenWeighting:
    """Information content of masked spans (TAB's TokenWeighting interface)."""

    name = "base"

    def weights(self, text: str, spans: Sequence[Span]) -> list[float]:
        raise NotImplementedError


class UniformWeighting(TokenWeighting):
    """Every span weighs 1 (TAB's uniform precision)."""

    name = "uniform"

    def weights(self, text: str, spans: Sequence[Span]) -> list[float]:
        return [1.0] * len(spans)


class WordFrequencyWeighting(TokenWeighting):
    """Unigram surprisal -ln p(word) from wordfreq; a span takes its most surprising token.

    TAB's BERT weighting also takes the least probable sub-token of a span, and gives 0 to a
    span without any token.
    """

    name = "wordfreq_surprisal"

    def weights(self, text: str, spans: Sequence[Span]) -> list[float]:
        result = []
        for start, end in spans:
            tokens = TOKEN_PATTERN.findall(text[start:end])
            result.append(max((word_surprisal(t) for t in tokens), default=0.0))
        return result


@lru_cache(maxsize=100_000)
def word_surprisal(word: str) -> float:
    """Return -ln p(word) in English, from wordfreq's frequency table."""
    from wordfreq import word_frequency

    return -math.log(max(word_frequency(word.lower(), "en"), MIN_WORD_FREQUENCY))


@dataclass
class _Doc:
    document: AnnotatedDocument
    entities: list[GoldEntity]
    annotators: int
    ignorable: frozenset[int] | None = None


def _prf(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None or precision + recall == 0:
        return None if precision is None or recall is None else 0.0
    return 2 * precision * recall / (precision + recall)


class TabScorer:
    """Score system masks against a gold corpus with TAB's metrics."""

    def __init__(
        self,
        documents: Iterable[AnnotatedDocument],
        ignorable_offsets: IgnorableOffsets = spacy_ignorable_offsets,
    ) -> None:
        """Index the gold documents; `ignorable_offsets` finds tokens TAB does not count."""
        self.documents: dict[str, _Doc] = {}
        for document in documents:
            entities = gold_entities(document)
            self.documents[document.doc_id] = _Doc(
                document, entities, len({e.annotator for e in entities})
            )
        self.ignorable_offsets = ignorable_offsets

    def _check(self, system: dict[str, list[SystemSpan]]) -> None:
        unknown = sorted(set(system) - set(self.documents))
        if unknown:
            raise ValueError(f"documents not in the gold corpus: {unknown[:5]}")

    def _ignorable(self, doc: _Doc) -> frozenset[int]:
        if doc.ignorable is None:
            doc.ignorable = self.ignorable_offsets(doc.document.text)
        return doc.ignorable

    def is_mention_masked(self, doc: _Doc, masked: set[int], start: int, end: int) -> bool:
        """Return whether every character of [start, end) that matters is masked."""
        uncovered = set(range(start, end)) - masked
        if uncovered:
            uncovered -= self._ignorable(doc)
        text = doc.document.text
        return not any(text[i] not in CHARACTERS_TO_IGNORE for i in uncovered)

    @staticmethod
    def _masked_offsets(spans: list[SystemSpan]) -> set[int]:
        return {i for span in spans for i in range(span.start, span.end)}

    @staticmethod
    def _selected(entity: GoldEntity, direct: bool, quasi: bool) -> bool:
        if not entity.need_masking:
            return False
        return direct if entity.is_direct else quasi

    def entity_recall(self, system: dict[str, list[SystemSpan]], direct: bool, quasi: bool):
        """Return the share of entities with all mentions that need masking masked."""
        masked_entities = total = 0
        for doc_id, spans in system.items():
            doc = self.documents[doc_id]
            masked = self._masked_offsets(spans)
            for entity in doc.entities:
                if not self._selected(entity, direct, quasi):
                    continue
                total += 1
                masked_entities += all(
                    self.is_mention_masked(doc, masked, s, e) or not needs
                    for (s, e), needs in zip(entity.mentions, entity.mention_masking, strict=True)
                )
        return masked_entities / total if total else 0.0

    def mask_counts(
        self, system: dict[str, list[SystemSpan]], token_level: bool
    ) -> tuple[dict[str, int], dict[str, int]]:
        """Return masked and total mentions (or tokens) per entity type, over all annotators."""
        masked_by_type: dict[str, int] = defaultdict(int)
        total_by_type: dict[str, int] = defaultdict(int)
        for doc_id, spans in system.items():
            doc = self.documents[doc_id]
            masked = self._masked_offsets(spans)
            text = doc.document.text
            for entity in doc.entities:
                if not entity.need_masking:
                    continue
                units = entity.mentions
                if token_level:
                    units = [t for s, e in units for t in split_by_tokens(text, s, e)]
                for start, end in units:
                    total_by_type[entity.entity_type] += 1
                    masked_by_type[entity.entity_type] += self.is_mention_masked(
                        doc, masked, start, end
                    )
        return dict(masked_by_type), dict(total_by_type)

    def precision(
        self,
        system: dict[str, list[SystemSpan]],
        weighting: TokenWeighting,
        token_level: bool = True,
        category: str | None = None,
    ) -> float:
        """Return (weighted) precision micro-averaged over annotators.

        With `category`, only system masks of that category count, and a token is correct
        for an annotator only when they masked it with a mention of the same type.
        """
        true_positives = system_masks = 0.0
        for doc_id, spans in system.items():
            doc = self.documents[doc_id]
            text = doc.document.text
            units: list[Span] = []
            for span in spans:
                if category is not None and span.category != category:
                    continue
                if token_level:
                    units += split_by_tokens(text, span.start, span.end)
                else:
                    units.append((span.start, span.end))
            if not units:
                continue
            masked_mentions = [
                (s, e, entity.annotator, kind)
                for entity in doc.entities
                if entity.need_masking
                for (s, e), needs, kind in zip(
                    entity.mentions, entity.mention_masking, entity.mention_types, strict=True
                )
                if needs
            ]
            for (start, end), weight in zip(units, weighting.weights(text, units), strict=True):
                annotators = {
                    annotator
                    for s, e, annotator, kind in masked_mentions
                    if s <= start and e >= end and (category is None or kind == category)
                }
                true_positives += len(annotators) * weight
                system_masks += doc.annotators * weight
        return true_positives / system_masks if system_masks else 0.0

    def evaluate(
        self,
        system: dict[str, list[SystemSpan]],
        weighting: TokenWeighting | None = None,
    ) -> dict[str, object]:
        """Return TAB's measures (same names as its `evaluation.py`) plus weighted precision
        and a per-category table. Only documents present in `system` are scored, as in TAB."""
        self._check(system)
        weighting = weighting or WordFrequencyWeighting()
        uniform = UniformWeighting()
        token_masked, token_total = self.mask_counts(system, token_level=True)
        mention_masked, mention_total = self.mask_counts(system, token_level=False)
        measures: dict[str, object] = {
            "token_recall": _ratio(sum(token_masked.values()), sum(token_total.values())),
            "token_recall_by_type": {t: token_masked[t] / n for t, n in token_total.items()},
            "mention_recall": _ratio(sum(mention_masked.values()), sum(mention_total.values())),
            "recall_all_entities": self.entity_recall(system, True, True),
            "recall_direct_entities": self.entity_recall(system, True, False),
            "recall_quasi_entities": self.entity_recall(system, False, True),
            "token_precision": self.precision(system, uniform, True),
            "mention_precision": self.precision(system, uniform, False),
        }
        measures["token_f1"] = _prf(measures["token_precision"], measures["token_recall"])
        measures["weighted_token_precision"] = self.precision(system, weighting, True)
        measures["weighted_mention_precision"] = self.precision(system, weighting, False)
        measures["weighting"] = weighting.name
        measures["documents"] = len(system)
        measures["annotators"] = sorted(
            {e.annotator for doc_id in system for e in self.documents[doc_id].entities}
        )
        has_categories = any(s.category for spans in system.values() for s in spans)
        per_category = {}
        for entity_type, total in sorted(token_total.items()):
            recall = token_masked[entity_type] / total
            precision = (
                self.precision(system, uniform, True, category=entity_type)
                if has_categories
                else None
            )
            per_category[entity_type] = {
                "precision": precision,
                "recall": recall,
                "f1": _prf(precision, recall),
                "gold_tokens": total,
            }
        measures["per_category"] = per_category
        return measures


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def system_from_pairs(spans: dict[str, list[tuple[int, int]]]) -> dict[str, list[SystemSpan]]:
    """Return category-less system spans from TAB's system-output structure."""
    return {doc_id: [SystemSpan(s, e) for s, e in pairs] for doc_id, pairs in spans.items()}
