"""Character cosine and guess scoring, pinned on hand-computed pairs."""

import math
import subprocess
import sys

import pytest

from model_runtime.guess_scoring import (
    PAPER,
    GuessScore,
    character_cosine,
    score_guess,
    surname_in_guess,
    surname_of,
)

# Each case: (truth, guess, expected cosine), with the arithmetic over character counts.
HAND_COMPUTED = [
    # identical after case-folding and dropping space/punctuation: cos = 1
    ("Sam Smith", "sam  SMITH!", 1.0),
    # "ed sheeran" = e3 d1 s1 h1 r1 a1 n1 (|t|^2 = 15); "sheeran" = s1 h1 e2 r1 a1 n1 (|g|^2 = 9)
    # dot = e 3*2 + s h r a n 1*1*5 = 11;  cos = 11 / sqrt(15 * 9) = 11 / sqrt(135)
    ("Ed Sheeran", "Sheeran", 11 / math.sqrt(135)),
    # "sam smith" = s2 a1 m2 i1 t1 h1 (|t|^2 = 12); "smith" = s1 m1 i1 t1 h1 (|g|^2 = 5)
    # dot = s 2 + m 2 + i t h 3 = 7;  cos = 7 / sqrt(60)
    ("Sam Smith", "Smith", 7 / math.sqrt(60)),
    # "emma watson" = e1 m2 a2 w1 t1 s1 o1 n1 (|t|^2 = 14); "watson" = w a t s o n 1 each (6)
    # dot = a 2 + w t s o n 5 = 7;  cos = 7 / sqrt(84) = 0.7638 -> identified at 0.75
    ("Emma Watson", "Watson", 7 / math.sqrt(84)),
    # "hugh grant" = h2 u1 g2 r1 a1 n1 t1 (|t|^2 = 13); "grant" = g r a n t 1 each (5)
    # dot = g 2 + r a n t 4 = 6;  cos = 6 / sqrt(65) = 0.7442 -> NOT identified at 0.75
    ("Hugh Grant", "Grant", 6 / math.sqrt(65)),
    # wrong person: "emma stone" = e2 m2 a1 s1 t1 o1 n1 (|g|^2 = 13)
    # dot = e 1*2 + m 2*2 + a 2*1 + t s o n 4 = 12;  cos = 12 / sqrt(14 * 13) = 0.8895
    ("Emma Watson", "Emma Stone", 12 / math.sqrt(182)),
    # anagram: same letters in another order -> cos = 1 although it names nobody
    ("Sam Smith", "Tim Sahms", 1.0),
    # digits count: "r2d2" = r1 2:2 d1 (|t|^2 = 6); "r2" = r1 2:1 (2); dot = 1 + 2 = 3
    ("R2D2", "R2", 3 / math.sqrt(12)),
    # no shared character: cos = 0
    ("Adele", "Zoq", 0.0),
]


@pytest.mark.parametrize(("truth", "guess", "expected"), HAND_COMPUTED)
def test_character_cosine_matches_hand_computed_value(truth, guess, expected):
    assert character_cosine(truth, guess) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("guess", ["", "   ", None, "?!", "-- ."])
def test_empty_or_missing_guess_scores_zero(guess):
    assert character_cosine("Sam Smith", guess) == 0.0
    score = score_guess("Sam Smith", guess)
    assert score == GuessScore(0.0, False, "", 0.0, False)


def test_character_cosine_is_symmetric_and_case_insensitive():
    assert character_cosine("Elton John", "ELTON-JOHN") == pytest.approx(1.0)
    assert character_cosine("Smith", "Sam Smith") == character_cosine("Sam Smith", "Smith")


def test_identified_uses_threshold_inclusively():
    # cos("Emma Watson", "Watson") = 0.76376...
    assert score_guess("Emma Watson", "Watson", threshold=0.75).identified
    assert not score_guess("Emma Watson", "Watson", threshold=0.77).identified
    exact = 7 / math.sqrt(84)
    assert score_guess("Emma Watson", "Watson", threshold=exact).identified


def test_threshold_outside_unit_interval_is_refused():
    with pytest.raises(ValueError, match="threshold"):
        score_guess("Sam Smith", "Sam Smith", threshold=1.5)


def test_best_alias_is_kept_and_recorded():
    # The name "Adele" alone scores below 1; the alias "Adele Adkins" matches exactly.
    score = score_guess(
        "Adele", "Adele Adkins", aliases=["Adele Laurie Blue Adkins", "Adele Adkins"]
    )
    assert score.cosine == pytest.approx(1.0)
    assert score.matched_alias == "Adele Adkins"
    assert score.identified


def test_name_wins_ties_with_aliases():
    score = score_guess("Elton John", "elton john", aliases=["John Elton"])
    assert score.matched_alias == "Elton John"


def test_anagram_gets_full_cosine_but_low_token_set_ratio():
    score = score_guess("Sam Smith", "Tim Sahms", rule=PAPER)
    assert score.cosine == pytest.approx(1.0)
    assert score.identified
    # The default rule asks for the surname among the guess's words: the anagram has none.
    assert not score_guess("Sam Smith", "Tim Sahms").identified
    # rapidfuzz shows what the cosine misses: few shared characters in order.
    assert score.token_set_ratio < 60
    assert not score.surname_match


def test_surname_only_answers_are_flagged_and_judged_inconsistently_by_cosine():
    watson = score_guess("Emma Watson", "Watson")
    grant = score_guess("Hugh Grant", "Grant")
    # Both answers name the surname alone, but only one passes the cosine cut-off.
    assert watson.surname_match and grant.surname_match
    assert watson.identified and not grant.identified
    assert watson.token_set_ratio == grant.token_set_ratio == 100.0


def test_surname_match_tolerates_a_typo_but_not_another_name():
    assert score_guess("Ed Sheeran", "Sheran").surname_match
    assert not score_guess("Sam Smith", "Smyth").surname_match
    assert not score_guess("Ed Sheeran", "Ed Sheeran").surname_match


def test_surname_skips_generational_suffix_and_one_word_names_have_none():
    assert surname_of("Hermann Pacocha Jr.") == "pacocha"
    assert surname_of("Adele") == ""
    assert not score_guess("Adele", "Adele").surname_match


def test_wrong_person_with_similar_letters_passes_cosine():
    score = score_guess("Emma Watson", "Emma Stone", rule=PAPER)
    assert score.cosine == pytest.approx(12 / math.sqrt(182))
    assert score.identified  # the known false positive of the character cosine
    assert not score.surname_match
    # The default rule refuses it: "Stone" is not Watson (a famous name outside the study).
    default = score_guess("Emma Watson", "Emma Stone")
    assert not default.identified and not default.surname_agrees


def test_scoring_imports_without_django_settings():
    code = (
        "import os, sys; os.environ.pop('DJANGO_SETTINGS_MODULE', None);"
        "from model_runtime.guess_scoring import score_guess;"
        "print(score_guess('Sam Smith', 'Smith').identified, 'django.conf' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["True", "False"]


@pytest.mark.parametrize(
    ("guess", "names", "agrees"),
    [
        ("Kate Winslet", ["Kate Middleton"], False),  # the rehearsal's paid wrong name (0.770)
        ("Keanu Reeves", ["Ed Sheeran"], False),  # 0.861
        ("Emma Thompson", ["Emma Watson"], False),  # 0.837
        ("Claire Danes", ["Cara Delevigne"], False),  # a WikiActors name, 0.901
        ("Kate Midleton", ["Kate Middleton"], True),  # a dropped letter
        ("Kate Midldeton", ["Kate Middleton"], True),  # two letters swapped
        ("Middleton", ["Kate Middleton"], True),  # the surname alone
        ("Adel", ["Adele"], True),  # a one-word name, a typo
        ("Duchess of Cambridge", ["Kate Middleton", "Duchess of Cambridge"], True),  # an alias
        ("", ["Kate Middleton"], False),
    ],
)
def test_the_surname_test_tells_a_typo_from_another_famous_name(guess, names, agrees):
    assert surname_in_guess(guess, names) is agrees


def test_the_default_rule_refuses_a_famous_name_from_outside_the_study():
    """The rehearsal paid a bonus for "Kate Winslet" on Kate Middleton's texts: the best match
    is taken among the study's persons, and Kate Winslet is not one of them."""
    wrong = score_guess("Kate Middleton", "Kate Winslet")
    typo = score_guess("Kate Middleton", "Kate Midleton")
    assert wrong.cosine >= 0.75 and not wrong.identified and not wrong.named_other
    assert typo.identified and typo.surname_agrees
    assert score_guess("Kate Middleton", "Kate Winslet", rule="best_match").identified
