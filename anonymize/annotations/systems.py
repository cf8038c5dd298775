"""Systems to evaluate against annotations: the anonymizer at any threshold and spaCy NER.

Each returns, per text, the masked character spans with the model category that masked them;
callers map categories into their annotation scheme.
"""

from __future__ import annotations

from collections.abc import Sequence

from anonymize.annotations.tab_metrics import SystemSpan
from anonymize.baseline_spacy import PRONOUN_WORDS, SPACY_MODEL, SPACY_TO_CATEGORY
from anonymize.protocol import TextAnonymizer


def model_spans(
    anonymizer: TextAnonymizer, texts: Sequence[str], threshold: float | None = None
) -> list[list[SystemSpan]]:
    """Return the spans the anonymizer replaces in each text (threshold None = its own)."""
    results = anonymizer.anonymize_many(list(texts), threshold=threshold)
    return [[SystemSpan(s.start, s.end, s.category) for s in r.spans] for r in results]


def spacy_spans(texts: Sequence[str], nlp=None) -> list[list[SystemSpan]]:
    """Return spaCy NER masks: every mapped entity, PERSON split into first and last names,
    and the gendered pronouns and titles Textwash masks (as the spaCy baseline does)."""
    if nlp is None:
        import spacy

        nlp = spacy.load(SPACY_MODEL, disable=["lemmatizer"])
    results = []
    for doc in nlp.pipe(list(texts), batch_size=32):
        spans: list[SystemSpan] = []
        covered: set[int] = set()
        for entity in doc.ents:
            if entity.label_ == "PERSON":
                for offset, token in enumerate(entity):
                    category = "PERSON_FIRSTNAME" if offset == 0 else "PERSON_LASTNAME"
                    spans.append(SystemSpan(token.idx, token.idx + len(token.text), category))
            elif entity.label_ in SPACY_TO_CATEGORY:
                spans.append(
                    SystemSpan(entity.start_char, entity.end_char, SPACY_TO_CATEGORY[entity.label_])
                )
            else:
                continue
            covered.update(range(entity.start_char, entity.end_char))
        for token in doc:
            if token.lower_ in PRONOUN_WORDS and token.idx not in covered:
                spans.append(SystemSpan(token.idx, token.idx + len(token.text), "PRONOUN"))
        results.append(sorted(spans, key=lambda s: s.start))
    return results
