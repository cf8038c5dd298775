"""Score an intruder's guessed name against the target person, as the Textwash paper does.

The paper (Kleinberg, Davies & Mozes 2022, section 3.1.3.2) scores a guess by "the cosine
similarity between the vectors of individual characters (e.g., s, a, m, s, m, i, t, h)" of the
true name and the name given, and counts a person as identified at a cut-off of 0.75.
`character_cosine` implements exactly that; `score_guess` adds, beside it and never instead of
it, two rapidfuzz measures that show where the character cosine misjudges: a token-set ratio
(an anagram of the name has cosine 1.0 but a low token-set ratio) and whether the guess is the
target's surname alone ("Watson" for Emma Watson scores 0.76, "Grant" for Hugh Grant 0.74).

It lives here, in what both libraries and the Django side share, because a human guess (the
intruder app) and a machine guess (`attacks.llm`'s open-world LLM intruder) must be scored by
one function. `intruder.scoring` is the Django side's name for it. Pure Python.
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
    """

    cosine: float
    identified: bool
    matched_alias: str
    token_set_ratio: float
    surname_match: bool


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
    t = character_counts(truth)
    g = character_counts(guess)
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


def score_guess(
    truth: str,
    guess: str | None,
    aliases: Sequence[str] = (),
    threshold: float = DEFAULT_THRESHOLD,
) -> GuessScore:
    """Score `guess` against the target name `truth` and its `aliases`.

    The cosine is computed against the name and each alias and the best is kept (the name
    wins ties, then the earlier alias); `matched_alias` records which one it was.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must lie in [0, 1], got {threshold}")
    names = [n for n in (truth, *aliases) if n and n.strip()]
    guess = (guess or "").strip()
    if not guess or not names:
        return GuessScore(0.0, False, "", 0.0, False)
    best_name, best_cosine = names[0], -1.0
    for name in names:
        cosine = character_cosine(name, guess)
        if cosine > best_cosine:
            best_name, best_cosine = name, cosine
    token_set = max(
        fuzz.token_set_ratio(name, guess, processor=utils.default_process) for name in names
    )
    return GuessScore(
        cosine=best_cosine,
        identified=best_cosine >= threshold,
        matched_alias=best_name if best_cosine > 0 else "",
        token_set_ratio=float(token_set),
        surname_match=is_surname_only(guess, names),
    )
