"""Placeholder indexing, operators and re-rendering of edited spans."""

from __future__ import annotations

import pytest

from anonymize import Span, render
from anonymize.placeholders import assign_placeholders, get_operator, pronoun_marker


def spans_for(text: str, items: list[tuple[str, str]]) -> list[Span]:
    """Build spans for the first occurrence (left to right) of each (string, category)."""
    spans, cursor = [], 0
    for string, category in items:
        start = text.index(string, cursor)
        spans.append(Span(start, start + len(string), string, category, "", 1.0))
        cursor = start + len(string)
    return spans


@pytest.mark.parametrize(
    ("text", "items", "expected"),
    [
        (
            "London is big. I love London.",
            [("London", "LOCATION"), ("London", "LOCATION")],
            "LOCATION_1 is big. I love LOCATION_1.",
        ),
        (
            "Ada met Bob in Rome and Paris.",
            [
                ("Ada", "PERSON_FIRSTNAME"),
                ("Bob", "PERSON_FIRSTNAME"),
                ("Rome", "LOCATION"),
                ("Paris", "LOCATION"),
            ],
            "PERSON_FIRSTNAME_1 met PERSON_FIRSTNAME_2 in LOCATION_1 and LOCATION_2.",
        ),
        (
            "Jo Smith and jo smith",
            [("Jo Smith", "PERSON_FIRSTNAME"), ("jo smith", "PERSON_FIRSTNAME")],
            "PERSON_FIRSTNAME_1 and PERSON_FIRSTNAME_1",
        ),
        (
            "Paris the city, Paris the person",
            [("Paris", "LOCATION"), ("Paris", "PERSON_FIRSTNAME")],
            "LOCATION_1 the city, PERSON_FIRSTNAME_1 the person",
        ),
        (
            "She met Dr. Lee and Mrs Kay; he left.",
            [
                ("She", "PRONOUN"),
                ("Dr.", "PRONOUN"),
                ("Lee", "PERSON_LASTNAME"),
                ("Mrs", "PRONOUN"),
                ("Kay", "PERSON_LASTNAME"),
                ("he", "PRONOUN"),
            ],
            "PRONOUN met TITLE PERSON_LASTNAME_1 and MR/MS PERSON_LASTNAME_2; PRONOUN left.",
        ),
    ],
)
def test_placeholders_index_each_distinct_value_per_category(text, items, expected):
    assert render(text, spans_for(text, items)) == expected


@pytest.mark.parametrize(
    ("operator", "expected"),
    [
        ("placeholder", "PERSON_FIRSTNAME_1 lives in LOCATION_1; PRONOUN likes LOCATION_1."),
        ("category", "[PERSON_FIRSTNAME] lives in [LOCATION]; [PRONOUN] likes [LOCATION]."),
        ("redact", "*** lives in ***; *** likes ***."),
    ],
)
def test_operators_replace_every_span(operator, expected):
    text = "Ana lives in Lima; she likes Lima."
    items = [
        ("Ana", "PERSON_FIRSTNAME"),
        ("Lima", "LOCATION"),
        ("she", "PRONOUN"),
        ("Lima", "LOCATION"),
    ]
    assert render(text, spans_for(text, items), operator=operator) == expected


def test_render_reindexes_researcher_edited_spans_in_text_order():
    text = "Ana met Ben."
    # Given out of order and with stale placeholders, as an edit UI might send them.
    edited = [
        Span(8, 11, "Ben", "PERSON_FIRSTNAME", "PERSON_FIRSTNAME_9", 1.0),
        Span(0, 3, "Ana", "PERSON_FIRSTNAME", "PERSON_FIRSTNAME_9", 1.0),
    ]
    assert render(text, edited) == "PERSON_FIRSTNAME_1 met PERSON_FIRSTNAME_2."
    assert [s.placeholder for s in assign_placeholders(edited)] == [
        "PERSON_FIRSTNAME_1",
        "PERSON_FIRSTNAME_2",
    ]


def test_render_rejects_overlapping_spans():
    spans = [Span(0, 5, "Ana B", "LOCATION", "", 1.0), Span(4, 8, "Ben", "LOCATION", "", 1.0)]
    with pytest.raises(ValueError, match="overlapping"):
        render("Ana Ben x", spans)


def test_unknown_operator_is_named_in_the_error():
    with pytest.raises(ValueError, match="unknown operator 'mask'"):
        get_operator("mask")


@pytest.mark.parametrize(
    ("word", "marker"),
    [
        ("he", "PRONOUN"),
        ("Her", "PRONOUN"),
        ("Mr", "MR/MS"),
        ("Mrs.", "MR/MS"),
        ("Dr.", "TITLE"),
        ("Sir", "TITLE"),
    ],
)
def test_pronoun_items_render_as_textwash_markers(word, marker):
    assert pronoun_marker(word) == marker


def test_span_from_dict_round_trips_to_dict_and_cuts_its_text_from_the_original():
    text = "Anna lives in Oslo."
    span = Span(14, 18, "Oslo", "LOCATION", "LOCATION_1", 0.9)
    assert Span.from_dict(span.to_dict(), text) == span
    # The object's own text is never trusted; a hand-made span has no placeholder yet.
    assert Span.from_dict({"start": 0, "end": 4, "category": "X", "text": "?"}, text) == Span(
        0, 4, "Anna", "X", "", 1.0
    )


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"start": 0, "end": 99, "category": "DATE"}, ValueError),
        ({"start": 5, "end": 2, "category": "DATE"}, ValueError),
        ({"start": "x", "end": 2, "category": "DATE"}, ValueError),
        ({"end": 2, "category": "DATE"}, KeyError),
        ({"start": None, "end": 2, "category": "DATE"}, TypeError),
    ],
)
def test_span_from_dict_refuses_malformed_objects(data, error):
    with pytest.raises(error):
        Span.from_dict(data, "Anna lives in Oslo.")
