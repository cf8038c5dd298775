"""The rehearsal's simulated crowd: who comes, in what shares, and what each kind does.

Each kind is a behaviour real studies meet, with a default share (`DEFAULT_MIX`) a
researcher can override (`--mix honest_desktop=0.5,careless=0.1,...`, renormalised over
the kinds named only when they sum to 1). Honest intruders guess the way the Textwash
studies' intruders did: the right name at the paper's rate per person group (Textwash
Table 3, study 1, anonymized texts), otherwise a misspelling of it, another person of the
study, a random famous name or "don't know". Everything here is pure: the players
(`players.py`) act it out over HTTP.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    """A named behaviour of a simulated participant."""

    HONEST_DESKTOP = "honest_desktop"
    HONEST_PHONE = "honest_phone"
    SLOW_READER = "slow_reader"
    RELOADER = "reloader"  # reloads the page and presses Back, then answers honestly
    TWO_TABS = "two_tabs"  # opens the page again in a second tab for 2-4 s
    CARELESS = "careless"  # "no idea" a few seconds after the text came
    # "yes" and a random famous name for every text, after 10-16 s (issue 48's responder no
    # telemetry sees; only catch trials do): played where the study has catch trials.
    RANDOM_FAMOUS = "random_famous"
    PASTE_BOT = "paste_bot"  # pastes its answers
    SCRIPT_BOT = "script_bot"  # posts answers with no telemetry at all
    RETURNER = "returner"  # returns the study on Prolific while holding a text
    TIMES_OUT = "times_out"  # stops answering; Prolific times the submission out
    CODE_ONLY = "code_only"  # enters the completion code on Prolific without starting here
    DUPLICATE_PID = "duplicate_pid"  # an honest intruder who opens the link from a 2nd place


HONEST = frozenset(
    {Kind.HONEST_DESKTOP, Kind.HONEST_PHONE, Kind.SLOW_READER, Kind.RELOADER, Kind.TWO_TABS}
    | {Kind.DUPLICATE_PID}
)
BOTS = frozenset({Kind.CARELESS, Kind.PASTE_BOT, Kind.SCRIPT_BOT, Kind.RANDOM_FAMOUS})

DEFAULT_MIX: dict[Kind, float] = {
    Kind.HONEST_DESKTOP: 0.40,
    Kind.HONEST_PHONE: 0.15,
    Kind.SLOW_READER: 0.05,
    Kind.RELOADER: 0.05,
    Kind.TWO_TABS: 0.05,
    Kind.CARELESS: 0.05,
    Kind.PASTE_BOT: 0.04,
    Kind.SCRIPT_BOT: 0.04,
    Kind.RETURNER: 0.06,
    Kind.TIMES_OUT: 0.04,
    Kind.CODE_ONLY: 0.04,
    Kind.DUPLICATE_PID: 0.03,
}

# A study with catch trials meets the random-name responder too: its share, taken from the
# honest desktop intruders of the default mix (`mix_for`).
RANDOM_FAMOUS_SHARE = 0.05
# The share of catch trials (made-up persons) an honest intruder names someone for: an
# assumption (people do claim to know made-up names; the true rate is unmeasured), the one
# benchmarks/intruder_bots_http.py makes.
OVERCLAIM = 0.05

# Share of texts an honest intruder names correctly, per person group: Textwash Table 3
# (study 1, Textwash-anonymized texts): famous 18.25 %, semi-famous 2.01 %, fictitious
# 1.01 % (the last a chance match: nobody can know an invented person).
TEXTWASH_RIGHT_RATE = {"famous": 0.1825, "semifamous": 0.0201, "fictitious": 0.0101}
# What an honest intruder who does not name the person says instead (shares of those).
WRONG_ANSWERS = {"other_person": 0.10, "famous_name": 0.10, "dont_know": 0.80}
# Of the right names, how many are misspelled by one letter (still >= the threshold mostly).
MISSPELLED_SHARE = 0.15

# Random famous names an honest intruder may guess wrongly; `honest_guess` never uses one
# that is a person of the study (that would be a right or an "other person" answer).
FAMOUS_GUESSES = (
    "Tom Cruise",
    "Kate Winslet",
    "Brad Pitt",
    "Emma Thompson",
    "Hugh Jackman",
    "Nicole Kidman",
    "Keanu Reeves",
    "Judi Dench",
)


class MixError(ValueError):
    """The crowd mix is not a distribution over known kinds."""


def mix_parse(text: str) -> dict[Kind, float]:
    """Return the mix `kind=share,...` (empty: the defaults); shares must sum to 1."""
    if not text.strip():
        return dict(DEFAULT_MIX)
    mix: dict[Kind, float] = {}
    for part in text.split(","):
        name, _, share = part.partition("=")
        try:
            kind = Kind(name.strip())
        except ValueError:
            known = ", ".join(k.value for k in Kind)
            raise MixError(f"unknown kind {name.strip()!r} (known: {known})") from None
        try:
            value = float(share)
        except ValueError:
            raise MixError(f"{kind.value}: {share!r} is not a share") from None
        if not 0 <= value <= 1:
            raise MixError(f"{kind.value}: a share lies in [0, 1], got {value}")
        mix[kind] = value
    total = sum(mix.values())
    if abs(total - 1) > 1e-6:
        raise MixError(f"the shares sum to {total:g}, not 1")
    return mix


def mix_for(mix: dict[Kind, float], *, catch_trials: bool, default: bool) -> dict[Kind, float]:
    """Return the mix a study is rehearsed with: the default one gains the random-name
    responder where the study has catch trials (nothing else can catch it)."""
    if not (default and catch_trials):
        return mix
    return {
        **mix,
        Kind.HONEST_DESKTOP: mix[Kind.HONEST_DESKTOP] - RANDOM_FAMOUS_SHARE,
        Kind.RANDOM_FAMOUS: RANDOM_FAMOUS_SHARE,
    }


def outsider_names(person: str, others: list[str]) -> list[str]:
    """Return the famous names that are no person of the study."""
    study_names = {name.casefold() for name in (person, *others)}
    return [name for name in FAMOUS_GUESSES if name.casefold() not in study_names]


def crowd_draw(mix: dict[Kind, float], n: int, seed: int) -> list[Kind]:
    """Return n kinds in arrival order: each kind's share of n (largest remainders), shuffled."""
    exact = {kind: share * n for kind, share in mix.items()}
    counts = {kind: int(value) for kind, value in exact.items()}
    by_remainder = sorted(exact, key=lambda kind: exact[kind] - counts[kind], reverse=True)
    for kind in by_remainder[: n - sum(counts.values())]:
        counts[kind] += 1
    crowd = [kind for kind, count in counts.items() for _ in range(count)]
    random.Random(seed).shuffle(crowd)
    return crowd


@dataclass(frozen=True)
class Guess:
    """What an intruder answers for one text, and what it truly is (the rehearsal's truth)."""

    intent: str  # right, misspelled, other_person, famous_name, dont_know
    name: str  # "" for don't know

    @property
    def names_the_person(self) -> bool:
        """Whether the answer is meant as the text's person (a misspelling included)."""
        return self.intent in ("right", "misspelled")


def misspell(name: str, rng: random.Random) -> str:
    """Return `name` with two neighbouring letters of one word swapped."""
    words = name.split()
    index = max(range(len(words)), key=lambda i: len(words[i]))
    word = words[index]
    if len(word) < 4:
        return name
    at = rng.randrange(1, len(word) - 2)
    words[index] = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    return " ".join(words)


def honest_guess(
    *,
    rng: random.Random,
    person: str,
    group: str,
    others: list[str],
    right_rate: dict[str, float],
    catch: bool = False,
) -> Guess:
    """Draw an honest intruder's answer about a text of `person` (of `group`); about a made-up
    person (`catch`), a famous name at the rate people overclaim, else "don't know"."""
    if catch:
        outsiders = outsider_names(person, others)
        if rng.random() < OVERCLAIM and outsiders:
            return Guess("famous_name", rng.choice(outsiders))
        return Guess("dont_know", "")
    if rng.random() < right_rate.get(group, 0.0):
        if rng.random() < MISSPELLED_SHARE:
            return Guess("misspelled", misspell(person, rng))
        return Guess("right", person)
    draw = rng.random()
    if draw < WRONG_ANSWERS["other_person"] and others:
        return Guess("other_person", rng.choice(others))
    outsiders = outsider_names(person, others)
    if draw < WRONG_ANSWERS["other_person"] + WRONG_ANSWERS["famous_name"] and outsiders:
        return Guess("famous_name", rng.choice(outsiders))
    return Guess("dont_know", "")
