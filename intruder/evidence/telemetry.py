"""Answer telemetry: what the browser reports about how an answer was made, checked here.

`intruder/static/intruder/telemetry.js` counts, never records: times, typing (from the
browser's trusted input events, so phone keyboards and IMEs count), pastes, copies, focus
and visibility losses, and per answer field the characters typed, pasted and changed by
script. It posts them as one small JSON object beside the answer, and on leaving the page.

Nothing here trusts it. A post that is too large, not an object, has an unknown key or a
value of the wrong type or out of range is malformed (None). A well-formed post can still
be inconsistent: a missing field, or figures that do not fit each other; `TelemetryReport`
lists those problems in words. Whether it fits the server's own record (its clock, its
page views) is checked by `intruder.evidence.page_views`. Signals the study switched off
are dropped even when a browser sends them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# The post's hard bounds: a real one is ~400 bytes; anything larger is not ours.
MAX_TELEMETRY_BYTES = 4096
MAX_MS = 24 * 3600 * 1000
MAX_COUNT = 100_000
# The browser's time on a page and the server's differ by the two requests' travel and the
# page's loading; beyond this base plus a share of the time, they disagree.
CLOCK_SLACK_MS = 5_000
CLOCK_SLACK_SHARE = 0.05
# The server may see more time than the browser by much more: a busy server queues the answer
# before it reads the clock. Under-counting hides nothing (the time goes to "away"), so only a
# large gap is a disagreement.
UNDERCOUNT_SLACK_MS = 30_000
UNDERCOUNT_SLACK_SHARE = 0.10

TELEMETRY_VERSION = 2

# Field -> the study signal (`Study.telemetry_signals`) that turns it on.
TELEMETRY_FIELDS: dict[str, str] = {
    "page_ms": "timing",
    "first_input_ms": "timing",
    "typing_ms": "timing",
    "keystrokes": "keystrokes",
    "paste_events": "paste",
    "pasted_chars": "paste",
    "copy_events": "copy",
    "copied_chars": "copy",
    "focus_losses": "focus",
    "away_ms": "focus",
}
MS_FIELDS = frozenset({"page_ms", "first_input_ms", "typing_ms", "away_ms"})
# Each absence as [start, end] ms on the page's own clock (part of the "focus" signal), so
# that the server can lay a view's absences beside its other views (`evidence.page_views`):
# time in another tab of the same page is not time away. The page merges its closest two
# beyond this many; a longer list is not ours.
ABSENCES = "absences"
MAX_ABSENCES = 20
# Per answer field: characters typed (trusted input events), pasted or dropped, and value
# changes that no trusted input event made (a script). Part of the "keystrokes" signal.
FIELD_COUNTS = ("typed", "pasted", "untrusted")
# ... and what the page put back of the participant's own earlier answer (a rejected post
# shown again, a writer's stored draft): optional, and trusted for writers only
# (`evidence.flags`): an intruder's earlier typing is on the server (`evidence.page_views`).
RESTORED = "restored"
# ... and the most characters one trusted typing event (not a paste, not an IME's
# composition) added at once: an execCommand("insertText") or an automation's fill() arrives
# as one such event carrying the whole answer. Optional; checked in `evidence.plausibility`.
LARGEST = "largest"
FIELDS_SIGNAL = "keystrokes"
# The answer fields a page may report on: the judge page's three, the write page's one.
ANSWER_FIELDS: dict[str, str] = {
    "guessed_name": "Who is it?",
    "revealing_text": "Which part revealed the identity?",
    "other_knowledge": "What can you tell about the person?",
    "text": "The description",
}


@dataclass
class TelemetryReport:
    """A browser's report, checked for shape and for its own consistency.

    `values` is None when the post is missing or malformed (then nothing of it is used);
    `problems` says, in words a reviewer can check, what did not fit.
    """

    values: dict[str, Any] | None
    view: str = ""
    problems: list[str] = field(default_factory=list)


def clock_slack_ms(server_ms: int) -> int:
    """Return how far the browser's time on a page may exceed the server's."""
    return int(CLOCK_SLACK_MS + CLOCK_SLACK_SHARE * max(0, server_ms))


def undercount_slack_ms(server_ms: int) -> int:
    """Return how far the browser's time on a page may fall short of the server's."""
    return int(UNDERCOUNT_SLACK_MS + UNDERCOUNT_SLACK_SHARE * max(0, server_ms))


def _count(value: Any, high: int) -> bool:
    # bool is an int in Python; a JSON true is not a count.
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= high


def _fields_valid(value: Any) -> bool:
    if not isinstance(value, dict) or set(value) - set(ANSWER_FIELDS):
        return False
    return all(
        isinstance(counts, dict)
        and set(FIELD_COUNTS) <= set(counts) <= {*FIELD_COUNTS, RESTORED, LARGEST}
        and all(_count(n, MAX_COUNT) for n in counts.values())
        for counts in value.values()
    )


def _absences_valid(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) <= MAX_ABSENCES
        and all(
            isinstance(pair, list)
            and len(pair) == 2
            and all(_count(n, MAX_MS) for n in pair)
            and pair[0] <= pair[1]
            for pair in value
        )
    )


def absences_union(old: list[list[int]], new: list[list[int]]) -> list[list[int]]:
    """Return two lists of absences as one: overlapping ones joined, sorted.

    A union, not the newer list: a replayed or forged report can add an absence, never take
    one away. Beyond `MAX_ABSENCES` the two closest are joined (the gap counts as away:
    only the report's sender loses by it), so repeated reports cannot grow a view's record.
    """
    merged: list[list[int]] = []
    for start, end in sorted([*old, *new]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    while len(merged) > MAX_ABSENCES:
        gaps = [merged[i + 1][0] - merged[i][1] for i in range(len(merged) - 1)]
        i = gaps.index(min(gaps))
        merged[i : i + 2] = [[merged[i][0], merged[i + 1][1]]]
    return merged


def telemetry_parse(
    raw: str | None, *, signals: list[str] | tuple[str, ...], answer_fields: tuple[str, ...] = ()
) -> TelemetryReport:
    """Return the checked report (only the study's signals); `values` None when malformed.

    `answer_fields`: the page's answer fields, each of which the report must count.
    """
    if not raw:
        return TelemetryReport(None, problems=["no telemetry was sent"])
    if len(raw.encode("utf-8", "surrogatepass")) > MAX_TELEMETRY_BYTES:
        return TelemetryReport(None, problems=["the telemetry is too large to be a browser's"])
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return TelemetryReport(None, problems=["the telemetry is not JSON"])
    if not isinstance(data, dict) or data.get("v") != TELEMETRY_VERSION:
        return TelemetryReport(None, problems=["the telemetry is not of this version"])
    view = data.get("view", "")
    if not isinstance(view, str) or len(view) > 64:
        return TelemetryReport(None, problems=["the telemetry's page view is malformed"])
    values = {key: value for key, value in data.items() if key not in ("v", "view")}
    unknown = set(values) - set(TELEMETRY_FIELDS) - {"fields", ABSENCES}
    if unknown:
        return TelemetryReport(None, problems=[f"unknown fields: {', '.join(sorted(unknown))}"])
    for key, value in values.items():
        if key == "fields":
            if not _fields_valid(value):
                return TelemetryReport(None, problems=["the per-field counts are malformed"])
        elif key == ABSENCES:
            if not _absences_valid(value):
                return TelemetryReport(None, problems=["the absences are malformed"])
        elif not (value is None and key == "first_input_ms") and not _count(
            value, MAX_MS if key in MS_FIELDS else MAX_COUNT
        ):
            return TelemetryReport(None, problems=[f"{key} is not a plausible count"])
    enabled = set(signals)
    kept: dict[str, Any] = {
        key: value
        for key, value in values.items()
        if key not in ("fields", ABSENCES) and TELEMETRY_FIELDS[key] in enabled
    }
    if FIELDS_SIGNAL in enabled and "fields" in values:
        kept["fields"] = values["fields"]
    if "focus" in enabled and ABSENCES in values:
        kept[ABSENCES] = absences_union([], values[ABSENCES])
    report = TelemetryReport({"v": TELEMETRY_VERSION, **kept}, view=view)
    report.problems = _missing(kept, enabled=enabled, answer_fields=answer_fields)
    report.problems += _inconsistencies(kept)
    return report


def _missing(values: dict[str, Any], *, enabled: set[str], answer_fields: tuple[str, ...]) -> list:
    """Return the problem of fields the study records but the report left out."""
    expected = [key for key, signal in TELEMETRY_FIELDS.items() if signal in enabled]
    missing = [key for key in expected if key not in values]
    if FIELDS_SIGNAL in enabled:
        counted = values.get("fields") or {}
        missing += [f"fields.{name}" for name in answer_fields if name not in counted]
    return [f"missing: {', '.join(missing)}"] if missing else []


def _inconsistencies(values: dict[str, Any]) -> list[str]:
    """Return what in the report contradicts the rest of it."""
    problems = []
    page = values.get("page_ms")
    if page is not None:
        for part in ("first_input_ms", "typing_ms", "away_ms"):
            if (values.get(part) or 0) > page:
                problems.append(f"{part} ({values[part]} ms) exceeds the time on the page")
    fields = values.get("fields") or {}
    typed = sum(counts["typed"] for counts in fields.values())
    if "keystrokes" in values and typed and not values["keystrokes"]:
        problems.append(f"{typed} characters typed without a single input event")
    if page is not None and any(end > page for _, end in values.get(ABSENCES) or []):
        problems.append("an absence ends after the time on the page")
    pasted = sum(counts["pasted"] for counts in fields.values())
    if "paste_events" in values and pasted and not values["paste_events"]:
        problems.append(f"{pasted} characters pasted without a paste")
    return problems


def telemetry_merge(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """Return one page view's telemetry after a later report of the same view.

    A view's counters only grow, so the merge keeps each one's largest value: replaying an
    earlier report changes nothing, and reports may arrive in any order.
    """
    if not old:
        return dict(new)
    merged: dict[str, Any] = {**old, **new}
    for key in TELEMETRY_FIELDS:
        if key in old and key in new:
            if key == "first_input_ms":
                present = [v for v in (old[key], new[key]) if v is not None]
                merged[key] = min(present) if present else None
            else:
                merged[key] = max(old[key], new[key])
    if "fields" in old and "fields" in new:
        fields = {**old["fields"], **new["fields"]}
        for name in set(old["fields"]) & set(new["fields"]):
            before, after = old["fields"][name], new["fields"][name]
            fields[name] = {
                count: max(before.get(count, 0), after.get(count, 0)) for count in {*before, *after}
            }
        merged["fields"] = fields
    if ABSENCES in old or ABSENCES in new:
        merged[ABSENCES] = absences_union(old.get(ABSENCES, []), new.get(ABSENCES, []))
    return merged


def telemetry_sum(views: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the running totals of several page views' telemetry (a reload adds).

    Each view's absences stay with the view: laid beside the other views, they give the
    time away (`evidence.page_views`), which the sum of `away_ms` over views overstates
    when views overlap.
    """
    total: dict[str, Any] = {"v": TELEMETRY_VERSION}
    for values in views:
        for key, value in values.items():
            if key in ("v", "fields", ABSENCES) or value is None:
                continue
            if key == "first_input_ms":
                # The first input of the assignment: the first view's that had one.
                total.setdefault(key, value)
            else:
                total[key] = total.get(key, 0) + value
        for name, counts in (values.get("fields") or {}).items():
            into = total.setdefault("fields", {}).setdefault(name, dict.fromkeys(FIELD_COUNTS, 0))
            for count, n in counts.items():
                # The largest single insertion of any view, not a sum of them.
                into[count] = (
                    max(into.get(count, 0), n) if count == LARGEST else (into.get(count, 0) + n)
                )
    return total
