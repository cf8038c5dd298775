"""The canary matcher: the edits a person makes to hide an echo, and honest near-misses."""

import base64
import re

import pytest

from intruder.evidence.canary import (
    canary_encoded,
    canary_in,
    canary_instruction,
    new_canary_word,
)

WORD = "zavokeji"


@pytest.mark.parametrize(
    "answer",
    [
        "A keeper of lights. zavokeji",
        "ZAVOKEJI",
        "Zavokejis",  # plural
        "zavokejies",
        "the zavokeji's maps",
        "zavo-keji",  # hyphen split
        "zavo keji",  # space split
        "za_vo_ke_ji",  # underscores
        "z.a.v.o.k.e.j.i",
        "zavo\u200bkeji",  # zero-width space
        "zаvоkеji",  # Cyrillic а, о, е
        "ΖΑVΟΚΕJΙ",  # Greek capitals
        "ｚａｖｏｋｅｊｉ",  # fullwidth
        "zàvókéjí",  # accents
        "zav0kej1",  # digits for letters
        "zavokei",  # one letter dropped
        "zavokeji".replace("k", "c"),  # one letter changed
        "zavvokeji",  # one letter added
        "zavokejix nothing else",
        # Issue 48: two edits, the word reversed, its halves apart.
        "zakoveji",  # two letters apart swapped (two edits)
        "zvaokeji",  # one swap
        "zavokkejii",  # two letters added
        "zvaokejii",  # a swap and an insertion
        "ijekovaz",  # reversed
        "ijek ovaz",
        "ijekxvaz",
        "zavo kexi",  # split in two words, one edit
        "keji is the word, and zavo",  # halves far apart and swapped
        "zavo, then much later: keji",
    ],
)
def test_an_edited_echo_of_the_canary_is_found(answer):
    assert canary_in(answer, WORD)


@pytest.mark.parametrize(
    "answer",
    [
        "A sailor who keeps lights near the harbour.",
        "Maybe Javier, a joker from Zagreb who loves the Kevin Bacon movies.",
        "zavo",  # half of it
        "zakxvxjo",  # three edits
        "keji",
        "ijexxvaz",  # reversed, two edits
        "zaxo kexi",  # split in two words, two edits
        "No idea.",
        "",
    ],
)
def test_honest_answers_and_near_misses_are_not_matched(answer):
    assert not canary_in(answer, WORD)


def test_an_empty_canary_matches_nothing():
    assert not canary_in("anything at all", "")


def test_short_words_must_match_exactly():
    assert canary_in("the zavo", "zavo")
    assert not canary_in("the zavu", "zavo")


def test_canary_words_are_made_up_with_at_least_two_rare_letters():
    for _ in range(200):
        word = new_canary_word()
        assert re.fullmatch(r"(?:[bdfgkmnprstvzj][aeiou]){4}", word)
        assert sum(letter in "zjkv" for letter in word) >= 2


# A sample of the commonest English words and common first names: none may come within one
# edit of a canary, or an honest answer would be flagged.
HONEST_WORDS = (  # noqa: SIM905 - a word list reads better as text
    "the of and to in is was he for it with as his on be at by had are but from or have "
    "an they which one you were her all she there would their we him been has when who "
    "will more no if out so said what up its about into than them can only other new "
    "some could time these two may then do first any my now such like our over man me "
    "even most made after also did many before must through back years where much your "
    "way well down should because each just those people how too little state good very "
    "make world still own see men work long get here between both life being under never "
    "day same another know while last might us great old year off come since against go "
    "came right used take three sailor lighthouse keeper singer politician football "
    "player actress writer scientist minister president musician painter teacher doctor "
    "lawyer banker journalist athlete james john robert michael william david richard "
    "joseph thomas charles mary patricia jennifer linda elizabeth barbara susan jessica "
    "sarah karen javier jose kevin zoe zara jake jack jacob jasmine katja kevin vanessa "
    "victoria zachary"
).split()


def test_no_common_word_or_name_comes_near_a_canary():
    words = [new_canary_word() for _ in range(300)]
    for word in words:
        for honest in HONEST_WORDS:
            assert not canary_in(f"I think {honest} maybe", word), (word, honest)


def test_an_honest_name_two_letters_shorter_is_not_matched():
    """The test above met it once in about 70 runs: "Javier" is two deletions from the
    canary "javideru"; two added or changed letters are still matched."""
    assert not canary_in("I think Javier maybe", "javideru")
    assert canary_in("javidxerpu", "javideru") and canary_in("ajvidreu", "javideru")


def test_the_page_carries_the_instruction_encoded_not_readable():
    encoded = canary_encoded(WORD)
    assert WORD not in encoded and "AI" not in encoded
    decoded = bytes(b ^ 0x5A for b in base64.b64decode(encoded)).decode()
    assert decoded == canary_instruction(WORD)


def test_the_honest_near_miss_the_benchmark_found_is_not_matched():
    """benchmarks/canary_near_misses.py found "a breakup" two edits from "pukazuba" reversed
    when word pairs and reversals took two edits; they take one now."""
    assert not canary_in("They went through a breakup last year.", "pukazuba")
    assert canary_in("abuzakup", "pukazuba")  # reversed, exact
