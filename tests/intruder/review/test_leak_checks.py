"""Leak checks beyond the target's name: glued placeholders, a name placeholder of the wrong
kind for its context, capitalised words left in clear (patterns seen in the shipped model's
output, issue 9)."""

import pytest

from intruder.selectors.leak_checks import BLOCKING_KINDS, leak_findings

NAMES = ["Ottilie Brandt"]


@pytest.mark.parametrize(
    ("text", "kind", "flagged"),
    [
        ("PRONOUN is a fortyNUMERIC_1 year old sailor.", "glued", "fortyNUMERIC_1"),
        ("PRONOUN was born to a LOCATION_1-Senegalese family.", "glued", "LOCATION_1-Senegalese"),
        ("An Anglo-LOCATION_1 singer.", "glued", "Anglo-LOCATION_1"),
        ("PRONOUN surname is PERSON_FIRSTNAME_2 and PRONOUN sings.", "name_kind", "surname is"),
        ("Her first name was PERSON_LASTNAME_1.", "name_kind", "first name was"),
        ("PRONOUN won the OTHER_IDENTIFYING_ATTRIBUTE_1 Latin Grammy.", "capitalised", "Latin"),
        ("PRONOUN grew up in LOCATION_1, Texas, with a dog.", "capitalised", "Texas"),
        ("PRONOUN studied at the Royal Academy of Music for years.", "capitalised", "Music"),
        ("Ottilie sings.", "target_name", "Ottilie"),
    ],
)
def test_leaks_are_flagged_with_their_kind_and_place(text, kind, flagged):
    findings = [f for f in leak_findings(text, NAMES) if f.kind == kind]
    assert findings, leak_findings(text, NAMES)
    assert flagged in text[findings[0].start : findings[0].end] or flagged in findings[0].message


@pytest.mark.parametrize(
    "text",
    [
        "PRONOUN finished NUMERIC_1th in the NUMERIC_2ft race in DATE_1.",
        "In DATE_1 PRONOUN moved to LOCATION_1. The move was hard.",
        "Born in DATE_1, PRONOUN studied at ORGANIZATION_1.",
        "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 is a singer. PRONOUN is NUMERIC_1 years old.",
        "I think PRONOUN is kind.",
    ],
)
def test_texts_textwash_would_write_are_not_flagged(text):
    assert leak_findings(text, NAMES) == []


def test_capitalised_words_are_a_hint_not_a_hold_back():
    assert "capitalised" not in BLOCKING_KINDS
    assert {"target_name", "glued", "name_kind"} <= BLOCKING_KINDS
