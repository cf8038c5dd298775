"""Read an uploaded CSV or JSON Lines file into numbered rows (the first step of an import).

A row is a dict of cells, numbered by the line it starts on, so every later error names the
line. CSV cells come back unescaped (`csv_safe`), JSON lines are read by the tree's one
reader (`research_data.json_lines`, strict: NaN and infinities are refused, as PostgreSQL
refuses them in a JSON column). What no column can hold (a NUL character) is refused here.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from csv_safe import SafeDictReader
from intruder.exchange.columns import FORMATS
from intruder.exchange.errors import ImportValidationError, RowError
from research_data.json_lines import json_lines

Rows = list[tuple[int, dict[str, Any]]]


def detect_format(filename: str) -> str:
    """Return "csv" or "jsonl" from a file name (".json" and ".ndjson" count as JSONL)."""
    lowered = filename.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    raise ImportValidationError([RowError(0, "file", "name must end in .csv or .jsonl")])


def parse_rows(content: bytes | str, fmt: str) -> Rows:
    """Return (line number, row) pairs of a CSV or JSONL file; raise on unreadable lines."""
    if fmt not in FORMATS:
        raise ImportValidationError([RowError(0, "file", f"unknown format {fmt!r}")])
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportValidationError(
                [RowError(0, "file", f"not UTF-8 text (byte {exc.start})")]
            ) from None
    rows: Rows = []
    errors: list[RowError] = []
    if fmt == "jsonl":
        _jsonl_rows(content, rows, errors)
    else:
        _csv_rows(content, rows, errors)
    if errors:
        raise ImportValidationError(errors)
    if not rows:
        raise ImportValidationError([RowError(0, "file", "no rows to import")])
    return rows


def _jsonl_rows(content: str, rows: Rows, errors: list[RowError]) -> None:
    for line in json_lines(content, strict=True):
        if line.error is not None:
            errors.append(RowError(line.number, "(line)", f"not valid JSON: {line.error}"))
        elif not isinstance(line.value, dict):
            errors.append(RowError(line.number, "(line)", "must be a JSON object"))
        else:
            _add_row(rows, errors, line.number, line.value)


def _csv_rows(content: str, rows: Rows, errors: list[RowError]) -> None:
    reader = SafeDictReader(io.StringIO(content, newline=""))
    try:
        if not reader.fieldnames:
            raise ImportValidationError([RowError(1, "(header)", "the CSV has no header row")])
        start = reader.line_num + 1
        for row in reader:
            if None in row:
                errors.append(RowError(start, "(line)", "more values than header columns"))
            else:
                cells = {k.strip(): v for k, v in row.items() if k}
                _add_row(rows, errors, start, cells)
            start = reader.line_num + 1
    except csv.Error as exc:
        # E.g. a field over the csv module's limit of 131,072 characters.
        errors.append(RowError(reader.line_num or 1, "(line)", f"unreadable CSV: {exc}"))


def _add_row(rows: Rows, errors: list[RowError], line: int, row: dict[str, Any]) -> None:
    """Keep a parsed row, or record an error if a value holds a NUL character.

    NUL cannot be stored in PostgreSQL text and is never meaningful in a description.
    """
    for name, value in row.items():
        if "\x00" in str(name) or _has_nul(value):
            errors.append(RowError(line, str(name).replace("\x00", ""), "contains a NUL character"))
            return
    rows.append((line, row))


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    if isinstance(value, dict):
        return any("\x00" in str(k) or _has_nul(v) for k, v in value.items())
    return False
