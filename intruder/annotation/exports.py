"""Project exports in TAB JSON, doccano JSONL and CSV, and agreement tables; and imports."""

from __future__ import annotations

import io
import json
from pathlib import Path

from django.core.exceptions import ValidationError

from anonymize.annotations.agreement import agreement_rows, project_agreement
from anonymize.annotations.formats import (
    CSV_FIELDS,
    FormatError,
    csv_rows,
    doccano_lines,
    read_csv,
    read_doccano,
    read_tab,
    tab_documents_to_json,
)
from anonymize.annotations.schema import AnnotatedDocument
from csv_safe import SafeDictWriter
from intruder.annotation.models import Project
from intruder.annotation.selectors import project_gold

FORMATS = {"tab": ".json", "doccano": ".jsonl", "csv": ".csv"}


def export_bytes(*, project: Project, fmt: str) -> bytes:
    """Return the project's submitted annotations in `fmt` (tab, doccano or csv)."""
    gold = project_gold(project=project)
    if fmt == "tab":
        return json.dumps(tab_documents_to_json(gold), ensure_ascii=False, indent=1).encode()
    if fmt == "doccano":
        return "".join(
            json.dumps(line, ensure_ascii=False) + "\n" for line in doccano_lines(gold)
        ).encode()
    if fmt == "csv":
        return _csv(csv_rows(gold), CSV_FIELDS)
    raise ValueError(f"unknown format {fmt!r}; choose tab, doccano or csv")


def agreement_export(*, project: Project, fmt: str) -> bytes:
    """Return the project's agreement as JSON or CSV."""
    result = project_agreement(project_gold(project=project, include_adjudicated=False))
    if fmt == "json":
        return json.dumps(result, indent=1).encode()
    rows = agreement_rows(result)
    return _csv(rows, list(rows[0]) if rows else ["scope"])


def _csv(rows: list[dict], fields) -> bytes:
    buffer = io.StringIO()
    writer = SafeDictWriter(buffer, fieldnames=list(fields), extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode()


def parse_annotation_file(*, project: Project, name: str, data: bytes) -> list[AnnotatedDocument]:
    """Read an annotation file by its extension (.json TAB, .jsonl doccano, .csv mentions)."""
    suffix = Path(name).suffix.lower()
    if suffix == ".json":
        return read_tab(data)
    if suffix == ".jsonl":
        return read_doccano(data)
    if suffix == ".csv":
        return read_csv(data, dict(project.documents.values_list("doc_id", "text")))
    raise FormatError(0, f"{name}: use .json (TAB), .jsonl (doccano) or .csv")


# What an import of annotations or texts refuses with: an unreadable file, or a check failed.
IMPORT_ERRORS = (FormatError, ValidationError)


def import_error_text(error: FormatError | ValidationError) -> str:
    """Say why an import wrote nothing: the file's line and reason, or the failed checks."""
    return "; ".join(error.messages) if isinstance(error, ValidationError) else str(error)
