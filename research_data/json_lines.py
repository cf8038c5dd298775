"""JSON Lines: the one reader of `.jsonl` files and uploads for the whole tree.

The research data (`textwash_study/*.jsonl`), the libraries' CLI inputs (`anonymize`,
`attacks`, `guard`), doccano files and the platform's uploads are all JSON Lines. Every
reader goes through here, so a line is a line everywhere (https://jsonlines.org):

- lines end at "\\n" only ("\\r\\n" leaves a "\\r", which JSON reads as whitespace). Never
  `str.splitlines()`: it also splits inside a string at U+2028, U+2029 or U+0085, which JSON
  allows unescaped, and at a bare "\\r";
- lines are numbered from 1 and blank lines are skipped (their numbers still count), so an
  error names the line an editor shows;
- bytes are decoded line by line, so one bad byte spoils its line, not the file; a UTF-8
  byte-order mark before the first line is dropped;
- a line that is not JSON comes back with the reason (`JsonLineError`): the decoder's
  message and column, "nested too deeply" instead of a RecursionError, and the integer
  conversion limit's message for a number of thousands of digits. With `strict=True`, NaN
  and infinities are refused too (they are not JSON, and PostgreSQL refuses them in a JSON
  column).

Whether a value must be an object, and which fields it needs, is each caller's business:
the messages differ by audience. Imports nothing of the tree, so every layer may use it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

BOM = "\ufeff"
BOM_BYTES = BOM.encode()
ErrorKind = Literal["encoding", "syntax", "depth", "number"]


class JsonLineError(ValueError):
    """Why one line (or one JSON cell) is not a JSON value; `str()` is the reason alone.

    `kind` tells a decoding error ("encoding", with the offending `byte`) from bad JSON
    ("syntax"), too deep nesting ("depth") and an unreadable number ("number"); `column`
    (1-based) says where, when known; `number` is the line, set by the line readers.
    """

    def __init__(
        self,
        reason: str,
        *,
        kind: ErrorKind = "syntax",
        column: int | None = None,
        byte: int | None = None,
        number: int = 0,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind
        self.column = column
        self.byte = byte
        self.number = number


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line: its number and either its value or the error that stopped it."""

    number: int
    value: Any = None
    error: JsonLineError | None = None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(value: str) -> float:
    number = float(value)
    if math.isinf(number):
        raise ValueError(f"number {value[:20]!r} is out of range")
    return number


def loads(text: str, *, strict: bool = False) -> Any:
    """Parse one JSON text; raise JsonLineError with a reason fit for an error message."""
    options: dict[str, Any] = {}
    if strict:
        options = {"parse_constant": _refuse_constant, "parse_float": _finite_float}
    try:
        return json.loads(text, **options)
    except json.JSONDecodeError as exc:
        raise JsonLineError(exc.msg, column=exc.colno) from None
    except RecursionError:
        raise JsonLineError("nested too deeply", kind="depth") from None
    except ValueError as exc:  # NaN/infinity when strict, or a 5000-digit integer
        raise JsonLineError(str(exc).split(";")[0], kind="number") from None


def _decoded(raw: str | bytes, number: int) -> str:
    """Return a line as text; raise JsonLineError naming the first byte that is not UTF-8."""
    if isinstance(raw, str):
        return raw.removeprefix(BOM) if number == 1 else raw
    skipped = len(BOM_BYTES) if number == 1 and raw.startswith(BOM_BYTES) else 0
    try:
        return raw[skipped:].decode("utf-8")
    except UnicodeDecodeError as exc:
        start = skipped + exc.start  # columns count the bytes of the line as given
        raise JsonLineError(
            "not valid UTF-8", kind="encoding", column=start + 1, byte=raw[start]
        ) from None


def _lines(source: str | bytes | Iterable[str | bytes]) -> Iterable[str | bytes]:
    if isinstance(source, str):
        return source.split("\n")
    if isinstance(source, bytes):
        return source.split(b"\n")
    return source  # a file opened in binary or text mode yields lines ending at "\n"


def json_lines(
    source: str | bytes | Iterable[str | bytes], *, strict: bool = False
) -> Iterator[JsonLine]:
    """Yield every non-blank line of `source`, parsed or with the reason it is not JSON.

    `source` is the whole text (str or bytes) or an iterable of lines (an open file).
    """
    for number, raw in enumerate(_lines(source), start=1):
        try:
            line = _decoded(raw, number)
            if not line.strip():
                continue
            yield JsonLine(number, loads(line, strict=strict))
        except JsonLineError as error:
            error.number = number
            yield JsonLine(number, error=error)


def json_values(
    source: str | bytes | Iterable[str | bytes], *, strict: bool = False
) -> Iterator[tuple[int, Any]]:
    """Yield (line number, value) per non-blank line; raise the first line's JsonLineError."""
    for line in json_lines(source, strict=strict):
        if line.error is not None:
            raise line.error
        yield line.number, line.value


def read_json_lines(path: Path | str) -> Iterator[tuple[int, Any]]:
    """Yield (line number, value) of a JSON Lines file; raise JsonLineError naming the line.

    The error's message is "<path>, line <n>: <reason>".
    """
    with Path(path).open("rb") as handle:
        for line in json_lines(handle):
            if line.error is not None:
                error = line.error
                raise JsonLineError(
                    f"{path}, line {line.number}: {error.reason}",
                    kind=error.kind,
                    column=error.column,
                    byte=error.byte,
                    number=line.number,
                )
            yield line.number, line.value
