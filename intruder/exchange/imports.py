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

The steps, each in its module (doccano's `data_import/pipeline` is the model): `readers`
turns the file into numbered rows, `parsers` turns each row into a checked record, this
module checks the rows against each other and the study, then writes them in batches
(`ImportBatch` marks what a crashed import wrote, so it is rolled back). Column names come
from `intruder.exchange.columns`, which the exports write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from intruder.exchange.columns import (
    ANONYMIZED_MARKERS,
    EXTERNAL_ID_COLUMNS,
    NOT_IMPORTED,
    TEXT_COLUMNS,
    AnonymizedTextColumn,
    TargetColumn,
    TextwashColumn,
)
from intruder.exchange.errors import ImportRunning, ImportValidationError, RowError
from intruder.exchange.parsers import (
    ParsedAnonymized,
    ParsedDescription,
    ParsedTarget,
    find_description,
    first_present,
    parse_anonymized,
    parse_description,
    parse_target,
    same_target,
)
from intruder.exchange.readers import Rows, detect_format, parse_rows
from intruder.models import AnonymizedText, Description, ImportBatch, Study, TargetPerson
from intruder.services.anonymization import ORIGINAL_TEXTWASH_METHOD
from intruder.services.jobs import worker_name
from intruder.services.scoring import judgments_rescore

# The import service as the rest of the platform calls it (views, commands, the demo).
__all__ = [
    "ImportRunning",
    "ImportTally",
    "ImportValidationError",
    "RowError",
    "detect_format",
    "import_study_data",
    "imports_roll_back_abandoned",
]

MAX_ERRORS = 200
# Rows written per transaction: a long import never holds SQLite's write lock for more
# than a moment, so participants keep enrolling and answering while it runs.
WRITE_BATCH_ROWS = 500


@dataclass
class ImportTally:
    """What an import wrote."""

    targets_created: int = 0
    targets_reused: int = 0
    descriptions_created: int = 0
    anonymized_created: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class CheckedRows:
    """The rows of a file, checked against each other and the study: ready to write."""

    targets: dict[str, ParsedTarget] = field(default_factory=dict)
    descriptions: list[ParsedDescription] = field(default_factory=list)
    anonymized: list[ParsedAnonymized] = field(default_factory=list)


class _RowChecker:
    """Check each row against the rows before it and the study, collecting every error."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.errors: list[RowError] = []
        self.checked = CheckedRows()
        self.known = {d.external_id: d for d in study.descriptions.exclude(external_id="")}
        self.taken = set(
            AnonymizedText.objects.filter(description__study=study).values_list(
                "description_id", "method"
            )
        )
        self.anonymized_lines: dict[tuple[int, str], int] = {}
        self.existing_targets = {t.key: t for t in study.targets.all()}
        self.existing_ids = set(
            study.descriptions.exclude(external_id="").values_list("external_id", flat=True)
        )
        self.seen_ids: dict[str, int] = {}

    def add_target(self, target: ParsedTarget, field_name: str) -> None:
        """Keep a target unless its key names another person in the file or the study."""
        targets = self.checked.targets
        known = targets.get(target.key)
        if known is not None:
            if not same_target(target, known):
                self.errors.append(
                    RowError(
                        target.line,
                        field_name,
                        f"key {target.key!r} already used on line {known.line} "
                        f"for {known.name!r} ({known.group})",
                    )
                )
            return
        stored = self.existing_targets.get(target.key)
        if stored is not None:
            if not same_target(target, stored):
                self.errors.append(
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
            self.errors.append(
                RowError(target.line, TextwashColumn.TYPE, "required for a new person")
            )
            return
        targets[target.key] = target

    def anonymized_row(self, row: dict[str, Any], line: int) -> None:
        parsed = parse_anonymized(self.study, row, line, self.errors, self.known)
        if parsed is None:
            return
        key = (parsed.description.pk, parsed.method)
        method = AnonymizedTextColumn.METHOD
        if key in self.taken:
            self.errors.append(
                RowError(line, method, f"the description already has a {parsed.method!r} text")
            )
        elif key in self.anonymized_lines:
            self.errors.append(RowError(line, method, f"repeats line {self.anonymized_lines[key]}"))
        self.anonymized_lines.setdefault(key, line)
        self.checked.anonymized.append(parsed)

    def description_row(self, row: dict[str, Any], line: int) -> bool:
        """Check a description row; return False when it did not parse."""
        parsed = parse_description(row, line, self.errors)
        if parsed is None:
            return False
        description, implied = parsed
        if implied is not None:
            self.add_target(implied, TextwashColumn.PERSON)
        external_id = description.external_id
        if external_id:
            id_field = first_present(row, EXTERNAL_ID_COLUMNS)
            if external_id in self.existing_ids or (
                find_description(self.study, external_id, {}) is not None
            ):
                self.errors.append(
                    RowError(line, id_field, f"{external_id!r} is already in the study")
                )
            elif external_id in self.seen_ids:
                self.errors.append(
                    RowError(
                        line, id_field, f"{external_id!r} repeats line {self.seen_ids[external_id]}"
                    )
                )
            self.seen_ids.setdefault(external_id, line)
        self.checked.descriptions.append(description)
        return True

    def target_row(self, row: dict[str, Any], line: int) -> None:
        target = parse_target(row, line, self.errors)
        if target is not None:
            field_name = TargetColumn.KEY if row.get(TargetColumn.KEY) else TargetColumn.NAME
            self.add_target(target, field_name)

    def check_description_targets(self) -> None:
        """Every description's target is in the file or already in the study."""
        for description in self.checked.descriptions:
            key = description.target_key
            if key not in self.checked.targets and key not in self.existing_targets:
                self.errors.append(
                    RowError(
                        description.line, "target", f"no target {key!r} in the file or the study"
                    )
                )


def _refuse_unimported(row: dict[str, Any], line: int) -> None:
    """Refuse a judgments or participants export: they record what happened on the platform."""
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


def validate_rows(study: Study, rows: Rows) -> CheckedRows:
    """Return the targets to create or reuse, the descriptions and the anonymized texts;
    raise on any error."""
    checker = _RowChecker(study)
    for line, row in rows:
        _refuse_unimported(row, line)
        if any(name in row for name in ANONYMIZED_MARKERS):
            checker.anonymized_row(row, line)
        elif any(row.get(name) is not None for name in TEXT_COLUMNS):
            if not checker.description_row(row, line):
                continue
        else:
            checker.target_row(row, line)
        if len(checker.errors) >= MAX_ERRORS:
            break
    checker.check_description_targets()
    if checker.errors:
        raise ImportValidationError(checker.errors)
    return checker.checked


def import_study_data(*, study: Study, content: bytes | str, fmt: str) -> ImportTally:
    """Validate a whole CSV/JSONL file, then write its targets and descriptions.

    Rows are written in batches of WRITE_BATCH_ROWS, one transaction each, so a long import
    never blocks the study's participants. Everything was validated before the first write;
    should a write still fail, what this import wrote is deleted again before the error is
    raised, so an import lands whole or not at all.
    """
    rows = parse_rows(content, fmt)
    with transaction.atomic():
        # One import per study at a time: the check for a running one and this import's
        # marker are one transaction under the study's row lock (BEGIN IMMEDIATE on SQLite),
        # so two uploads of one file cannot both pass the check (they did, and the second
        # wrote the same target keys: an IntegrityError, a 500).
        Study.objects.select_for_update().filter(pk=study.pk).exists()
        imports_roll_back_abandoned(study=study)
        marker = ImportBatch.objects.create(study=study, worker=worker_name())
    try:
        # Validated while holding the marker: against what every earlier import wrote.
        checked = validate_rows(study, rows)
    except BaseException:
        ImportBatch.objects.filter(pk=marker.pk).delete()
        raise
    targets, descriptions, anonymized = checked.targets, checked.descriptions, checked.anonymized
    tally = ImportTally()
    created_targets: list[int] = []
    created_descriptions: list[int] = []
    created_texts: list[int] = []

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
            stored = _write_targets(study, targets, tally, created_targets)
            commit_marker()
        for start in range(0, len(descriptions), WRITE_BATCH_ROWS):
            batch = descriptions[start : start + WRITE_BATCH_ROWS]
            with transaction.atomic():
                _write_descriptions(study, batch, stored, tally, created_descriptions)
                commit_marker()
        for start in range(0, len(anonymized), WRITE_BATCH_ROWS):
            with transaction.atomic():
                _write_anonymized(
                    anonymized[start : start + WRITE_BATCH_ROWS], tally, created_texts
                )
                commit_marker()
    except BaseException as error:
        _delete_created(created_targets, created_descriptions, created_texts)
        ImportBatch.objects.filter(pk=marker.pk).delete()
        if isinstance(error, IntegrityError):
            # A row this file holds was written meanwhile by another way in (a writer, the
            # API): what this import wrote is gone again; say so instead of a 500.
            raise ImportRunning(
                [
                    RowError(
                        0,
                        "(file)",
                        "the study changed while this file was imported; "
                        "nothing of it was kept: import it again",
                    )
                ]
            ) from error
        raise
    ImportBatch.objects.filter(pk=marker.pk).delete()
    if tally.targets_created:
        # A new person can be a better match for a guess already made.
        judgments_rescore(study=study)
    return tally


def _delete_created(targets: list[int], descriptions: list[int], texts: list[int]) -> None:
    with transaction.atomic():
        AnonymizedText.objects.filter(pk__in=texts).delete()
        AnonymizedText.objects.filter(description_id__in=descriptions).delete()
        Description.objects.filter(pk__in=descriptions).delete()
        TargetPerson.objects.filter(pk__in=targets).delete()


def imports_roll_back_abandoned(
    *, study: Study | None = None, stale_after: timedelta = timedelta(minutes=30)
) -> int:
    """Delete what crashed imports left behind (their process is gone); return how many.

    Called before every import of a study and when a worker starts. The job queue's rule
    (`jobs.worker_alive`): an import on another host counts as crashed once its marker has
    not moved for `stale_after`. An import still
    running into the same study refuses the new one.
    """
    from intruder.services.jobs import worker_alive

    markers = ImportBatch.objects.all() if study is None else study.import_batches.all()
    rolled_back = 0
    for marker in markers:
        if worker_alive(marker.worker, marker.heartbeat_at, stale_after):
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
    study: Study, targets: dict[str, ParsedTarget], tally: ImportTally, created: list[int]
) -> dict[str, TargetPerson]:
    stored: dict[str, TargetPerson] = {t.key: t for t in study.targets.all()}
    with transaction.atomic():
        for key, target in targets.items():
            if target.existing is not None:
                tally.targets_reused += 1
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
            tally.targets_created += 1
    return stored


def _write_descriptions(
    study: Study,
    batch: list[ParsedDescription],
    stored: dict[str, TargetPerson],
    tally: ImportTally,
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
    tally.descriptions_created += len(made)
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
    tally.anonymized_created += len(textwash)


def _write_anonymized(
    batch: list[ParsedAnonymized], tally: ImportTally, created: list[int]
) -> None:
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
    tally.anonymized_created += len(made)
