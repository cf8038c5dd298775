"""Parse one import row into a target, a description or an anonymized text, checked.

Each parser appends a `RowError` (line and field) for every problem it finds and returns
None when the row had any; nothing here writes. Column names come from the schema
(`intruder.exchange.columns`), the same the exports write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.utils.dateparse import parse_datetime
from django.utils.text import slugify

from intruder.exchange.columns import (
    DESCRIPTION_REFERENCE_COLUMNS,
    EXTERNAL_ID_COLUMNS,
    GROUP_COLUMNS,
    PROVENANCE_COLUMNS,
    TARGET_KEY_COLUMNS,
    TEXT_COLUMNS,
    AnonymizedTextColumn,
    DescriptionColumn,
    TargetColumn,
    TextwashColumn,
)
from intruder.exchange.errors import RowError
from intruder.models import AnonymizedText, Description, PersonGroup, Study, TargetPerson
from intruder.services.review import SpanEditError, validate_spans
from research_data.json_lines import loads

DESCRIPTION_REFERENCE = re.compile(r"description-(\d+)")
# Field lengths of the target model, checked per row so an error names the line.
MAX_KEY_CHARS = TargetPerson._meta.get_field("key").max_length
MAX_NAME_CHARS = TargetPerson._meta.get_field("name").max_length
MAX_URL_CHARS = TargetPerson._meta.get_field("wikipedia_url").max_length
MAX_EXTERNAL_ID_CHARS = Description._meta.get_field("external_id").max_length
MAX_METHOD_CHARS = AnonymizedText._meta.get_field("method").max_length
MAX_MODEL_VERSION_CHARS = AnonymizedText._meta.get_field("model_version").max_length


@dataclass
class ParsedTarget:
    line: int
    key: str
    name: str
    group: str
    aliases: list[str] = field(default_factory=list)
    wikipedia_url: str = ""
    profile: dict[str, Any] = field(default_factory=dict)
    existing: TargetPerson | None = None


@dataclass
class ParsedDescription:
    line: int
    external_id: str
    text: str
    target_key: str
    textwash: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass
class ParsedAnonymized:
    line: int
    description: Description
    method: str
    model_version: str
    text: str
    spans: list[dict[str, Any]]
    status: str
    revision: int
    reviewed_at: datetime | None = None


def string_cell(row: dict[str, Any], name: str, line: int, errors: list[RowError]) -> str:
    """Return a cell as stripped text (numbers become text); anything else is an error."""
    value = row.get(name)
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        errors.append(RowError(line, name, "must be a string"))
        return ""
    return value.strip()


def missing_column_message(row: dict[str, Any], message: str, known: set[str]) -> str:
    """Return `message`, naming the row's columns that no field reads: a "fullname" column
    is why "name" is missing, and the researcher should read so."""
    unread = [str(column) for column in row if column not in known and str(column).strip()]
    if not unread:
        return message
    listed = ", ".join(repr(column) for column in unread[:5])
    more = f" and {len(unread) - 5} more" if len(unread) > 5 else ""
    return f"{message}; the column(s) {listed}{more} are not read: rename the one meant"


def first_present(row: dict[str, Any], names: tuple[str, ...]) -> str:
    """Return the first of `names` present in the row (for messages and lookups)."""
    return next((n for n in names if row.get(n) not in (None, "")), names[0])


def _group(row: dict[str, Any], line: int, errors: list[RowError], required: bool) -> str:
    name = first_present(row, GROUP_COLUMNS)
    value = string_cell(row, name, line, errors).lower()
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
    name = TargetColumn.ALIASES
    value = row.get(name)
    if value in (None, ""):
        return []
    if isinstance(value, str):
        if value.lstrip().startswith("["):
            try:
                value = loads(value, strict=True)
            except ValueError:
                errors.append(RowError(line, name, "not a valid JSON list"))
                return []
        else:
            separator = ";" if ";" in value else "|"
            return [a.strip() for a in value.split(separator) if a.strip()]
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        errors.append(RowError(line, name, "must be a list of strings"))
        return []
    return [a.strip() for a in value if a.strip()]


def _json_cell(row: dict[str, Any], name: str, line: int, errors: list[RowError]) -> Any:
    """Return a nested cell: a JSON string in CSV, the value itself in JSONL (None = error)."""
    value = row.get(name)
    if isinstance(value, str):
        try:
            return loads(value, strict=True)
        except ValueError as exc:
            errors.append(RowError(line, name, f"not valid JSON: {exc}"))
            return None
    return value


def _profile(row: dict[str, Any], line: int, errors: list[RowError]) -> dict[str, Any]:
    name = TargetColumn.PROFILE
    if row.get(name) in (None, ""):
        return {}
    count = len(errors)
    value = _json_cell(row, name, line, errors)
    if len(errors) != count:
        return {}
    if not isinstance(value, dict):
        errors.append(RowError(line, name, "must be a JSON object"))
        return {}
    return value


def _json_list(row: dict[str, Any], name: str, line: int, errors: list[RowError]) -> list[Any]:
    if row.get(name) in (None, ""):
        return []
    count = len(errors)
    value = _json_cell(row, name, line, errors)
    if len(errors) != count:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        errors.append(RowError(line, name, "must be a JSON list of objects"))
        return []
    return value


def _display_name(person: str) -> str:
    """Return a lower-case name from the Textwash files ("mick jagger") in title case."""
    return person.title() if person == person.lower() else person


def _check_length(value: str, name: str, limit: int, line: int, errors: list[RowError]) -> None:
    if len(value) > limit:
        errors.append(RowError(line, name, f"longer than {limit} characters ({len(value)})"))


def key_from_name(name: str, field_name: str, line: int, errors: list[RowError]) -> str:
    """Return a target key made from a name; names in any script keep their letters."""
    key = slugify(name, allow_unicode=True)[:MAX_KEY_CHARS]
    if not key:
        errors.append(
            RowError(line, field_name, f"no key can be made from {name[:40]!r}; give a 'key'")
        )
    return key


def same_target(a: ParsedTarget, b: ParsedTarget | TargetPerson) -> bool:
    """Return whether two rows (or a row and a stored target) name the same person."""
    return a.name.lower() == b.name.lower() and (not a.group or a.group == b.group)


def _wikipedia_url(row: dict[str, Any], line: int, errors: list[RowError]) -> str:
    name = TargetColumn.WIKIPEDIA_URL
    url = string_cell(row, name, line, errors)
    if url:
        _check_length(url, name, MAX_URL_CHARS, line, errors)
        try:
            URLValidator(schemes=["http", "https"])(url)
        except ValidationError:
            errors.append(RowError(line, name, f"{url[:80]!r} is not a valid URL"))
    return url


def parse_target(row: dict[str, Any], line: int, errors: list[RowError]) -> ParsedTarget | None:
    """Return the target person of a target row (targets export or hand-made file)."""
    count = len(errors)
    name = string_cell(row, TargetColumn.NAME, line, errors)
    if not name and len(errors) == count:
        message = missing_column_message(row, "required", {c.value for c in TargetColumn})
        errors.append(RowError(line, TargetColumn.NAME, message))
    _check_length(name, TargetColumn.NAME, MAX_NAME_CHARS, line, errors)
    group = _group(row, line, errors, required=True)
    key = string_cell(row, TargetColumn.KEY, line, errors)
    if key:
        _check_length(key, TargetColumn.KEY, MAX_KEY_CHARS, line, errors)
    elif name:
        key = key_from_name(name, TargetColumn.KEY, line, errors)
    url = _wikipedia_url(row, line, errors)
    target = ParsedTarget(
        line=line,
        key=key,
        name=name,
        group=group,
        aliases=_aliases(row, line, errors),
        wikipedia_url=url,
        profile=_profile(row, line, errors),
    )
    return target if len(errors) == count else None


def _provenance(row: dict[str, Any], line: int, errors: list[RowError]) -> dict[str, Any]:
    """Return where a description came from (writer, source study and description)."""
    provenance: dict[str, Any] = {
        name: string_cell(row, name, line, errors) for name in PROVENANCE_COLUMNS if row.get(name)
    }
    source_id = DescriptionColumn.SOURCE_DESCRIPTION_ID
    if source_id in provenance:
        if not provenance[source_id].isdigit():
            errors.append(RowError(line, source_id, "must be a whole number"))
        else:
            provenance[source_id] = int(provenance[source_id])
    return provenance


def parse_description(
    row: dict[str, Any], line: int, errors: list[RowError]
) -> tuple[ParsedDescription, ParsedTarget | None] | None:
    """Return the description and, when it names a person, the target it implies."""
    count = len(errors)
    text_field = first_present(row, TEXT_COLUMNS)
    text = string_cell(row, text_field, line, errors)
    if not text and len(errors) == count:
        errors.append(RowError(line, text_field, "required and must not be empty"))
    id_field = first_present(row, EXTERNAL_ID_COLUMNS)
    external_id = string_cell(row, id_field, line, errors)
    if len(external_id) > MAX_EXTERNAL_ID_CHARS:
        errors.append(RowError(line, id_field, f"longer than {MAX_EXTERNAL_ID_CHARS} characters"))
    textwash = string_cell(row, TextwashColumn.TEXTWASH, line, errors)
    key_field = first_present(row, TARGET_KEY_COLUMNS)
    key = string_cell(row, key_field, line, errors)
    person = string_cell(row, TextwashColumn.PERSON, line, errors)
    group = _group(row, line, errors, required=False)
    implied = None
    if not key and not person:
        errors.append(RowError(line, TARGET_KEY_COLUMNS[0], "give a target key or a person name"))
    elif not key:
        _check_length(person, TextwashColumn.PERSON, MAX_NAME_CHARS, line, errors)
        key = key_from_name(person, TextwashColumn.PERSON, line, errors)
        implied = ParsedTarget(line=line, key=key, name=_display_name(person), group=group)
    elif string_cell(row, DescriptionColumn.TARGET_NAME, line, errors):
        # The descriptions export names the target by key, name and group: enough to create it.
        name = row[DescriptionColumn.TARGET_NAME].strip()
        implied = ParsedTarget(line=line, key=key, name=name, group=group)
    provenance = _provenance(row, line, errors)
    if len(errors) != count:
        return None
    description = ParsedDescription(line, external_id, text, key, textwash, provenance)
    return description, implied


def find_description(study: Study, reference: str, known: dict[str, Description]) -> Any:
    """Return the study's description named `reference` (external id or description-<id>)."""
    if reference in known:
        return known[reference]
    match = DESCRIPTION_REFERENCE.fullmatch(reference)
    if match:
        return study.descriptions.filter(pk=int(match.group(1)), external_id="").first()
    return None


def _status(row: dict[str, Any], line: int, errors: list[RowError]) -> str:
    name = AnonymizedTextColumn.STATUS
    status = string_cell(row, name, line, errors) or AnonymizedText.Status.DRAFT
    if status not in AnonymizedText.Status.values:
        choices = ", ".join(AnonymizedText.Status.values)
        errors.append(RowError(line, name, f"{status!r} is not one of {choices}"))
    return status


def _reviewed_at(row: dict[str, Any], line: int, errors: list[RowError]) -> datetime | None:
    name = AnonymizedTextColumn.REVIEWED_AT
    reviewed_text = string_cell(row, name, line, errors)
    try:
        reviewed_at = parse_datetime(reviewed_text) if reviewed_text else None
    except ValueError:
        reviewed_at = None
    if reviewed_text and reviewed_at is None:
        errors.append(RowError(line, name, "not an ISO date and time"))
    return reviewed_at


def _referenced_description(
    study: Study,
    row: dict[str, Any],
    line: int,
    errors: list[RowError],
    known: dict[str, Description],
) -> Description | None:
    """Return the description an anonymized-text row names (an error when it names none)."""
    count = len(errors)
    ref_field = first_present(row, DESCRIPTION_REFERENCE_COLUMNS)
    reference = string_cell(row, ref_field, line, errors)
    description = find_description(study, reference, known) if reference else None
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
    return description


def parse_anonymized(
    study: Study,
    row: dict[str, Any],
    line: int,
    errors: list[RowError],
    known: dict[str, Description],
) -> ParsedAnonymized | None:
    """Return an anonymized text of one of the study's descriptions, checked."""
    count = len(errors)
    description = _referenced_description(study, row, line, errors, known)
    text = string_cell(row, AnonymizedTextColumn.TEXT, line, errors)
    if not text and len(errors) == count:
        errors.append(RowError(line, AnonymizedTextColumn.TEXT, "required and must not be empty"))
    method = string_cell(row, AnonymizedTextColumn.METHOD, line, errors) or "imported"
    if len(method) > MAX_METHOD_CHARS:
        errors.append(
            RowError(
                line, AnonymizedTextColumn.METHOD, f"longer than {MAX_METHOD_CHARS} characters"
            )
        )
    status = _status(row, line, errors)
    revision_text = string_cell(row, AnonymizedTextColumn.REVISION, line, errors) or "1"
    if not revision_text.isdigit() or int(revision_text) < 1:
        errors.append(
            RowError(line, AnonymizedTextColumn.REVISION, "must be a whole number from 1")
        )
    reviewed_at = _reviewed_at(row, line, errors)
    spans = _json_list(row, AnonymizedTextColumn.SPANS, line, errors)
    if description is not None and spans:
        try:
            spans = validate_spans(description.text, spans)
        except (SpanEditError, KeyError, TypeError, ValueError) as exc:
            errors.append(
                RowError(line, AnonymizedTextColumn.SPANS, f"do not fit the description: {exc}")
            )
    if len(errors) != count:
        return None
    model_version = string_cell(row, AnonymizedTextColumn.MODEL_VERSION, line, errors)
    return ParsedAnonymized(
        line=line,
        description=description,
        method=method,
        model_version=model_version[:MAX_MODEL_VERSION_CHARS],
        text=text,
        spans=spans,
        status=status,
        revision=int(revision_text),
        reviewed_at=reviewed_at,
    )
