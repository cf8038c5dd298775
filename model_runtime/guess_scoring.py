"""Score an intruder's guessed name against the target person, as the Textwash paper does.

The paper (Kleinberg, Davies & Mozes 2022, section 3.1.3.2) scores a guess by "the cosine
similarity between the vectors of individual characters (e.g., s, a, m, s, m, i, t, h)" of the
true name and the name given, and counts a person as identified at a cut-off of 0.75.
`character_cosine` implements exactly that; `score_guess` adds, beside it and never instead of
it, two rapidfuzz measures that show where the character cosine misjudges: a token-set ratio
(an anagram of the name has cosine 1.0 but a low token-set ratio) and whether the guess is the
target's surname alone ("Watson" for Emma Watson scores 0.76, "Grant" for Hugh Grant 0.74).

The paper's rule looks at the true person only, and a bag of letters is easily fooled by
another person's name: "Daniel Radcliffe" scores 0.845 for Daniel Craig, "Tobias Wernecke"
0.861 for Odalys Brennecke, and names from outside the study as much: "Kate Winslet" 0.770
for Kate Middleton, "Claire Danes" 0.901 for Cara Delevigne (of the 543 WikiActors names, 197
score at or above the threshold for one of Textwash study 2's twenty persons;
`benchmarks/outsider_names.py`). `score_guess` therefore also takes the study's other persons
and applies one of three rules (`IDENTIFICATION_RULES`): `best_match_surname` (the default)
counts a guess as identified only when the true person is its best match among all persons of
the study, the cosine reaches the threshold, and a word of the guess is the person's surname
(or one-word name) up to a typo (`surname_in_guess`); `best_match` drops the surname test
(issue 46's rule); `paper` is the paper's rule, kept for replication. Under every rule, a
guess whose best match is another person at or above the threshold is "named another
person" (`named_other`)
([docs/decisions/best-match-identification.md](../docs/decisions/best-match-identification.md)).

It lives here, in what both libraries and the Django side share, because a human guess (the
intruder app) and a machine guess (`attacks.llm`'s open-world LLM intruder) must be scored by
one function; the Django side imports it from here. Pure Python.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, utils

# Generational suffixes are not surnames: "Hermann Pacocha Jr" has the surname "pacocha".
# `anonymize.names` (the alignment's name words) takes them from here.
NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "v"})

DEFAULT_THRESHOLD = 0.75
# rapidfuzz.fuzz.ratio (0-100) at or above which a one-word guess counts as the surname:
# tolerates one typo in a 6+ letter surname ("Sheran" vs "sheeran" = 92.3) but not a
# different name ("Smith" vs "smyth" = 80.0).
SURNAME_RATIO_CUTOFF = 85.0

BEST_MATCH_SURNAME = "best_match_surname"
BEST_MATCH = "best_match"
PAPER = "paper"
# rule -> what it means, as the study form and the reports say it.
IDENTIFICATION_RULES: dict[str, str] = {
    BEST_MATCH_SURNAME: "the true person (name or alias) is the guess's best match among all "
    "persons of the study, the cosine reaches the threshold, and a word of the guess is the "
    "person's surname (or one-word name), a typo allowed",
    BEST_MATCH: "the true person (name or alias) is the guess's best match among all persons "
    "of the study and the cosine reaches the threshold",
    PAPER: "the cosine to the true person reaches the threshold, whoever else the guess "
    "matches better (the Textwash paper)",
}
DEFAULT_RULE = BEST_MATCH_SURNAME
# rapidfuzz.fuzz.ratio at or above which a word of a guess is the person's surname under
# `best_match_surname`: keeps every one-typo spelling (a swap, a dropped or doubled letter) of
# both Textwash studies' names, where 85 loses 6-7 % of them (benchmarks/outsider_names.py).
SURNAME_AGREEMENT_CUTOFF = 75.0
# Cosines closer than this are a tie (two spellings of one bag of letters can differ in the
# last bit), and a tie goes to the true person.
TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Person:
    """A person a guess may name: a key unique in its study, the name, then the aliases."""

    key: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class Credit:
    """What a guess earns under a rule: identified, and whether it named another person."""

    identified: bool
    named_other: bool


@dataclass(frozen=True)
class NearCollision:
    """Two persons of a study whose names (or aliases) score `cosine` against each other."""

    key_a: str
    name_a: str
    key_b: str
    name_b: str
    cosine: float


@dataclass(frozen=True)
class GuessScore:
    """The score of one guess against a target's name and aliases.

    cosine: the paper's character cosine (0-1) against the best-matching name or alias.
    identified: cosine >= threshold.
    matched_alias: the name or alias that gave the best cosine ("" for an empty guess).
    token_set_ratio: rapidfuzz `fuzz.token_set_ratio` on a 0-100 scale, best over name and
        aliases (case and punctuation ignored).
    surname_match: the guess is a single word that matches the surname of the name or of an
        alias (rapidfuzz ratio >= SURNAME_RATIO_CUTOFF); False for one-word names ("Adele").
    other_cosine: the best cosine against another person of the study (0 without others).
    other_key: that person's key ("" when no other person scores above 0).
    named_other: another person is the best match, at or above the threshold (`credit`).
    surname_agrees: a word of the guess is the surname of the name or an alias, a typo
        allowed (`surname_in_guess`; what `best_match_surname` asks beside the cosine).
    """

    cosine: float
    identified: bool
    matched_alias: str
    token_set_ratio: float
    surname_match: bool
    other_cosine: float = 0.0
    other_key: str = ""
    named_other: bool = False
    surname_agrees: bool = False


def character_counts(name: str | None) -> Counter[str]:
    """Return the counts of the letters and digits in `name`, case-folded.

    Whitespace, punctuation and symbols are dropped; Unicode letters count as themselves
    (accents are kept: "é" and "e" are different characters, as in the paper's R code).
    """
    if not name:
        return Counter()
    normalized = unicodedata.normalize("NFC", name).casefold()
    return Counter(ch for ch in normalized if ch.isalnum())


def character_cosine(truth: str | None, guess: str | None) -> float:
    """Return the cosine similarity of the character-count vectors of `truth` and `guess`.

    cos = sum_c t_c * g_c / (sqrt(sum_c t_c^2) * sqrt(sum_c g_c^2)), where t_c and g_c count
    character c. Counts are non-negative, so the result lies in [0, 1]. An empty or missing
    name on either side (nothing left after dropping whitespace and punctuation) scores 0.
    """
    return counts_cosine(character_counts(truth), character_counts(guess))


def counts_cosine(t: Counter[str], g: Counter[str]) -> float:
    """Return the cosine of two character-count vectors (`character_cosine` on counts made
    once, for the loops over all pairs of a study's names)."""
    if not t or not g:
        return 0.0
    dot = sum(count * g[ch] for ch, count in t.items())
    norm = math.sqrt(sum(c * c for c in t.values())) * math.sqrt(sum(c * c for c in g.values()))
    # Rounding can push an exact match a hair above 1.0.
    return min(1.0, dot / norm)


def surname_of(name: str) -> str:
    """Return the surname (last word, generational suffixes skipped) of a multi-word name.

    Return "" for one-word names, which have no surname distinct from the whole name.
    """
    words = [w for w in utils.default_process(name).split() if w]
    while len(words) > 1 and words[-1] in NAME_SUFFIXES:
        words.pop()
    return words[-1] if len(words) > 1 else ""


def is_surname_only(guess: str, names: Sequence[str]) -> bool:
    """Return whether `guess` is one word matching the surname of any of `names`."""
    words = utils.default_process(guess).split()
    if len(words) != 1:
        return False
    surnames = {s for s in (surname_of(n) for n in names) if s}
    return any(fuzz.ratio(words[0], s) >= SURNAME_RATIO_CUTOFF for s in surnames)


def surname_in_guess(
    guess: str | None, names: Sequence[str], cutoff: float = SURNAME_AGREEMENT_CUTOFF
) -> bool:
    """Return whether a word of `guess` matches the surname of one of `names` (a name and its
    aliases; the whole name when it is one word) at rapidfuzz ratio >= `cutoff`: "Kate
    Winslet" has no word like Kate Middleton's surname, though its letters score 0.770."""
    words = utils.default_process(guess or "").split()
    targets = {surname_of(n) or utils.default_process(n).replace(" ", "") for n in names if n}
    return any(fuzz.ratio(word, t) >= cutoff for word in words for t in targets if t)


def check_rule(rule: str) -> None:
    """Raise ValueError naming the rules when `rule` is not one of them."""
    if rule not in IDENTIFICATION_RULES:
        raise ValueError(f"rule must be one of {sorted(IDENTIFICATION_RULES)}, got {rule!r}")


def credit(
    cosine: float,
    other_cosine: float,
    threshold: float,
    rule: str,
    surname_agrees: bool = True,
) -> Credit:
    """Return what a guess scoring `cosine` for the true person and `other_cosine` for the
    best other person of the study earns under `rule`.

    named_other: another person matches strictly better, at or above the threshold (a guess
    every rule sees as naming someone else; ties go to the true person, whose cosine then
    reaches the threshold as well). identified: the cosine reaches the threshold and, under
    `best_match`, the guess named no other person; under `best_match_surname`, also
    `surname_agrees` (`surname_in_guess`); under `paper`, whatever else it matched.
    """
    check_rule(rule)
    named_other = other_cosine >= threshold and other_cosine > cosine + TIE_TOLERANCE
    reached = cosine >= threshold
    if rule == PAPER:
        identified = reached
    elif rule == BEST_MATCH:
        identified = reached and not named_other
    else:
        identified = reached and not named_other and surname_agrees
    return Credit(identified=identified, named_other=named_other)


def best_name_cosine(names: Sequence[str], guess: str) -> tuple[str, float]:
    """Return the name among `names` that `guess` matches best, and its cosine (first wins
    ties); ("", 0.0) when nothing matches."""
    best_name, best_cosine = "", 0.0
    for name in names:
        cosine = character_cosine(name, guess)
        if cosine > best_cosine:
            best_name, best_cosine = name, cosine
    return best_name, best_cosine


def best_other(guess: str, persons: Sequence[Person], true_key: str) -> tuple[str, float]:
    """Return the key of the person other than `true_key` whom `guess` matches best (by its
    best name or alias) and that cosine; ("", 0.0) when none scores above 0."""
    best_key, best_cosine = "", 0.0
    for person in persons:
        if person.key == true_key:
            continue
        _, cosine = best_name_cosine(person.names, guess)
        if cosine > best_cosine:
            best_key, best_cosine = person.key, cosine
    return best_key, best_cosine


def score_guess(
    truth: str,
    guess: str | None,
    aliases: Sequence[str] = (),
    threshold: float = DEFAULT_THRESHOLD,
    *,
    others: Sequence[Person] = (),
    true_key: str = "",
    rule: str = DEFAULT_RULE,
) -> GuessScore:
    """Score `guess` against the target name `truth` and its `aliases`, among `others`.

    The cosine is computed against the name and each alias and the best is kept (the name
    wins ties, then the earlier alias); `matched_alias` records which one it was. `others`
    are the study's persons (the true one, keyed `true_key`, may be among them and is
    skipped); `identified` and `named_other` follow `rule` (`credit`). Without `others` the
    best-match rule gives the paper's answer, and `best_match_surname` the paper's answer for a
    guess that holds the surname.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must lie in [0, 1], got {threshold}")
    check_rule(rule)
    names = [n for n in (truth, *aliases) if n and n.strip()]
    guess = (guess or "").strip()
    if not guess or not names:
        return GuessScore(0.0, False, "", 0.0, False)
    best_name, best_cosine = best_name_cosine(names, guess)
    other_key, other_cosine = best_other(guess, others, true_key)
    agrees = surname_in_guess(guess, names)
    earned = credit(best_cosine, other_cosine, threshold, rule, agrees)
    token_set = max(
        fuzz.token_set_ratio(name, guess, processor=utils.default_process) for name in names
    )
    return GuessScore(
        cosine=best_cosine,
        identified=earned.identified,
        matched_alias=best_name,
        token_set_ratio=float(token_set),
        surname_match=is_surname_only(guess, names),
        other_cosine=other_cosine,
        other_key=other_key,
        named_other=earned.named_other,
        surname_agrees=agrees,
    )


def near_collisions(persons: Sequence[Person], threshold: float) -> list[NearCollision]:
    """Return the pairs of `persons` whose names or aliases score >= `threshold` against each
    other, highest first: a guess of one can count for the other under the paper's rule.

    The pair's score is the best over all name pairs (the cosine is symmetric); each
    NearCollision names the two names that gave it.
    """
    counts = [[(name, character_counts(name)) for name in p.names] for p in persons]
    pairs: list[NearCollision] = []
    for i, a in enumerate(persons):
        for j in range(i + 1, len(persons)):
            b = persons[j]
            best = (0.0, "", "")
            for name_a, counts_a in counts[i]:
                for name_b, counts_b in counts[j]:
                    cosine = counts_cosine(counts_a, counts_b)
                    if cosine > best[0]:
                        best = (cosine, name_a, name_b)
            if best[0] >= threshold:
                pairs.append(NearCollision(a.key, best[1], b.key, best[2], best[0]))
    return sorted(pairs, key=lambda pair: (-pair.cosine, pair.key_a, pair.key_b))
