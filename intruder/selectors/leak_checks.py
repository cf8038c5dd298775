"""Leak checks on an anonymized text: what a motivated intruder could still read in it.

Besides the target's name and aliases, the checks look for patterns seen in the shipped
model's output that give identifying information away around a placeholder:

- a placeholder glued to letters: "fortyNUMERIC_1 year old" leaks the decade, and
  "LOCATION_1-Senegalese" a nationality (numbers' ordinal and unit suffixes such as
  "NUMERIC_1th" or "NUMERIC_2ft" are Textwash's own style and not flagged);
- a name placeholder of the wrong kind for its context: "PRONOUN surname is
  PERSON_FIRSTNAME_2" says the surname is also a first name;
- capitalised words left in clear next to a placeholder, or runs of two or more capitalised
  words inside a sentence ("won the Latin Grammy"): names the model missed.

Each finding has a kind, a message and the character offsets in the anonymized text, so the
review page can point at it. They are warnings for a human reviewer, not proof of a leak.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from anonymize.names import NON_IDENTIFYING_NAME_WORDS
from anonymize.placeholders import PLACEHOLDER_PATTERN

# A placeholder wherever it stands, even glued to letters (the analyses' own pattern refuses
# to match inside words, which is exactly what this check must see).
PLACEHOLDER = PLACEHOLDER_PATTERN
# Suffixes a number keeps outside its NUMERIC placeholder, as Textwash writes them.
NUMBER_SUFFIXES = frozenset(
    {"st", "nd", "rd", "th", "s", "ft", "in", "cm", "mm", "m", "km", "kg", "lb", "lbs", "k"}
    | {"years", "yrs", "million", "billion", "inches", "feet", "pounds", "kilos", "hours"}
)
# Kinds that hold a draft back from bulk release; "capitalised" is a hint for the reviewer
# (35 % of Textwash's own published texts have one: benchmarks/leak_checks.py).
BLOCKING_KINDS = frozenset({"target_name", "glued", "name_kind"})
WRONG_NAME_KIND = (
    (
        re.compile(r"\b(?:sur|last |family )name\s+(?:is\s+|was\s+)?(PERSON_FIRSTNAME_\d+)", re.I),
        "a first-name placeholder where the text speaks of a surname",
    ),
    (
        re.compile(r"\b(?:first|given|middle) name\s+(?:is\s+|was\s+)?(PERSON_LASTNAME_\d+)", re.I),
        "a last-name placeholder where the text speaks of a first name",
    ),
)
# Capitalised words that name nothing (sentence openers are skipped separately).
FUNCTION_WORDS = frozenset(
    {"I", "A", "An", "The", "He", "She", "It", "They", "We", "His", "Her", "Their", "This"}
)
# What may stand between a placeholder and a word still "next to" it: "LOCATION_1, Dakar",
# "ORGANIZATION_1 of Spain", "the Latin Grammy OTHER_IDENTIFYING_ATTRIBUTE_1".
NEAR_GAP = re.compile(r"\s*,?\s*(?:(?:the|of|and|de|at|in)\s+)?", re.IGNORECASE)
# What may join the words of one name: "Royal Academy of Music", "Gabriel de la Cruz".
RUN_GAP = re.compile(r"\s+(?:(?:of|the|de|la|du|von|van)\s+)*")
CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)*\b")


@dataclass(frozen=True)
class LeakFinding:
    """One possible leak: what kind, what to tell the reviewer, where in the text."""

    kind: str
    message: str
    start: int
    end: int


def name_parts(names: Iterable[str]) -> list[str]:
    """Return the names and their identifying words of 3+ letters (no titles), longest first."""
    parts: set[str] = set()
    for name in names:
        name = name.strip()
        if not name:
            continue
        parts.add(name)
        parts.update(
            w
            for w in re.findall(r"[^\W\d_]+", name)
            if len(w) >= 3 and w.casefold() not in NON_IDENTIFYING_NAME_WORDS
        )
    return sorted(parts, key=len, reverse=True)


def _target_name(text: str, names: list[str]) -> list[LeakFinding]:
    found = []
    for part in name_parts(names):
        match = re.search(rf"(?<!\w){re.escape(part)}(?!\w)", text, flags=re.IGNORECASE)
        if match:
            found.append(
                LeakFinding(
                    "target_name",
                    f"target name still present: {part!r}",
                    match.start(),
                    match.end(),
                )
            )
    return found


LETTER = re.compile(r"[^\W\d_]")


def _glued(text: str) -> list[LeakFinding]:
    found = []
    for match in PLACEHOLDER.finditer(text):
        start, end, placeholder = match.start(), match.end(), match.group()
        # The run of letters right before the placeholder, walked back a letter at a time:
        # a search for it anchored at the end rescans the text once per placeholder.
        glued_from = start
        while glued_from > 0 and LETTER.match(text, glued_from - 1):
            glued_from -= 1
        if glued_from < start:
            found.append(
                LeakFinding(
                    "glued",
                    f"letters glued before a placeholder: {text[glued_from:start] + placeholder!r}",
                    glued_from,
                    end,
                )
            )
        after = re.match(r"[^\W\d_]+", text[end:])
        if after and not (
            placeholder.startswith(("NUMERIC", "DATE")) and after.group().lower() in NUMBER_SUFFIXES
        ):
            found.append(
                LeakFinding(
                    "glued",
                    f"letters glued after a placeholder: {placeholder + after.group()!r}",
                    start,
                    end + after.end(),
                )
            )
        hyphenated = re.match(r"-([A-Z][\w'-]*)", text[end:]) or None
        if hyphenated and not PLACEHOLDER.match(hyphenated.group(1)):
            found.append(
                LeakFinding(
                    "glued",
                    f"a word left in clear joined to a placeholder: "
                    f"{placeholder + hyphenated.group()!r}",
                    start,
                    end + hyphenated.end(),
                )
            )
        prefix = re.search(r"([A-Z][\w']*)-$", text[:start])
        if prefix and not PLACEHOLDER.search(prefix.group(1)):
            found.append(
                LeakFinding(
                    "glued",
                    f"a word left in clear joined to a placeholder: "
                    f"{prefix.group() + placeholder!r}",
                    prefix.start(),
                    end,
                )
            )
    return found


def _wrong_name_kind(text: str) -> list[LeakFinding]:
    return [
        LeakFinding("name_kind", f"{message}: {match.group()!r}", match.start(), match.end())
        for pattern, message in WRONG_NAME_KIND
        for match in pattern.finditer(text)
    ]


def _sentence_initial(text: str, start: int) -> bool:
    return re.search(r"(?:^|[.!?:;\"“(]\s*|\n\s*)$", text[:start]) is not None


def _capitalised_in_clear(text: str) -> list[LeakFinding]:
    """Flag capitalised words beside a placeholder and capitalised runs inside sentences."""
    placeholders = [(m.start(), m.end()) for m in PLACEHOLDER.finditer(text)]
    words = [
        m
        for m in CAPITALISED.finditer(text)
        if m.group() not in FUNCTION_WORDS and not any(s <= m.start() < e for s, e in placeholders)
    ]
    found: list[LeakFinding] = []
    index = 0
    while index < len(words):
        run = [words[index]]
        while index + len(run) < len(words) and RUN_GAP.fullmatch(
            text[run[-1].end() : words[index + len(run)].start()]
        ):
            run.append(words[index + len(run)])
        start, end = run[0].start(), run[-1].end()
        if _sentence_initial(text, start):
            run_inside = run[1:]
            start = run_inside[0].start() if run_inside else start
        else:
            run_inside = run
        near = any(
            NEAR_GAP.fullmatch(text[e:start] if e <= start else text[end:s])
            for s, e in placeholders
            if e <= start or s >= end
        )
        if run_inside and (len(run_inside) >= 2 or near):
            phrase = text[start:end]
            where = "next to a placeholder" if near else "inside a sentence"
            found.append(
                LeakFinding(
                    "capitalised",
                    f"capitalised words left in clear {where}: {phrase!r}",
                    start,
                    end,
                )
            )
        index += len(run)
    return found


def leak_findings(text: str, names: Iterable[str]) -> list[LeakFinding]:
    """Return every possible leak in an anonymized text of a person called `names`."""
    findings = [
        *_target_name(text, list(names)),
        *_glued(text),
        *_wrong_name_kind(text),
    ]
    flagged = [(f.start, f.end) for f in findings]
    findings += [
        f
        for f in _capitalised_in_clear(text)
        if not any(f.start < e and s < f.end for s, e in flagged)
    ]
    return findings


def text_leak_findings(text: Any) -> list[LeakFinding]:
    """Return the possible leaks of an AnonymizedText (its target's name and aliases)."""
    target = text.description.target
    return leak_findings(text.text, [target.name, *target.aliases])


def leak_warnings(text: Any) -> list[str]:
    """Return every possible leak the checks find in the text."""
    return [finding.message for finding in text_leak_findings(text)]


def blocking_leaks(text: Any) -> list[str]:
    """Return the leaks that hold a draft back from bulk release (name, glued, name kind)."""
    return [f.message for f in text_leak_findings(text) if f.kind in BLOCKING_KINDS]
