"""Recovering word labels from (original, Textwash output) pairs."""

from __future__ import annotations

import pytest

from anonymize.alignment import align_pair, align_record, tokenize_textwash


def labelled(original: str, textwash: str) -> list[tuple[str, str | None]]:
    words, labels, _ = align_pair(original, textwash)
    return [(w.text, label) for w, label in zip(words, labels, strict=True)]


@pytest.mark.parametrize(
    ("original", "textwash", "expected"),
    [
        (
            "Mara Quill was born in Lisbon.",
            "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 was born in LOCATION_1.",
            [
                ("Mara", "B-PERSON_FIRSTNAME"),
                ("Quill", "B-PERSON_LASTNAME"),
                ("was", "NONE"),
                ("born", "NONE"),
                ("in", "NONE"),
                ("Lisbon", "B-LOCATION"),
                (".", "NONE"),
            ],
        ),
        (
            "Born on 5 May 1970 here",
            "Born on DATE_2 here",
            [
                ("Born", "NONE"),
                ("on", "NONE"),
                ("5", "B-DATE"),
                ("May", "I-DATE"),
                ("1970", "I-DATE"),
                ("here", "NONE"),
            ],
        ),
        (
            # Textwash repeats one placeholder per word of a multi-word entity.
            "Born on 5 May 1970 here",
            "Born on DATE_1 DATE_1 DATE_1 here",
            [
                ("Born", "NONE"),
                ("on", "NONE"),
                ("5", "B-DATE"),
                ("May", "I-DATE"),
                ("1970", "I-DATE"),
                ("here", "NONE"),
            ],
        ),
        (
            # Suffix fragments survive: "21st" -> "NUMERIC_5st".
            "the 21st century",
            "the NUMERIC_5st century",
            [("the", "NONE"), ("21", "B-NUMERIC"), ("st", "NONE"), ("century", "NONE")],
        ),
        (
            "Yes, he and Dr Vane.",
            "Yes, PRONOUN and TITLE PERSON_LASTNAME_1.",
            [
                ("Yes", "NONE"),
                (",", "NONE"),
                ("he", "B-PRONOUN"),
                ("and", "NONE"),
                ("Dr", "B-PRONOUN"),
                ("Vane", "B-PERSON_LASTNAME"),
                (".", "NONE"),
            ],
        ),
        (
            # Two placeholders for three words: which word is which cannot be told.
            "met Ana Lu Vo today",
            "met PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 today",
            [("met", "NONE"), ("Ana", None), ("Lu", None), ("Vo", None), ("today", "NONE")],
        ),
    ],
)
def test_placeholders_are_read_back_onto_original_words(original, textwash, expected):
    assert labelled(original, textwash) == expected


def test_whitespace_normalisation_does_not_break_alignment():
    assert labelled("a  Lisbon\n\n", "a LOCATION_1") == [("a", "NONE"), ("Lisbon", "B-LOCATION")]


def record(original: str, textwash: str, person: str = "mara quill") -> dict:
    return {
        "id": "x",
        "person": person,
        "type": "fictitious",
        "original": original,
        "textwash": textwash,
    }


@pytest.mark.parametrize(
    ("original", "textwash", "reason"),
    [
        (
            "Mara went to Leeds on Monday.",
            "PERSON_FIRSTNAME_1 went to LOCATION DATE_1.",
            "bare_category_cascade",
        ),
        # One index for two values happens in clean outputs too (README quirk 4): kept.
        ("two occasions and 8 children", "NUMERIC_1 occasions and NUMERIC_1 children", None),
        (
            "x a y b z c",
            "x NUMERIC_1 y NUMERIC_1 z NUMERIC_1",
            "placeholder_reused_for_many_values",
        ),
        ("one two three four five six seven", "one zzz", "unaligned_words"),
    ],
)
def test_broken_outputs_are_dropped_with_a_reason(original, textwash, reason):
    assert align_record(record(original, textwash)).drop_reason == reason


def test_surviving_target_name_is_relabelled_but_common_words_are_not():
    document = align_record(
        record(
            "Mara Black has black hair. quill",
            "PERSON_FIRSTNAME_1 Black has black hair. quill",
            person="mara black",
        )
    )
    labels = dict(zip([w.text for w in document.words], document.labels, strict=True))
    assert labels["Black"] == "B-PERSON_LASTNAME"
    assert labels["black"] == "NONE"
    assert document.relabelled_names == 1


def test_textwash_tokens_split_placeholders_from_glued_suffixes():
    tokens = tokenize_textwash("NUMERIC_5st MR/MS PRONOUN's DATE")
    assert [(t.text, t.category, t.index, t.bare) for t in tokens] == [
        ("NUMERIC_5", "NUMERIC", 5, False),
        ("st", None, None, False),
        ("MR/MS", "PRONOUN", None, False),
        ("PRONOUN", "PRONOUN", None, False),
        ("'", None, None, False),
        ("s", None, None, False),
        ("DATE", "DATE", None, True),
    ]
