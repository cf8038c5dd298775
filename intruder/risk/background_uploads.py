"""Parse uploaded background documents per target person: TXT, CSV or JSONL.

- TXT: one file per person, named for the target key (`orlena.txt` -> key `orlena`);
- CSV: columns `target` (the key) and `text`, one row per document;
- JSONL: one object per line, `{"target": key, "text": ...}`.

The CSV and JSONL rows are the one background format of the platform and the guard
(`attacks.background.background_row`, which also takes `name` for `target` where unambiguous).

Several documents of one person are joined. Errors name the line and the field.
`uploaded_background_check` is the one check of an uploaded background, for attack runs and
guard runs alike.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import PurePath
from typing import TYPE_CHECKING

from attacks.background import TEXT_SEPARATOR, background_row
from csv_safe import SafeDictReader
from intruder.exceptions import IntruderError
from research_data.json_lines import json_lines

if TYPE_CHECKING:
    from intruder.models import Study


class BackgroundUploadError(IntruderError):
    """A background file the platform cannot read; the message names the line and field."""


def background_max_bytes() -> int:
    """Return the largest background (all files, UTF-8 bytes) a run may store and queue."""
    from django.conf import settings

    return int(settings.INTRUDER_BACKGROUND_MAX_MB * 1024 * 1024)


def background_check_size(documents: dict[str, str]) -> None:
    """Refuse a background larger than the limit: it is stored in one row and fed to a job."""
    limit = background_max_bytes()
    size = sum(len(key.encode()) + len(text.encode()) for key, text in documents.items())
    if size > limit:
        raise BackgroundUploadError(
            f"the background documents hold {size / 1024 / 1024:.1f} MB; the limit is "
            f"{limit / 1024 / 1024:.0f} MB (INTRUDER_BACKGROUND_MAX_MB)"
        )


def uploaded_background_check(
    study: Study, documents: dict[str, str], *, persons: int, strangers: bool
) -> None:
    """Refuse an uploaded background a run cannot use: documents for fewer than `persons` of
    the study's persons (the guard ranks among at least two), documents of other persons
    unless `strangers` (the guard takes them as more candidates; an attack run takes them as
    distractors, apart), or more bytes than a run may store."""
    keys = set(study.targets.values_list("key", flat=True))
    unknown = sorted(set(documents) - keys)
    if unknown and not strangers:
        raise BackgroundUploadError(
            f"background documents for unknown target key(s): {unknown[:5]} (name the files "
            "for the study's keys, or fill the target column)"
        )
    if len(set(documents) & keys) < persons:
        count = {1: "one", 2: "two"}.get(persons, str(persons))
        raise BackgroundUploadError(
            f"upload background documents for at least {count} of the study's target persons "
            "(files named for their keys, or a target column), or use the study's own texts"
        )
    background_check_size(documents)


def _decode(content: bytes, filename: str) -> str:
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise BackgroundUploadError(f"{filename}: not UTF-8 text ({error})") from None


def _row(values: dict, where: str) -> tuple[str, str]:
    try:
        target, text = background_row(values, where)
    except ValueError as error:
        raise BackgroundUploadError(str(error)) from None
    for field, value in (("target", target), ("text", text)):
        if "\x00" in value:  # PostgreSQL stores no NUL character in text or JSON
            raise BackgroundUploadError(f"{where}, field '{field}': holds a NUL character")
    return target, text


def parse_background_upload(content: bytes, filename: str) -> dict[str, str]:
    """Return target key -> background text from one uploaded file."""
    suffix = PurePath(filename).suffix.lower()
    text = _decode(content, filename)
    pairs: list[tuple[str, str]] = []
    if suffix == ".txt":
        if not text.strip():
            raise BackgroundUploadError(f"{filename}: the file is empty")
        pairs.append((PurePath(filename).stem, text.strip()))
    elif suffix == ".csv":
        reader = SafeDictReader(io.StringIO(text))
        columns = set(reader.fieldnames or [])
        missing = {"text"} - columns
        if not columns & {"target", "name"}:
            missing.add("target")
        if missing:
            raise BackgroundUploadError(
                f"{filename}, line 1: missing column(s) {', '.join(sorted(missing))}"
            )
        try:
            for row in reader:
                pairs.append(_row(row, f"{filename}, line {reader.line_num}"))
        except csv.Error as error:
            raise BackgroundUploadError(
                f"{filename}, line {reader.line_num or 1}: unreadable CSV ({error})"
            ) from None
    elif suffix in (".jsonl", ".json"):
        for parsed in json_lines(text):
            number, values, error = parsed.number, parsed.value, parsed.error
            if error is not None:
                reason = "JSON nested too deeply" if error.kind == "depth" else error.reason
                raise BackgroundUploadError(f"{filename}, line {number}: {reason}")
            if not isinstance(values, dict):
                raise BackgroundUploadError(f"{filename}, line {number}: not a JSON object")
            pairs.append(_row(values, f"{filename}, line {number}"))
    else:
        raise BackgroundUploadError(f"{filename}: use .txt, .csv or .jsonl")
    if not pairs:
        raise BackgroundUploadError(f"{filename}: no documents")
    return merge_documents([pairs])


def merge_documents(parts: Iterable[Iterable[tuple[str, str]]]) -> dict[str, str]:
    """Join the documents of each target key, in upload order."""
    joined: dict[str, list[str]] = {}
    for pairs in parts:
        for key, text in pairs:
            joined.setdefault(key, []).append(text)
    return {key: TEXT_SEPARATOR.join(texts) for key, texts in joined.items()}


def parse_background_uploads(files: Iterable[tuple[str, bytes]]) -> dict[str, str]:
    """Return target key -> background text from several uploaded files (size-limited)."""
    limit, seen, parsed = background_max_bytes(), 0, []
    for name, content in files:
        seen += len(content)
        if seen > limit:
            raise BackgroundUploadError(
                f"{name}: the uploads exceed {limit / 1024 / 1024:.0f} MB "
                "(INTRUDER_BACKGROUND_MAX_MB); nothing was queued"
            )
        parsed.append(parse_background_upload(content, name))
    documents = merge_documents([list(p.items()) for p in parsed])
    background_check_size(documents)
    return documents
