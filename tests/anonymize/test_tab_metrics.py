"""TAB's metrics against hand-computed values (the fixture is worked through in comments)."""

import pytest

from anonymize.annotations.schema import AnnotatedDocument, Mention
from anonymize.annotations.tab_metrics import (
    SystemSpan,
    TabScorer,
    UniformWeighting,
    WordFrequencyWeighting,
    gold_entities,
)

TEXT = "John Doe met the applicant in Oslo on 1 May 2020. Doe is a researcher 🧪 from Bergen."


def span(value: str, occurrence: int = 0) -> tuple[int, int]:
    start = -1
    for _ in range(occurrence + 1):
        start = TEXT.index(value, start + 1)
    return start, start + len(value)


def mention(value, entity, kind, identifier, occurrence=0):
    start, end = span(value, occurrence)
    return Mention(start, end, kind, entity, identifier)


def gold() -> AnnotatedDocument:
    # Annotator a1: "John Doe" and a second mention "Doe" (one DIRECT entity), Oslo and the
    # date (QUASI). Annotator a2: "John Doe" (DIRECT), "researcher" (QUASI) and Bergen,
    # which needs no masking.
    return AnnotatedDocument(
        "d1",
        TEXT,
        {
            "a1": [
                mention("John Doe", "e1", "PERSON", "DIRECT"),
                mention("Doe", "e1", "PERSON", "DIRECT", occurrence=1),
                mention("Oslo", "e2", "LOC", "QUASI"),
                mention("1 May 2020", "e3", "DATETIME", "QUASI"),
            ],
            "a2": [
                mention("John Doe", "f1", "PERSON", "DIRECT"),
                mention("researcher", "f3", "DEM", "QUASI"),
                mention("Bergen", "f4", "LOC", "NO_MASK"),
            ],
        },
    )


def scorer() -> TabScorer:
    return TabScorer([gold()], ignorable_offsets=lambda text: frozenset())


# The system masks "John Doe", "Oslo", "1 May" (not "2020") and "researcher", and misses the
# second "Doe".
SYSTEM = {
    "d1": [
        SystemSpan(*span("John Doe"), "PERSON"),
        SystemSpan(*span("Oslo"), "LOC"),
        SystemSpan(*span("1 May"), "DATETIME"),
        SystemSpan(*span("researcher"), "PERSON"),
    ]
}


def test_an_entity_with_one_missed_mention_counts_as_not_masked():
    # a1's e1 has two mentions and the second "Doe" is missed: e1 is a false negative.
    # Direct entities: e1 (missed), f1 (masked) -> 1/2.
    assert scorer().entity_recall(SYSTEM, direct=True, quasi=False) == pytest.approx(0.5)


def test_entity_recall_on_quasi_identifiers():
    # e2 Oslo masked, e3 date partly masked (2020 left) -> not masked, f3 masked -> 2/3;
    # f4 (NO_MASK) is not counted.
    assert scorer().entity_recall(SYSTEM, direct=False, quasi=True) == pytest.approx(2 / 3)


def test_token_and_mention_recall_micro_average_over_annotators():
    measures = scorer().evaluate(SYSTEM, UniformWeighting())
    # Tokens to mask: a1 John Doe Doe Oslo 1 May 2020 (7), a2 John Doe researcher (3);
    # masked: a1 John Doe Oslo 1 May (5) + a2 all 3 = 8 of 10.
    assert measures["token_recall"] == pytest.approx(0.8)
    # Mentions: a1 4 (2 masked), a2 2 (both masked) -> 4/6.
    assert measures["mention_recall"] == pytest.approx(4 / 6)
    assert measures["recall_all_entities"] == pytest.approx(3 / 5)
    assert measures["token_recall_by_type"] == pytest.approx(
        {"PERSON": 4 / 5, "LOC": 1.0, "DATETIME": 2 / 3, "DEM": 1.0}
    )


def test_precision_is_the_share_of_annotators_who_masked_each_token():
    measures = scorer().evaluate(SYSTEM, UniformWeighting())
    # 6 masked tokens x 2 annotators = 12; John 2, Doe 2, Oslo 1, 1 1, May 1, researcher 1.
    assert measures["token_precision"] == pytest.approx(8 / 12)
    # Spans: John Doe 2, Oslo 1, "1 May" inside a1's date 1, researcher 1 -> 5 / 8.
    assert measures["mention_precision"] == pytest.approx(5 / 8)
    assert measures["token_f1"] == pytest.approx(2 * (8 / 12) * 0.8 / (8 / 12 + 0.8))


def test_per_category_precision_needs_the_annotators_category():
    per_category = scorer().evaluate(SYSTEM, UniformWeighting())["per_category"]
    # PERSON masks: John, Doe (both annotators, PERSON) and researcher (a2 says DEM) ->
    # (2 + 2 + 0) / (3 x 2).
    assert per_category["PERSON"]["precision"] == pytest.approx(4 / 6)
    assert per_category["PERSON"]["recall"] == pytest.approx(4 / 5)
    assert per_category["DEM"]["precision"] == pytest.approx(0.0)


def test_weighted_precision_weighs_rare_words_more():
    weighted = scorer().evaluate(SYSTEM, WordFrequencyWeighting())
    uniform = scorer().evaluate(SYSTEM, UniformWeighting())
    assert weighted["weighting"] == "wordfreq_surprisal"
    assert 0 < weighted["weighted_token_precision"] < 1
    assert weighted["weighted_token_precision"] != pytest.approx(uniform["token_precision"])
    weights = WordFrequencyWeighting().weights("the Lindqvist", [(0, 3), (4, 13)])
    assert weights[1] > weights[0] > 0


def test_ignored_tokens_and_punctuation_do_not_block_a_mention():
    document = AnnotatedDocument(
        "d", "Mr. Smith, of the Court.", {"a": [Mention(0, 9, "PERSON", "e", "DIRECT")]}
    )
    ignore_mr = TabScorer([document], ignorable_offsets=lambda text: frozenset({0, 1}))
    # "Smith" masked; "Mr" is ignorable and "." a character TAB ignores.
    assert ignore_mr.evaluate({"d": [SystemSpan(4, 9)]})["mention_recall"] == 1.0
    strict = TabScorer([document], ignorable_offsets=lambda text: frozenset())
    assert strict.evaluate({"d": [SystemSpan(4, 9)]})["mention_recall"] == 0.0


def test_inconsistently_masked_entity_needs_masking_and_takes_its_first_type():
    document = AnnotatedDocument(
        "d",
        "Ann and Ann",
        {"a": [Mention(0, 3, "PERSON", "e", "NO_MASK"), Mention(8, 11, "MISC", "e", "QUASI")]},
    )
    (entity,) = gold_entities(document)
    assert entity.need_masking and entity.entity_type == "PERSON" and not entity.is_direct


def test_unknown_documents_are_refused():
    with pytest.raises(ValueError, match="not in the gold corpus"):
        scorer().evaluate({"nope": []})
