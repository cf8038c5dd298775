"""The writer's character counter (participant.js) and the server count the same way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from intruder.services.writing import description_text_normalize

PARTICIPANT_JS = Path(__file__).resolve().parents[2] / "intruder/static/intruder/participant.js"


def _js_edge_space_class() -> set[str]:
    """Return the characters of the counter's PY_EDGE_SPACE character class."""
    source = PARTICIPANT_JS.read_text()
    body = re.search(r"PY_EDGE_SPACE = /\^\[([^\]]+)\]", source).group(1)
    chars: set[str] = set()
    tokens = re.findall(r"\\x[0-9a-f]{2}|\\u[0-9a-f]{4}|\\[trnvf]|-", body)
    escapes = {"\\t": "\t", "\\r": "\r", "\\n": "\n", "\\v": "\v", "\\f": "\f"}

    def char(token: str) -> str:
        return escapes.get(token) or chr(int(token[2:], 16))

    i = 0
    while i < len(tokens):
        if i + 2 < len(tokens) and tokens[i + 1] == "-":
            chars.update(map(chr, range(ord(char(tokens[i])), ord(char(tokens[i + 2])) + 1)))
            i += 3
        else:
            chars.add(char(tokens[i]))
            i += 1
    return chars


def test_the_counter_strips_exactly_the_whitespace_python_strips() -> None:
    python_space = {chr(i) for i in range(0x110000) if chr(i).isspace()}
    assert _js_edge_space_class() == python_space


@pytest.mark.parametrize(
    ("typed", "count"),
    [
        ("🙂" * 3, 3),  # outside the BMP: one code point, two UTF-16 units
        ("e\u0301" * 4, 4),  # e + combining acute composes to é under NFC
        ("q\u0301", 2),  # no precomposed form: two code points on both sides
        ("\u00a0 ab\r\ncd \u3000", 5),  # Python's whitespace stripped, CRLF -> LF
    ],
)
def test_the_server_counts_code_points_after_nfc(typed: str, count: int) -> None:
    assert len(description_text_normalize(typed)) == count
