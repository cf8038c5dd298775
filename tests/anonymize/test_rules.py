"""The deterministic masking rules: what each one masks, and that none ever unmasks."""

from __future__ import annotations

import pytest

from anonymize.placeholders import Span, render
from anonymize.rules import DEFAULT_RULES, RULE_ORDER, apply_rules, resolve_rules


def span_at(text: str, value: str, category: str, occurrence: int = 0) -> Span:
    """Return a model-like span over the `occurrence`-th `value` in `text`."""
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(value, start + 1)
    return Span(start, start + len(value), value, category, "", 0.9)


# (rule, text, model spans as (value, category), expected masked (value, category) added)
RULE_CASES = [
    ("digits", "He ran 42 km in 1998.", [], [("42", "NUMERIC"), ("1998", "DATE")]),
    ("digits", "Born on the 5th, aged 33.", [], [("5", "NUMERIC"), ("33", "NUMERIC")]),
    ("digits", "Flat 12b on floor 3", [], [("12", "NUMERIC"), ("3", "NUMERIC")]),
    ("months", "Born in March, married in may.", [], [("March", "DATE")]),
    ("months", "every january and in DECEMBER", [], [("january", "DATE"), ("DECEMBER", "DATE")]),
    ("months", "She may march on.", [], []),
    (
        "number_words",
        "Two sons, one of twenty-one, and Eleven cats.",
        [],
        [
            ("Two", "NUMERIC"),
            ("one", "NUMERIC"),
            ("twenty", "NUMERIC"),
            ("one", "NUMERIC"),
            ("Eleven", "NUMERIC"),
        ],
    ),
    ("number_words", "someone alone", [], []),
    (
        "urls",
        "See https://example.org/about, or www.mara-q.net.",
        [],
        [
            ("https://example.org/about", "OTHER_IDENTIFYING_ATTRIBUTE"),
            ("www.mara-q.net", "OTHER_IDENTIFYING_ATTRIBUTE"),
        ],
    ),
    (
        "urls",
        "Her site is quillfeather.co/shop today.",
        [],
        [("quillfeather.co/shop", "OTHER_IDENTIFYING_ATTRIBUTE")],
    ),
    (
        "emails",
        "Write to mara.q+news@bakery.example.com.",
        [],
        [("mara.q+news@bakery.example.com", "EMAIL_ADDRESS")],
    ),
    (
        "phones",
        "Call +44 20 7946 0958 or (0161) 496-0000.",
        [],
        [("+44 20 7946 0958", "PHONE_NUMBER"), ("(0161) 496-0000", "PHONE_NUMBER")],
    ),
    ("phones", "From 1990-2000 and 1990 2005 she won 1234567.", [], []),
    (
        "every_occurrence",
        "Black met Jack Black; the black cat.",
        [("Black", "PERSON_LASTNAME", 1)],
        [("Black", "PERSON_LASTNAME"), ("black", "PERSON_LASTNAME")],
    ),
    (
        "every_occurrence",
        "Two dogs. He had two cats and Rolling Stones records; rolling stones.",
        [("Two", "NUMERIC", 0), ("Rolling Stones", "ORGANIZATION", 0)],
        [("two", "NUMERIC"), ("rolling stones", "ORGANIZATION")],
    ),
    (
        "every_occurrence",
        "He said he was in Leeds. he left.",
        [("He", "PRONOUN", 0), ("Leeds", "LOCATION", 0)],
        [("he", "PRONOUN"), ("he", "PRONOUN")],
    ),
]


@pytest.mark.parametrize(("rule", "text", "model", "expected"), RULE_CASES)
def test_rule_masks_exactly_its_table_row(rule, text, model, expected):
    spans = [span_at(text, value, category, occ) for value, category, occ in model]
    added = [s for s in apply_rules(text, spans, [rule]) if s not in spans]
    assert [(s.text, s.category) for s in added] == expected


def test_rule_never_unmasks_shortens_or_recategorises_a_model_span():
    text = "In 1990s Leeds, born 1 May 1990, phone 0113 496 0000."
    model = [
        span_at(text, "1990s", "DATE"),
        span_at(text, "Leeds, born 1", "OTHER_IDENTIFYING_ATTRIBUTE"),
        span_at(text, "496", "NUMERIC"),
    ]
    result = apply_rules(text, model, RULE_ORDER)
    for span in model:
        assert span in result
    # Ranges that overlap a model span are clipped to the uncovered part.
    added = [(s.text, s.category) for s in result if s not in model]
    assert ("0113", "PHONE_NUMBER") in added and ("0000", "PHONE_NUMBER") in added
    assert ("May", "DATE") in added and ("1990", "DATE") in added
    assert render(text, result).count("1990") == 0


def test_every_digit_is_masked_with_the_digit_rule():
    text = "Room 101, 7 Elm St., ZIP 90210; 3rd of 4 sons; born 2001; 12:30."
    masked = apply_rules(text, [], ["digits"])
    covered = {i for s in masked for i in range(s.start, s.end)}
    assert all(i in covered for i, c in enumerate(text) if c.isdigit())
    assert not any(c.isdigit() for c in render(text, masked, operator="category"))


def test_resolve_rules_names_and_errors():
    assert resolve_rules("none") == ()
    assert resolve_rules("all") == RULE_ORDER
    assert resolve_rules(None) == DEFAULT_RULES == resolve_rules("default")
    assert resolve_rules("digits,months") == ("months", "digits")
    with pytest.raises(ValueError, match="unknown rules"):
        resolve_rules("digits,emails_typo")


def test_anonymizer_applies_rules_only_when_switched_on(fake_anonymizer_factory):
    words = {"mara": "PERSON_FIRSTNAME"}
    text = "Mara ran 42 km in June."
    plain = fake_anonymizer_factory(words, rules="none").anonymize(text)
    ruled = fake_anonymizer_factory(words, rules="all").anonymize(text)
    assert plain.text == "PERSON_FIRSTNAME_1 ran 42 km in June."
    assert ruled.text == "PERSON_FIRSTNAME_1 ran NUMERIC_1 km in DATE_1."
