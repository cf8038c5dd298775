"""Rule-based clean-up of the model's spans, the way Textwash writes its outputs.

The token classifier decides per word; these rules make its spans consistent across a text
before the deterministic guarantees of `anonymize.rules` run: one category per value with
repeat mentions caught (`harmonise_mentions`), number suffixes kept outside NUMERIC
(`numbers_keep_their_suffix`) and both halves of hyphenated names masked
(`join_hyphenated_names`). They need no model, so they are tested on their own.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace

from anonymize.placeholders import Span, normalise_value

# Categories whose detected values are also replaced where the model missed a repeat mention.
# Numbers, dates and pronouns are left out: "two" or "he" recurring is not the same PSI item.
PROPAGATED_CATEGORIES = frozenset(
    {
        "PERSON_FIRSTNAME",
        "PERSON_LASTNAME",
        "LOCATION",
        "ORGANIZATION",
        "OCCUPATION",
        "OTHER_IDENTIFYING_ATTRIBUTE",
    }
)


def harmonise_mentions(text: str, spans: list[Span]) -> list[Span]:
    """Give all mentions of one value one category, and catch the mentions the model missed.

    The model decides per mention, so "Lysa" may come out as a first name once and a last name
    later, or be missed the second time. Textwash replaces every occurrence of a detected value
    (paper, section 2.4); we do the same: the category with the highest summed score wins for
    the value, and further whole-word occurrences (any case, except lower-case common English
    words such as "black") become spans too.
    """
    from wordfreq import zipf_frequency

    from anonymize.alignment import COMMON_WORD_ZIPF

    by_value: dict[str, list[Span]] = {}
    for span in spans:
        by_value.setdefault(normalise_value(span.text), []).append(span)
    category_of_value = {}
    for value, group in by_value.items():
        totals: dict[str, float] = {}
        for span in group:
            totals[span.category] = totals.get(span.category, 0.0) + span.score
        category_of_value[value] = max(totals, key=totals.__getitem__)
    result = [replace(s, category=category_of_value[normalise_value(s.text)]) for s in spans]
    taken = sorted((s.start, s.end) for s in result)
    for value, category in category_of_value.items():
        if category not in PROPAGATED_CATEGORIES or len(value) < 2:
            continue
        score = max(span.score for span in by_value[value])
        pattern = r"(?<!\w)" + r"\s+".join(map(re.escape, value.split())) + r"(?!\w)"
        for match in re.finditer(pattern, text, flags=re.IGNORECASE):
            found = match.group()
            if found.islower() and zipf_frequency(found, "en") >= COMMON_WORD_ZIPF:
                continue
            position = bisect.bisect_left(taken, (match.start(), match.start()))
            neighbours = taken[max(position - 1, 0) : position + 1]
            if any(start < match.end() and match.start() < end for start, end in neighbours):
                continue
            bisect.insort(taken, (match.start(), match.end()))
            result.append(Span(match.start(), match.end(), found, category, "", score))
    return sorted(result, key=lambda span: span.start)


_LETTERS_AFTER_DIGIT = re.compile(r"(?<=\d)[^\W\d_]+$")


def numbers_keep_their_suffix(text: str, spans: list[Span]) -> list[Span]:
    """Leave letters glued to a number outside its NUMERIC placeholder, as Textwash does.

    Textwash replaces a number's digits and keeps an ordinal or unit suffix ("5th" ->
    "NUMERIC_1th", "6ft" -> "NUMERIC_2ft"): 224 of the 225 such suffixes in the train and
    dev splits are outside the NUMERIC placeholder. (DATE placeholders take theirs: "1960s".)
    The model sometimes tags the suffix too, which splits the value from its mentions.
    """
    kept: list[Span] = []
    for span in spans:
        if span.category == "NUMERIC":
            glued = span.start > 0 and text[span.start - 1].isdigit()
            if glued and span.text.isalpha():
                continue  # a suffix tagged on its own
            suffix = _LETTERS_AFTER_DIGIT.search(span.text)
            if suffix:
                end = span.start + suffix.start()
                span = replace(span, end=end, text=text[span.start : end])
        kept.append(span)
    return kept


# A capitalised word glued by a hyphen to a detected name part: "Okafor" in "Okafor-Smythe".
_HYPHEN_BEFORE = re.compile(r"([^\W\d_]+)-$")
_HYPHEN_AFTER = re.compile(r"-([^\W\d_]+)")
NAME_CATEGORIES = frozenset({"PERSON_FIRSTNAME", "PERSON_LASTNAME"})


def join_hyphenated_names(text: str, spans: list[Span]) -> list[Span]:
    """Add the missed halves of double-barrelled names as surname spans.

    The model decides per word and has never seen a hyphenated name (the study corpus has
    none), so it may replace "Smythe" in "Okafor-Smythe" and leave "Okafor". A capitalised
    word joined by a hyphen (no spaces) to a name span is part of the same name.
    """
    taken = {(s.start, s.end) for s in spans}
    added: list[Span] = []
    for span in spans:
        if span.category not in NAME_CATEGORIES:
            continue
        glued_before = span.start > 1 and text[span.start - 1] == "-"
        before = _HYPHEN_BEFORE.search(text, 0, span.start) if glued_before else None
        after = _HYPHEN_AFTER.match(text, span.end)
        candidates = []
        if before and (before.start() == 0 or not text[before.start() - 1].isalnum()):
            candidates.append((before.start(1), before.end(1)))
        if after:
            start, end = after.span(1)
            if end == len(text) or not text[end].isalnum():
                candidates.append((start, end))
        for start, end in candidates:
            word = text[start:end]
            overlaps = any(s.start < end and start < s.end for s in (*spans, *added))
            if word[:1].isupper() and (start, end) not in taken and not overlaps:
                added.append(Span(start, end, word, "PERSON_LASTNAME", "", span.score))
    return sorted([*spans, *added], key=lambda span: span.start)


def clean_up_spans(text: str, spans: list[Span]) -> list[Span]:
    """Return the model's spans after every clean-up rule, in the order the model applies them."""
    spans = numbers_keep_their_suffix(text, spans)
    spans = join_hyphenated_names(text, spans)
    return harmonise_mentions(text, spans)
