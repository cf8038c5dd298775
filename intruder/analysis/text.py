"""Word tokens, placeholder detection and the stopword list shared by the text analyses."""

from __future__ import annotations

import re
from collections.abc import Iterable

from anonymize.placeholders import MARKER_REGEX, PLACEHOLDER_CATEGORIES, category_regex

_CATEGORY = category_regex(PLACEHOLDER_CATEGORIES)
# What anonymizers write instead of PSI: CATEGORY_N or a bare CATEGORY (Textwash and the
# `anonymize` package), PRONOUN / TITLE / MR/MS markers, "[CATEGORY]" (category operator),
# "***" (redact operator) and the paper's lower-case "[firstname1]" illustration style.
PLACEHOLDER_PATTERN = re.compile(
    rf"(?<![A-Za-z])\[?(?P<category>{_CATEGORY})(?:_\d+)?\]?(?![A-Z])"
    rf"|(?<![A-Za-z])(?P<marker>{MARKER_REGEX})(?![A-Za-z])"
    r"|(?P<redacted>\*\*\*)"
    r"|\[(?P<bracketed>[a-z]+)\d*\]"
)
# Universal POS a placeholder stands for, used when construct loss maps placeholders back
# (paper 3.2.2.2: "if one were to map the replacements ... the POS information would be
# fully recoverable").
PLACEHOLDER_POS: dict[str, str] = {
    "PERSON_FIRSTNAME": "PROPN",
    "PERSON_LASTNAME": "PROPN",
    "PERSON": "PROPN",
    "LOCATION": "PROPN",
    "ORGANIZATION": "PROPN",
    "ADDRESS": "PROPN",
    "EMAIL_ADDRESS": "PROPN",
    "OTHER_IDENTIFYING_ATTRIBUTE": "PROPN",
    "OCCUPATION": "NOUN",
    "DATE": "NUM",
    "TIME": "NUM",
    "NUMERIC": "NUM",
    "PHONE_NUMBER": "NUM",
    "PRONOUN": "PRON",
    "TITLE": "PROPN",
    "MR/MS": "PROPN",
    "REDACTED": "X",
    "REIDENTIFYING": "X",  # any word class; the guard masks content words
}
_BRACKETED_CATEGORY = {
    "firstname": "PERSON_FIRSTNAME",
    "lastname": "PERSON_LASTNAME",
    "location": "LOCATION",
    "organisation": "ORGANIZATION",
    "organization": "ORGANIZATION",
    "occupation": "OCCUPATION",
    "date": "DATE",
    "numeric": "NUMERIC",
    "pronoun": "PRONOUN",
    "otherattribute": "OTHER_IDENTIFYING_ATTRIBUTE",
}

# A word: letters/digits, with inner apostrophes, periods or hyphens ("women's", "j.k",
# "non-binary"). Punctuation and symbols are not tokens.
WORD_PATTERN = re.compile(r"[^\W_]+(?:['’.\-][^\W_]+)*", re.UNICODE)

# The Snowball English stopword list (175 words), the default of R's stopwords("en") as used
# by quanteda. The paper (footnote 10) does not name its list; this one is consistent with
# its Tables 5 and 6, where "name", "first", "one", "won" and "nothing" survive.
_SNOWBALL_ENGLISH = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did
    doing would should could ought i'm you're he's she's it's we're they're i've you've we've
    they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll isn't
    aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't shan't
    shouldn't can't cannot couldn't mustn't let's that's who's what's here's there's when's
    where's why's how's a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very will
"""
STOPWORDS: frozenset[str] = frozenset(_SNOWBALL_ENGLISH.split())


def placeholder_category(match: re.Match[str]) -> str:
    """Return the category a PLACEHOLDER_PATTERN match stands for."""
    if match.group("category"):
        return match.group("category")
    if match.group("marker"):
        return match.group("marker")
    if match.group("redacted"):
        return "REDACTED"
    return _BRACKETED_CATEGORY.get(match.group("bracketed"), "REDACTED")


def placeholder_spans(text: str, extra: Iterable[str] = ()) -> list[tuple[int, int, str]]:
    """Return (start, end, category) of every placeholder in an anonymized `text`.

    `extra` are placeholder strings known from the anonymization's spans; they are found
    verbatim in addition to the pattern (category "REDACTED" unless the pattern knows them).
    """
    found: list[tuple[int, int, str]] = []
    for match in PLACEHOLDER_PATTERN.finditer(text):
        if match.group("bracketed") and match.group("bracketed") not in _BRACKETED_CATEGORY:
            continue
        found.append((match.start(), match.end(), placeholder_category(match)))
    covered = [(s, e) for s, e, _ in found]
    for placeholder in sorted({p for p in extra if p}, key=len, reverse=True):
        for match in re.finditer(re.escape(placeholder), text):
            if not any(s < match.end() and match.start() < e for s, e in covered):
                found.append((match.start(), match.end(), "REDACTED"))
                covered.append((match.start(), match.end()))
    return sorted(found)


def strip_placeholders(text: str, extra: Iterable[str] = ()) -> str:
    """Return `text` with every placeholder replaced by a space."""
    pieces, cursor = [], 0
    for start, end, _ in placeholder_spans(text, extra):
        pieces += [text[cursor:start], " "]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def word_tokens(text: str | None) -> list[str]:
    """Return the lower-cased word tokens of `text` (no punctuation, curly apostrophes unified)."""
    if not text:
        return []
    return [m.group().casefold().replace("’", "'") for m in WORD_PATTERN.finditer(text)]
