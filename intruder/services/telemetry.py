"""Answer telemetry: what the browser reports about how an answer was made, checked here.

`intruder/static/intruder/telemetry.js` counts, never records: times, keystrokes, pastes and
their length, copies of the served text, focus and visibility losses. It posts them as one
small JSON object beside the answer. Nothing here trusts it: a post that is too large, not an
object, has an unknown key, a value of the wrong type or out of range, or is inconsistent
with the server's own clock becomes None ("no telemetry"), and the answer is stored anyway.
Signals the study switched off are dropped even when a browser sends them.
"""

from __future__ import annotations

import json
from typing import Any

# The post's hard bounds: a real one is ~250 bytes; anything larger is not ours.
MAX_TELEMETRY_BYTES = 2048
MAX_MS = 24 * 3600 * 1000
MAX_COUNT = 100_000
# The browser's page time may run ahead of the server's by clock granularity and the time
# the request takes to leave; more than this is forged.
CLOCK_SLACK_MS = 5_000

TELEMETRY_VERSION = 1

# Field -> the study signal (`Study.telemetry_signals`) that turns it on, and its unit.
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


def telemetry_parse(
    raw: str | None, *, signals: list[str] | tuple[str, ...], server_ms: int | None = None
) -> dict[str, Any] | None:
    """Return the validated telemetry (only the study's signals), or None for no telemetry.

    `server_ms`: the server's own time on the page, which the browser's cannot exceed by
    more than CLOCK_SLACK_MS.
    """
    if not raw or len(raw.encode("utf-8", "surrogatepass")) > MAX_TELEMETRY_BYTES:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("v") != TELEMETRY_VERSION:
        return None
    values = {key: value for key, value in data.items() if key != "v"}
    if not values or set(values) - set(TELEMETRY_FIELDS):
        return None
    for key, value in values.items():
        # bool is an int in Python; a JSON true is not a count.
        if value is None and key == "first_input_ms":
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        if not 0 <= value <= (MAX_MS if key in MS_FIELDS else MAX_COUNT):
            return None
    if not _consistent(values, server_ms=server_ms):
        return None
    enabled = set(signals)
    kept = {key: value for key, value in values.items() if TELEMETRY_FIELDS[key] in enabled}
    return {"v": TELEMETRY_VERSION, **kept}


def _consistent(values: dict[str, Any], *, server_ms: int | None) -> bool:
    """Return whether the figures fit each other and the server's clock."""
    page = values.get("page_ms")
    if page is None:
        return True
    if server_ms is not None and page > server_ms + CLOCK_SLACK_MS:
        return False
    for part in ("first_input_ms", "typing_ms", "away_ms"):
        if (values.get(part) or 0) > page:
            return False
    return True
