"""Import target persons and descriptions into a study from CSV or JSONL.

Every row is validated before anything is written; one bad row rejects the whole file and
each error names the line and the field. Two kinds of rows, told apart by their fields:

- target rows: `name`, `group` (or `type`), optional `key`, `aliases` (JSON list, or a
  string separated by ';' or '|'), `wikipedia_url`, `profile` (JSON object);
- description rows: `text` (or `original`), a target given by `target` (a key) or by
  `person` + `type`/`group` (created when new), optional `id`/`external_id`, and optional
  `textwash`: an already anonymized version, stored as AnonymizedText method
  "textwash-original" so a study can replicate the paper's texts.

The Textwash study files (`textwash_study/*.jsonl`: id, study, type, item, person, original,
textwash) are description rows in this format.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.utils.text import slugify

from intruder.models import AnonymizedText, Description, PersonGroup, Study, TargetPerson
from intruder.services.anonymization import ORIGINAL_TEXTWASH_METHOD

FORMATS = ("csv", "jsonl")
TEXT_FIELDS = ("text", "original")
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
    key = _string(row, "target", line, errors)
    person = _string(row, "person", line, errors)
    group = _group(row, line, errors, required=False)
    implied = None
    if not key and not person:
        errors.append(RowError(line, "target", "give a target key or a person name"))
    elif not key:
        key = slugify(person)[:100]
        implied = _Target(line=line, key=key, name=_display_name(person), group=group)
    if len(errors) != count:
        return None
    return _Description(line, external_id, text, key, textwash), implied


def _same_target(a: _Target, b: _Target | TargetPerson) -> bool:
    return a.name.lower() == b.name.lower() and (not a.group or a.group == b.group)


def validate_rows(
    study: Study, rows: list[tuple[int, dict[str, Any]]]
) -> tuple[dict[str, _Target], list[_Description]]:
    """Return the targets to create or reuse and the descriptions; raise on any error."""
    errors: list[RowError] = []
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
        if any(row.get(name) is not None for name in TEXT_FIELDS):
            parsed = _parse_description(row, line, errors)
            if parsed is None:
                continue
            description, implied = parsed
            if implied is not None:
                add_target(implied, "person")
            if description.external_id:
                id_field = _first(row, ("id", "external_id"))
                if description.external_id in existing_ids:
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
    return targets, descriptions


def import_study_data(*, study: Study, content: bytes | str, fmt: str) -> ImportReport:
    """Validate a whole CSV/JSONL file, then write its targets and descriptions at once."""
    rows = parse_rows(content, fmt)
    targets, descriptions = validate_rows(study, rows)
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
    return report
