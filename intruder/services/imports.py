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
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.utils.dateparse import parse_datetime
from django.utils.text import slugify

from intruder.models import AnonymizedText, Description, PersonGroup, Study, TargetPerson
from intruder.services.anonymization import (
    ORIGINAL_TEXTWASH_METHOD,
    SpanEditError,
    validate_spans,
)

FORMATS = ("csv", "jsonl")
TEXT_FIELDS = ("text", "original")
ANONYMIZED_MARKERS = ("method", "spans")
PROVENANCE_FIELDS = ("writer_pid", "source_study", "source_description_id")
# Columns that only the platform's judgments / participants exports have.
NOT_IMPORTED = {"judgment_id": "judgments", "participant_id": "participants"}
DESCRIPTION_REFERENCE = re.compile(r"description-(\d+)")
MAX_ERRORS = 200


@dataclass(frozen=True)
class RowError:
    """One problem in an uploaded file, located by line and field."""

    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, field '{self.field}': {self.message}"


class ImportValidationError(Exception):
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
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                errors.append(RowError(number, "(line)", f"not valid JSON: {exc.msg}"))
                continue
            if not isinstance(row, dict):
                errors.append(RowError(number, "(line)", "must be a JSON object"))
                continue
            rows.append((number, row))
    else:
        reader = csv.DictReader(io.StringIO(content, newline=""))
        if not reader.fieldnames:
            raise ImportValidationError([RowError(1, "(header)", "the CSV has no header row")])
        start = reader.line_num + 1
        for row in reader:
            if None in row:
                errors.append(RowError(start, "(line)", "more values than header columns"))
            else:
                rows.append((start, {k.strip(): v for k, v in row.items() if k}))
            start = reader.line_num + 1
    if errors:
        raise ImportValidationError(errors)
    if not rows:
        raise ImportValidationError([RowError(0, "file", "no rows to import")])
    return rows


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
                value = json.loads(value)
            except json.JSONDecodeError:
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
            value = json.loads(value)
        except json.JSONDecodeError:
            errors.append(RowError(line, "profile", "not valid JSON"))
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
    group = _group(row, line, errors, required=True)
    key = _string(row, "key", line, errors) or slugify(name)
    url = _string(row, "wikipedia_url", line, errors)
    if url:
        try:
            URLValidator(schemes=["http", "https"])(url)
        except ValidationError:
            errors.append(RowError(line, "wikipedia_url", f"{url!r} is not a valid URL"))
    target = _Target(
        line=line,
        key=key[:100],
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
        key = slugify(person)[:100]
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
            value = json.loads(value)
        except json.JSONDecodeError:
            errors.append(RowError(line, name, "not valid JSON"))
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
    """Validate a whole CSV/JSONL file, then write its targets and descriptions at once."""
    rows = parse_rows(content, fmt)
    targets, descriptions, anonymized = validate_rows(study, rows)
    report = ImportReport()
    with transaction.atomic():
        stored: dict[str, TargetPerson] = {t.key: t for t in study.targets.all()}
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
            stored[key] = person
            report.targets_created += 1
        for item in descriptions:
            description = Description.objects.create(
                study=study,
                target=stored[item.target_key],
                external_id=item.external_id,
                text=item.text,
                provenance=item.provenance,
            )
            report.descriptions_created += 1
            if item.textwash:
                AnonymizedText.objects.create(
                    description=description,
                    method=ORIGINAL_TEXTWASH_METHOD,
                    model_version="textwash (published study texts)",
                    text=item.textwash,
                    spans=[],
                )
                report.anonymized_created += 1
        for text in anonymized:
            AnonymizedText.objects.create(
                description=text.description,
                method=text.method,
                model_version=text.model_version,
                text=text.text,
                spans=text.spans,
                status=text.status,
                revision=text.revision,
                reviewed_at=text.reviewed_at,
            )
            report.anonymized_created += 1
    return report
