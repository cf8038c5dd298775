"""Import target persons and descriptions into a study from CSV or JSONL.

Every row is validated before anything is written; one bad row rejects the whole file and
each error names the line and the field. Two kinds of rows, told apart by their fields:

- target rows: `name`, `group` (or `type`), optional `key`, `aliases` (JSON list, or a
  string separated by ';' or '|'), `wikipedia_url`, `profile` (JSON object);
- description rows: `text` (or `original`), a target given by `target` or `target_key` (a
  key; with `target_name` and `group` a new person is created under that key) or by
  `person` + `type`/`group` (created when new), optional `id`/`external_id`, provenance
  (`writer_pid`, `source_study`, `source_description_id`), and optional `textwash`: an
  already anonymized version, stored as AnonymizedText method "textwash-original" so a
  study can replicate the paper's texts;
- anonymized-text rows (they have `method` or `spans`): `description_external_id` (the
  description's external id, or `description-<id>` for one without), `text`, `spans`
  (JSON list), `method`, `model_version`, `status`, `revision`.

So the platform's own exports of targets, descriptions and anonymized texts import as they
are. The Textwash study files (`textwash_study/*.jsonl`: id, study, type, item, person,
original, textwash) are description rows in this format. Judgments and participants exports
are refused with a reason: they record what happened on the platform.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import socket
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.text import slugify

from csv_safe import SafeDictReader
from intruder.exceptions import IntruderError
from intruder.models import (
    AnonymizedText,
    Description,
    ImportBatch,
    PersonGroup,
    Study,
    TargetPerson,
)
from intruder.services.anonymization import ORIGINAL_TEXTWASH_METHOD
from intruder.services.jobs import worker_name
from intruder.services.review import SpanEditError, validate_spans

FORMATS = ("csv", "jsonl")
TEXT_FIELDS = ("text", "original")
ANONYMIZED_MARKERS = ("method", "spans")
PROVENANCE_FIELDS = ("writer_pid", "source_study", "source_description_id")
# Columns that only the platform's judgments / participants exports have.
NOT_IMPORTED = {"judgment_id": "judgments", "participant_id": "participants"}
DESCRIPTION_REFERENCE = re.compile(r"description-(\d+)")
MAX_ERRORS = 200
# Rows written per transaction: a long import never holds SQLite's write lock for more
# than a moment, so participants keep enrolling and answering while it runs.
WRITE_BATCH_ROWS = 500
# Field lengths of the target model, checked per row so an error names the line.
MAX_KEY_CHARS = TargetPerson._meta.get_field("key").max_length
MAX_NAME_CHARS = TargetPerson._meta.get_field("name").max_length
MAX_URL_CHARS = TargetPerson._meta.get_field("wikipedia_url").max_length


@dataclass(frozen=True)
class RowError:
    """One problem in an uploaded file, located by line and field."""

    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, field '{self.field}': {self.message}"


class ImportValidationError(IntruderError):
    """The file has errors; nothing was written."""

    def __init__(self, errors: list[RowError]) -> None:
        self.errors = errors
        shown = "; ".join(str(e) for e in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        super().__init__(f"{len(errors)} error(s), nothing imported: {shown}{more}")


@dataclass
class ImportReport:
    """What an import wrote."""

    targets_created: int = 0
    targets_reused: int = 0
    descriptions_created: int = 0
    anonymized_created: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class _Target:
    line: int
    key: str
    name: str
    group: str
    aliases: list[str] = field(default_factory=list)
    wikipedia_url: str = ""
    profile: dict[str, Any] = field(default_factory=dict)
    existing: TargetPerson | None = None


@dataclass
class _Description:
    line: int
    external_id: str
    text: str
    target_key: str
    textwash: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Anonymized:
    line: int
    description: Description
    method: str
    model_version: str
    text: str
    spans: list[dict[str, Any]]
    status: str
    revision: int
    reviewed_at: datetime | None = None


def detect_format(filename: str) -> str:
    """Return "csv" or "jsonl" from a file name (".json" and ".ndjson" count as JSONL)."""
    lowered = filename.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    raise ImportValidationError([RowError(0, "file", "name must end in .csv or .jsonl")])


def parse_rows(content: bytes | str, fmt: str) -> list[tuple[int, dict[str, Any]]]:
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
    rows: list[tuple[int, dict[str, Any]]] = []
    errors: list[RowError] = []
    if fmt == "jsonl":
        for number, line in enumerate(content.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json_loads(line)
            except ValueError as exc:
                errors.append(RowError(number, "(line)", f"not valid JSON: {exc}"))
                continue
            if not isinstance(row, dict):
                errors.append(RowError(number, "(line)", "must be a JSON object"))
                continue
            _add_row(rows, errors, number, row)
    else:
        _csv_rows(content, rows, errors)
    if errors:
        raise ImportValidationError(errors)
    if not rows:
        raise ImportValidationError([RowError(0, "file", "no rows to import")])
    return rows


def json_loads(text: str) -> Any:
    """Parse JSON, refusing what the database cannot store or Python cannot parse safely.

    NaN and infinities are not JSON (PostgreSQL refuses them in a JSON column), numbers of
    thousands of digits exceed Python's integer conversion limit, and deep nesting exhausts
    the recursion limit: each raises ValueError with a message for the error list.
    """

    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    def finite_float(value: str) -> float:
        number = float(value)
        if math.isinf(number):
            raise ValueError(f"number {value[:20]!r} is out of range")
        return number

    try:
        return json.loads(text, parse_constant=refuse_constant, parse_float=finite_float)
    except json.JSONDecodeError as exc:
        raise ValueError(exc.msg) from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except ValueError as exc:  # e.g. a 5000-digit integer
        raise ValueError(str(exc).split(";")[0]) from None


def _csv_rows(content: str, rows: list[tuple[int, dict[str, Any]]], errors: list[RowError]) -> None:
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


def _add_row(
    rows: list[tuple[int, dict[str, Any]]],
    errors: list[RowError],
    line: int,
    row: dict[str, Any],
) -> None:
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


def _string(row: dict[str, Any], name: str, line: int, errors: list[RowError]) -> str:
    value = row.get(name)
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        errors.append(RowError(line, name, "must be a string"))
        return ""
    return value.strip()


def _first(row: dict[str, Any], names: tuple[str, ...]) -> str:
    """Return the first of `names` present in the row (for messages and lookups)."""
    return next((n for n in names if row.get(n) not in (None, "")), names[0])


def _group(row: dict[str, Any], line: int, errors: list[RowError], required: bool) -> str:
    name = _first(row, ("group", "type"))
    value = _string(row, name, line, errors).lower()
    if not value:
        if required:
            errors.append(RowError(line, name, "required (famous, semifamous or fictitious)"))
        return ""
    if value not in PersonGroup.values:
        errors.append(
            RowError(line, name, f"{value!r} is not one of {', '.join(PersonGroup.values)}")
        )
        return ""
    return value


def _aliases(row: dict[str, Any], line: int, errors: list[RowError]) -> list[str]:
    value = row.get("aliases")
    if value in (None, ""):
        return []
    if isinstance(value, str):
        if value.lstrip().startswith("["):
            try:
                value = json_loads(value)
            except ValueError:
                errors.append(RowError(line, "aliases", "not a valid JSON list"))
                return []
        else:
            separator = ";" if ";" in value else "|"
            return [a.strip() for a in value.split(separator) if a.strip()]
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        errors.append(RowError(line, "aliases", "must be a list of strings"))
        return []
    return [a.strip() for a in value if a.strip()]


def _profile(row: dict[str, Any], line: int, errors: list[RowError]) -> dict[str, Any]:
    value = row.get("profile")
    if value in (None, ""):
        return {}
    if isinstance(value, str):
        try:
            value = json_loads(value)
        except ValueError as exc:
            errors.append(RowError(line, "profile", f"not valid JSON: {exc}"))
            return {}
    if not isinstance(value, dict):
        errors.append(RowError(line, "profile", "must be a JSON object"))
        return {}
    return value


def _display_name(person: str) -> str:
    """Return a lower-case name from the Textwash files ("mick jagger") in title case."""
    return person.title() if person == person.lower() else person


def _parse_target(row: dict[str, Any], line: int, errors: list[RowError]) -> _Target | None:
    count = len(errors)
    name = _string(row, "name", line, errors)
    if not name and len(errors) == count:
        errors.append(RowError(line, "name", "required"))
    _check_length(name, "name", MAX_NAME_CHARS, line, errors)
    group = _group(row, line, errors, required=True)
    key = _string(row, "key", line, errors)
    if key:
        _check_length(key, "key", MAX_KEY_CHARS, line, errors)
    elif name:
        key = _key_from_name(name, "key", line, errors)
    url = _string(row, "wikipedia_url", line, errors)
    if url:
        _check_length(url, "wikipedia_url", MAX_URL_CHARS, line, errors)
        try:
            URLValidator(schemes=["http", "https"])(url)
        except ValidationError:
            errors.append(RowError(line, "wikipedia_url", f"{url[:80]!r} is not a valid URL"))
    target = _Target(
        line=line,
        key=key,
        name=name,
        group=group,
        aliases=_aliases(row, line, errors),
        wikipedia_url=url,
        profile=_profile(row, line, errors),
    )
    return target if len(errors) == count else None


def _parse_description(
    row: dict[str, Any], line: int, errors: list[RowError]
) -> tuple[_Description, _Target | None] | None:
    """Return the description and, when it names a person, the target it implies."""
    count = len(errors)
    text_field = _first(row, TEXT_FIELDS)
    text = _string(row, text_field, line, errors)
    if not text and len(errors) == count:
        errors.append(RowError(line, text_field, "required and must not be empty"))
    id_field = _first(row, ("id", "external_id"))
    external_id = _string(row, id_field, line, errors)
    if len(external_id) > 100:
        errors.append(RowError(line, id_field, "longer than 100 characters"))
    textwash = _string(row, "textwash", line, errors)
    key_field = _first(row, ("target", "target_key"))
    key = _string(row, key_field, line, errors)
    person = _string(row, "person", line, errors)
    group = _group(row, line, errors, required=False)
    implied = None
    if not key and not person:
        errors.append(RowError(line, "target", "give a target key or a person name"))
    elif not key:
        _check_length(person, "person", MAX_NAME_CHARS, line, errors)
        key = _key_from_name(person, "person", line, errors)
        implied = _Target(line=line, key=key, name=_display_name(person), group=group)
    elif _string(row, "target_name", line, errors):
        # The descriptions export names the target by key, name and group: enough to create it.
        implied = _Target(line=line, key=key, name=row["target_name"].strip(), group=group)
    provenance = {
        name: _string(row, name, line, errors) for name in PROVENANCE_FIELDS if row.get(name)
    }
    if "source_description_id" in provenance:
        if not provenance["source_description_id"].isdigit():
            errors.append(RowError(line, "source_description_id", "must be a whole number"))
        else:
            provenance["source_description_id"] = int(provenance["source_description_id"])
    if len(errors) != count:
        return None
    description = _Description(line, external_id, text, key, textwash, provenance)
    return description, implied


def _json_list(row: dict[str, Any], name: str, line: int, errors: list[RowError]) -> list[Any]:
    value = row.get(name)
    if value in (None, ""):
        return []
    if isinstance(value, str):
        try:
            value = json_loads(value)
        except ValueError as exc:
            errors.append(RowError(line, name, f"not valid JSON: {exc}"))
            return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        errors.append(RowError(line, name, "must be a JSON list of objects"))
        return []
    return value


def _find_description(study: Study, reference: str, known: dict[str, Description]) -> Any:
    """Return the study's description named `reference` (external id or description-<id>)."""
    if reference in known:
        return known[reference]
    match = DESCRIPTION_REFERENCE.fullmatch(reference)
    if match:
        return study.descriptions.filter(pk=int(match.group(1)), external_id="").first()
    return None


def _parse_anonymized(
    study: Study,
    row: dict[str, Any],
    line: int,
    errors: list[RowError],
    known: dict[str, Description],
) -> _Anonymized | None:
    """Return an anonymized text of one of the study's descriptions, checked."""
    count = len(errors)
    ref_field = _first(row, ("description_external_id", "description"))
    reference = _string(row, ref_field, line, errors)
    description = _find_description(study, reference, known) if reference else None
    if reference and description is None:
        errors.append(
            RowError(
                line,
                ref_field,
                f"no description {reference!r} in the study: import the descriptions first",
            )
        )
    elif not reference and len(errors) == count:
        errors.append(RowError(line, ref_field, "required: the description this text anonymizes"))
    text = _string(row, "text", line, errors)
    if not text and len(errors) == count:
        errors.append(RowError(line, "text", "required and must not be empty"))
    method = _string(row, "method", line, errors) or "imported"
    if len(method) > 50:
        errors.append(RowError(line, "method", "longer than 50 characters"))
    status = _string(row, "status", line, errors) or AnonymizedText.Status.DRAFT
    if status not in AnonymizedText.Status.values:
        errors.append(
            RowError(
                line,
                "status",
                f"{status!r} is not one of {', '.join(AnonymizedText.Status.values)}",
            )
        )
    revision_text = _string(row, "revision", line, errors) or "1"
    if not revision_text.isdigit() or int(revision_text) < 1:
        errors.append(RowError(line, "revision", "must be a whole number from 1"))
    reviewed_text = _string(row, "reviewed_at", line, errors)
    try:
        reviewed_at = parse_datetime(reviewed_text) if reviewed_text else None
    except ValueError:
        reviewed_at = None
    if reviewed_text and reviewed_at is None:
        errors.append(RowError(line, "reviewed_at", "not an ISO date and time"))
    spans = _json_list(row, "spans", line, errors)
    if description is not None and spans:
        try:
            spans = validate_spans(description.text, spans)
        except (SpanEditError, KeyError, TypeError, ValueError) as exc:
            errors.append(RowError(line, "spans", f"do not fit the description: {exc}"))
    if len(errors) != count:
        return None
    return _Anonymized(
        line=line,
        description=description,
        method=method,
        model_version=_string(row, "model_version", line, errors)[:100],
        text=text,
        spans=spans,
        status=status,
        revision=int(revision_text),
        reviewed_at=reviewed_at,
    )


def _check_length(value: str, name: str, limit: int, line: int, errors: list[RowError]) -> None:
    if len(value) > limit:
        errors.append(RowError(line, name, f"longer than {limit} characters ({len(value)})"))


def _key_from_name(name: str, field_name: str, line: int, errors: list[RowError]) -> str:
    """Return a target key made from a name; names in any script keep their letters."""
    key = slugify(name, allow_unicode=True)[:MAX_KEY_CHARS]
    if not key:
        errors.append(
            RowError(line, field_name, f"no key can be made from {name[:40]!r}; give a 'key'")
        )
    return key


def _same_target(a: _Target, b: _Target | TargetPerson) -> bool:
    return a.name.lower() == b.name.lower() and (not a.group or a.group == b.group)


def validate_rows(
    study: Study, rows: list[tuple[int, dict[str, Any]]]
) -> tuple[dict[str, _Target], list[_Description], list[_Anonymized]]:
    """Return the targets to create or reuse, the descriptions and the anonymized texts;
    raise on any error."""
    errors: list[RowError] = []
    anonymized: list[_Anonymized] = []
    known = {d.external_id: d for d in study.descriptions.exclude(external_id="")}
    taken = set(
        AnonymizedText.objects.filter(description__study=study).values_list(
            "description_id", "method"
        )
    )
    anonymized_lines: dict[tuple[int, str], int] = {}
    existing_targets = {t.key: t for t in study.targets.all()}
    existing_ids = set(
        study.descriptions.exclude(external_id="").values_list("external_id", flat=True)
    )
    targets: dict[str, _Target] = {}
    descriptions: list[_Description] = []
    seen_ids: dict[str, int] = {}

    def add_target(target: _Target, field_name: str) -> None:
        known = targets.get(target.key)
        if known is not None:
            if not _same_target(target, known):
                errors.append(
                    RowError(
                        target.line,
                        field_name,
                        f"key {target.key!r} already used on line {known.line} "
                        f"for {known.name!r} ({known.group})",
                    )
                )
            return
        stored = existing_targets.get(target.key)
        if stored is not None:
            if not _same_target(target, stored):
                errors.append(
                    RowError(
                        target.line,
                        field_name,
                        f"key {target.key!r} exists in the study as {stored.name!r} "
                        f"({stored.group})",
                    )
                )
                return
            target.existing = stored
        elif not target.group:
            errors.append(RowError(target.line, "type", "required for a new person"))
            return
        targets[target.key] = target

    for line, row in rows:
        refused = next((table for column, table in NOT_IMPORTED.items() if column in row), None)
        if refused is not None:
            raise ImportValidationError(
                [
                    RowError(
                        line,
                        "(file)",
                        f"this is a {refused} export: {refused} record what happened on "
                        "the platform and are not imported (targets, descriptions and "
                        "anonymized texts are)",
                    )
                ]
            )
        if any(name in row for name in ANONYMIZED_MARKERS):
            parsed_text = _parse_anonymized(study, row, line, errors, known)
            if parsed_text is not None:
                key = (parsed_text.description.pk, parsed_text.method)
                if key in taken:
                    errors.append(
                        RowError(
                            line,
                            "method",
                            f"the description already has a {parsed_text.method!r} text",
                        )
                    )
                elif key in anonymized_lines:
                    errors.append(RowError(line, "method", f"repeats line {anonymized_lines[key]}"))
                anonymized_lines.setdefault(key, line)
                anonymized.append(parsed_text)
        elif any(row.get(name) is not None for name in TEXT_FIELDS):
            parsed = _parse_description(row, line, errors)
            if parsed is None:
                continue
            description, implied = parsed
            if implied is not None:
                add_target(implied, "person")
            if description.external_id:
                id_field = _first(row, ("id", "external_id"))
                if description.external_id in existing_ids or (
                    _find_description(study, description.external_id, {}) is not None
                ):
                    errors.append(
                        RowError(
                            line,
                            id_field,
                            f"{description.external_id!r} is already in the study",
                        )
                    )
                elif description.external_id in seen_ids:
                    errors.append(
                        RowError(
                            line,
                            id_field,
                            f"{description.external_id!r} repeats line "
                            f"{seen_ids[description.external_id]}",
                        )
                    )
                seen_ids.setdefault(description.external_id, line)
            descriptions.append(description)
        else:
            target = _parse_target(row, line, errors)
            if target is not None:
                add_target(target, "key" if row.get("key") else "name")
        if len(errors) >= MAX_ERRORS:
            break
    for description in descriptions:
        if description.target_key not in targets and description.target_key not in (
            existing_targets
        ):
            errors.append(
                RowError(
                    description.line,
                    "target",
                    f"no target {description.target_key!r} in the file or the study",
                )
            )
    if errors:
        raise ImportValidationError(errors)
    return targets, descriptions, anonymized


def import_study_data(*, study: Study, content: bytes | str, fmt: str) -> ImportReport:
    """Validate a whole CSV/JSONL file, then write its targets and descriptions.

    Rows are written in batches of WRITE_BATCH_ROWS, one transaction each, so a long import
    never blocks the study's participants. Everything was validated before the first write;
    should a write still fail, what this import wrote is deleted again before the error is
    raised, so an import lands whole or not at all.
    """
    imports_roll_back_abandoned(study=study)
    rows = parse_rows(content, fmt)
    targets, descriptions, anonymized = validate_rows(study, rows)
    report = ImportReport()
    created_targets: list[int] = []
    created_descriptions: list[int] = []
    created_texts: list[int] = []
    marker = ImportBatch.objects.create(study=study, worker=worker_name())

    def commit_marker() -> None:
        # In the batch's own transaction: after a crash the marker lists what was committed.
        ImportBatch.objects.filter(pk=marker.pk).update(
            created={
                "targets": created_targets,
                "descriptions": created_descriptions,
                "texts": created_texts,
            },
            heartbeat_at=timezone.now(),
        )

    try:
        with transaction.atomic():
            stored = _write_targets(study, targets, report, created_targets)
            commit_marker()
        for start in range(0, len(descriptions), WRITE_BATCH_ROWS):
            batch = descriptions[start : start + WRITE_BATCH_ROWS]
            with transaction.atomic():
                _write_descriptions(study, batch, stored, report, created_descriptions)
                commit_marker()
        for start in range(0, len(anonymized), WRITE_BATCH_ROWS):
            with transaction.atomic():
                _write_anonymized(
                    anonymized[start : start + WRITE_BATCH_ROWS], report, created_texts
                )
                commit_marker()
    except BaseException:
        _delete_created(created_targets, created_descriptions, created_texts)
        ImportBatch.objects.filter(pk=marker.pk).delete()
        raise
    ImportBatch.objects.filter(pk=marker.pk).delete()
    return report


def _delete_created(targets: list[int], descriptions: list[int], texts: list[int]) -> None:
    with transaction.atomic():
        AnonymizedText.objects.filter(pk__in=texts).delete()
        AnonymizedText.objects.filter(description_id__in=descriptions).delete()
        Description.objects.filter(pk__in=descriptions).delete()
        TargetPerson.objects.filter(pk__in=targets).delete()


class ImportRunning(ImportValidationError):
    """Another import into this study is still running."""

    status_code = 409


def _process_alive(worker: str) -> bool:
    """Return whether host:pid names a live process (another host's: assume it is)."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def imports_roll_back_abandoned(
    *, study: Study | None = None, stale_after: timedelta = timedelta(minutes=30)
) -> int:
    """Delete what crashed imports left behind (their process is gone); return how many.

    Called before every import of a study and when a worker starts. An import on another
    host counts as crashed once its marker has not moved for `stale_after`. An import still
    running into the same study refuses the new one.
    """
    markers = ImportBatch.objects.all() if study is None else study.import_batches.all()
    rolled_back = 0
    for marker in markers:
        alive = _process_alive(marker.worker)
        if alive and marker.heartbeat_at > timezone.now() - stale_after:
            if study is not None:
                raise ImportRunning(
                    [RowError(0, "(file)", "another import into this study is still running")]
                )
            continue
        created = marker.created or {}
        _delete_created(
            created.get("targets", []), created.get("descriptions", []), created.get("texts", [])
        )
        marker.delete()
        rolled_back += 1
    return rolled_back


def _write_targets(
    study: Study, targets: dict[str, _Target], report: ImportReport, created: list[int]
) -> dict[str, TargetPerson]:
    stored: dict[str, TargetPerson] = {t.key: t for t in study.targets.all()}
    with transaction.atomic():
        for key, target in targets.items():
            if target.existing is not None:
                report.targets_reused += 1
                continue
            person = TargetPerson(
                study=study,
                key=key,
                name=target.name,
                group=target.group,
                aliases=target.aliases,
                wikipedia_url=target.wikipedia_url,
                profile=target.profile,
            )
            person.full_clean(validate_unique=False, validate_constraints=False)
            person.save()
            created.append(person.pk)
            stored[key] = person
            report.targets_created += 1
    return stored


def _write_descriptions(
    study: Study,
    batch: list[_Description],
    stored: dict[str, TargetPerson],
    report: ImportReport,
    created: list[int],
) -> None:
    made = Description.objects.bulk_create(
        [
            Description(
                study=study,
                target=stored[item.target_key],
                external_id=item.external_id,
                text=item.text,
                provenance=item.provenance,
            )
            for item in batch
        ]
    )
    created.extend(d.pk for d in made)
    report.descriptions_created += len(made)
    textwash = [
        AnonymizedText(
            description=description,
            method=ORIGINAL_TEXTWASH_METHOD,
            model_version="textwash (published study texts)",
            text=item.textwash,
            spans=[],
        )
        for description, item in zip(made, batch, strict=True)
        if item.textwash
    ]
    AnonymizedText.objects.bulk_create(textwash)
    report.anonymized_created += len(textwash)


def _write_anonymized(batch: list[_Anonymized], report: ImportReport, created: list[int]) -> None:
    """Write anonymized texts of descriptions already in the study (an export read back)."""
    made = AnonymizedText.objects.bulk_create(
        [
            AnonymizedText(
                description=text.description,
                method=text.method,
                model_version=text.model_version,
                text=text.text,
                spans=text.spans,
                status=text.status,
                revision=text.revision,
                reviewed_at=text.reviewed_at,
            )
            for text in batch
        ]
    )
    created.extend(t.pk for t in made)
    report.anonymized_created += len(made)
