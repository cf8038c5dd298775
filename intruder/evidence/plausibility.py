"""Whether an intruder's answer could have been made as its evidence says (issue 48).

Telemetry whose every figure fits the server's clock is still no proof of a person: a plain
HTTP client answered a 100-word text 3.5-5.8 s after it was served, claiming to type. These
checks compare the evidence with what people can do, each a flag with a threshold the
researcher sets in the study's rules (`intruder.evidence.selectors.DEFAULT_RULES`):

- reading: the time from the text's first serving to the answer (the server's clock) is at
  least the text's words at `max_reading_wpm`;
- typing: the answer's characters typed key by key (at most 2 per input event) took at least
  `min_ms_per_typed_char` each between the first input and the answer; on average no more
  than `max_chars_per_event` characters per input event; and no single typing event outside
  an IME's composition added more than `max_chars_per_input` (a whole answer inserted at
  once: "inserted");
- pattern: the same answer to `repeat_count` texts, each within `quick_answer_seconds`.

Phones (one event per swiped word, composed), dictation (composed phrases) and slow readers
stay within these; `tests/intruder/flags/test_plausibility.py` holds both sides.
"""

from __future__ import annotations

import re
from typing import Any

from intruder.evidence.page_views import Evidence
from intruder.evidence.selectors import Flag
from intruder.evidence.telemetry import ANSWER_FIELDS, LARGEST
from intruder.models import Judgment, Participant

# Key-by-key typing: at most this many characters per input event on average (deletions and
# corrections count as events, so a typist stays near 1).
KEY_BY_KEY_CHARS = 2
# Typing speed is judged on answers with at least this many typed characters.
MIN_TYPED_FOR_SPEED = 10


def _flag(code: str, reason: str) -> dict[str, str]:
    return {"code": code, "reason": reason}


def text_words(text: str) -> int:
    """Return the words of a served text (placeholders count as one word each)."""
    return len(text.split())


def reading_flags(*, words: int, server_ms: int, rules: dict[str, Any]) -> list[dict[str, str]]:
    """Return the reading-time floor's flag: answered before the text could be read."""
    floor_ms = int(words / rules["max_reading_wpm"] * 60_000)
    if server_ms >= floor_ms:
        return []
    return [
        _flag(
            Flag.TOO_FAST_TO_READ,
            f"Answered {server_ms / 1000:.1f} s after the text was first served; its {words} "
            f"words take {floor_ms / 1000:.1f} s at {rules['max_reading_wpm']} words a minute.",
        )
    ]


def typing_flags(
    *, answers: dict[str, str], totals: dict[str, Any] | None, rules: dict[str, Any]
) -> list[dict[str, str]]:
    """Return the typing flags, from the telemetry's own counts beside the answer.

    Only characters that are in the answer count as typed (the telemetry may claim more).
    """
    if not totals or "fields" not in totals:
        return []
    fields = totals["fields"]
    limit = rules["max_chars_per_input"]
    inserted, implausible = [], []
    typed = 0
    for name, value in answers.items():
        chars = len(value.replace("\r\n", "\n").strip())
        counts = fields.get(name) or {}
        typed += min(chars, counts.get("typed", 0))
        if chars and counts.get(LARGEST, 0) > limit:
            inserted.append(
                f"“{ANSWER_FIELDS[name]}”: {counts[LARGEST]} characters added by one input "
                f"event (rule: at most {limit})"
            )
    events = totals.get("keystrokes")
    if typed and events is not None:
        per_event = typed / max(1, events)
        if per_event > rules["max_chars_per_event"]:
            implausible.append(
                f"{typed} characters typed in {events} input event(s) ({per_event:.1f} per "
                f"event; rule: at most {rules['max_chars_per_event']})"
            )
        first, page = totals.get("first_input_ms"), totals.get("page_ms")
        if (
            per_event <= KEY_BY_KEY_CHARS
            and typed >= MIN_TYPED_FOR_SPEED
            and first is not None
            and page is not None
        ):
            per_char = max(0, page - first) / typed
            if per_char < rules["min_ms_per_typed_char"]:
                implausible.append(
                    f"{typed} characters typed key by key within {(page - first) / 1000:.2f} s "
                    f"of the first input ({per_char:.0f} ms each; rule: at least "
                    f"{rules['min_ms_per_typed_char']} ms)"
                )
    flags = []
    if inserted:
        flags.append(_flag(Flag.INSERTED, "; ".join(inserted) + "."))
    if implausible:
        flags.append(_flag(Flag.IMPLAUSIBLE_TYPING, "; ".join(implausible) + "."))
    return flags


def answer_plausibility_flags(
    *, answers: dict[str, str], evidence: Evidence, words: int, rules: dict[str, Any]
) -> list[dict[str, str]]:
    """Return the reading and typing flags of one answer."""
    return reading_flags(words=words, server_ms=evidence.server_ms, rules=rules) + typing_flags(
        answers=answers, totals=evidence.totals, rules=rules
    )


def answer_key(answers: dict[str, str]) -> str:
    """Return an answer folded for comparison: case, spaces and punctuation aside."""
    text = " ".join(answers.get(name, "") for name in ("guessed_name", "other_knowledge"))
    return " ".join(re.findall(r"\w+", text.casefold()))


def repeated_quick_judgments(
    *, participant: Participant, answers: dict[str, str], server_ms: int, rules: dict[str, Any]
) -> list[Judgment]:
    """Return the participant's earlier quick judgments with this same answer, when this
    quick one makes `repeat_count` of them (else an empty list).

    Quick: within `quick_answer_seconds` of the text's first serving. An honest "no" after
    reading is not quick; the same "no idea" in 4-8 s on every text is.
    """
    quick_ms = rules["quick_answer_seconds"] * 1000
    key = answer_key(answers)
    if not key or server_ms >= quick_ms:
        return []
    earlier = [
        judgment
        for judgment in Judgment.objects.filter(participant=participant).select_related(
            "assignment"
        )
        if answer_key(
            {"guessed_name": judgment.guessed_name, "other_knowledge": judgment.other_knowledge}
        )
        == key
        and _server_ms(judgment) < quick_ms
    ]
    return earlier if len(earlier) + 1 >= rules["repeat_count"] else []


def _server_ms(judgment: Judgment) -> int:
    assignment = judgment.assignment
    shown = assignment.shown_at or assignment.assigned_at
    if judgment.assignment.completed_at is None:
        return judgment.time_spent_ms or 0
    return int((assignment.completed_at - shown).total_seconds() * 1000)


def repeated_quick_flag(count: int, rules: dict[str, Any]) -> dict[str, str]:
    return _flag(
        Flag.REPEATED_QUICK,
        f"The same answer to {count} texts, each within {rules['quick_answer_seconds']} s of "
        f"its first serving (rule: {rules['repeat_count']} or more).",
    )


def flags_merged(flags: list[dict[str, str]]) -> list[dict[str, str]]:
    """Return `flags` with one entry per code, the reasons of a repeated code joined."""
    merged: dict[str, dict[str, str]] = {}
    for flag in flags:
        if flag["code"] in merged:
            merged[flag["code"]]["reason"] += " " + flag["reason"]
        else:
            merged[flag["code"]] = dict(flag)
    return list(merged.values())
