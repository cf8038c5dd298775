"""Export a study as pandas-friendly CSV and JSONL tables, one row per record.

Tables: judgments (one row per judgment with text id, target, group, participant PID,
scores, the answer's telemetry figures and its flags: `intruder.evidence.flags`),
descriptions (with the writer's telemetry and flags), anonymized_texts (with spans),
participants (with their attention checks passed and failed), attention_checks (one row per
check, flagged `attention_check`; never mixed with the judgments of texts), familiarity (the
debrief's question: one row per intruder and famous person asked, `simulated` for the demo's),
targets. Columns are
flat scalars except `spans`/`aliases`/`profile`, which are JSON strings in CSV and lists or
objects in JSONL. CSV cells that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`,
tab, carriage return first) get a leading `'` (`csv_safe`); JSONL is never
escaped.

targets, descriptions and anonymized_texts import back as they are
(`intruder.exchange.imports`), into the same study or another: a description's
`external_id` (or, where it has none, the `description-<id>` name the analyses use too) is
how anonymized texts find their description. Judgments and participants record what
happened on the platform and are not imported. The column names and their order live in
`intruder.exchange.columns`, which the imports read too.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from csv_safe import SafeDictWriter
from intruder.evidence.models import AttentionCheck
from intruder.evidence.selectors import answer_excluded, study_rules
from intruder.evidence.telemetry import TELEMETRY_FIELDS
from intruder.exchange.columns import (
    FORMATS,
    JSON_COLUMNS,
    SCHEMA,
    AnonymizedTextColumn,
    AttentionCheckColumn,
    DescriptionColumn,
    FamiliarityColumn,
    FlagColumn,
    JudgmentColumn,
    ParticipantColumn,
    TargetColumn,
    telemetry_column,
)
from intruder.models import (
    AnonymizedText,
    Description,
    FamiliarityAnswer,
    FamiliarityDecoyAnswer,
    FlaggedAnswer,
    Judgment,
    Participant,
    Study,
)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _writer_pid(description: Description) -> str:
    if description.writer is not None:
        return description.writer.prolific_pid
    return str(description.provenance.get(DescriptionColumn.WRITER_PID) or "")


def _flag_columns(answer: FlaggedAnswer, rules: dict[str, Any]) -> dict[str, Any]:
    """Return an answer's telemetry (one column per figure; empty = not recorded) and flags."""
    telemetry = answer.telemetry or {}
    return {
        FlagColumn.HAS_TELEMETRY: answer.telemetry is not None,
        **{telemetry_column(name): telemetry.get(name) for name in TELEMETRY_FIELDS},
        FlagColumn.FLAGS: ";".join(flag.get("code", "") for flag in answer.flags or []),
        FlagColumn.FLAG_REASONS: " | ".join(flag.get("reason", "") for flag in answer.flags or []),
        FlagColumn.FLAG_REVIEW: answer.flag_review,
        FlagColumn.FLAG_REVIEW_REASON: answer.flag_review_reason,
        FlagColumn.EXCLUDED: answer_excluded(answer, rules),
    }


def judgment_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Yield one row per judgment of the study's intruders, with telemetry and flags."""
    rules = study_rules(study)
    judgments = (
        Judgment.objects.filter(participant__study=study)
        .select_related("participant", "text__description__target", "assignment", "other_person")
        .order_by("id")
    )
    for j in judgments:
        target = j.text.description.target
        yield {
            JudgmentColumn.ID: j.pk,
            JudgmentColumn.TEXT_ID: j.text_id,
            JudgmentColumn.DESCRIPTION_ID: j.text.description_id,
            JudgmentColumn.DESCRIPTION_EXTERNAL_ID: j.text.description.reference,
            JudgmentColumn.METHOD: j.text.method,
            JudgmentColumn.TARGET_KEY: target.key,
            JudgmentColumn.TARGET_NAME: target.name,
            JudgmentColumn.GROUP: target.group,
            JudgmentColumn.PARTICIPANT_PID: j.participant.prolific_pid,
            JudgmentColumn.PARTICIPANT_GROUP: j.participant.group,
            JudgmentColumn.POSITION: j.assignment.position,
            JudgmentColumn.SELF_IDENTIFIED: j.self_identified,
            JudgmentColumn.GUESSED_NAME: j.guessed_name,
            JudgmentColumn.REVEALING_TEXT: j.revealing_text,
            JudgmentColumn.OTHER_KNOWLEDGE: j.other_knowledge,
            JudgmentColumn.TIME_SPENT_MS: j.time_spent_ms,
            JudgmentColumn.COSINE: j.cosine,
            JudgmentColumn.IDENTIFIED: j.identified,
            JudgmentColumn.MATCHED_ALIAS: j.matched_alias,
            JudgmentColumn.TOKEN_SET_RATIO: j.token_set_ratio,
            JudgmentColumn.SURNAME_MATCH: j.surname_match,
            JudgmentColumn.NAMED_OTHER: j.named_other,
            JudgmentColumn.OTHER_PERSON_KEY: j.other_person.key if j.other_person else "",
            JudgmentColumn.OTHER_COSINE: j.other_cosine,
            JudgmentColumn.CREATED_AT: _iso(j.created_at),
            **_flag_columns(j, rules),
        }


def description_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Yield one row per description with its target, writer, telemetry and flags."""
    rules = study_rules(study)
    for d in study.descriptions.select_related("target", "writer").order_by("id"):
        yield {
            DescriptionColumn.ID: d.pk,
            DescriptionColumn.EXTERNAL_ID: d.reference,
            DescriptionColumn.TARGET_KEY: d.target.key,
            DescriptionColumn.TARGET_NAME: d.target.name,
            DescriptionColumn.GROUP: d.target.group,
            DescriptionColumn.WRITER_PID: _writer_pid(d),
            DescriptionColumn.SOURCE_STUDY: d.provenance.get(DescriptionColumn.SOURCE_STUDY, ""),
            DescriptionColumn.SOURCE_DESCRIPTION_ID: d.provenance.get(
                DescriptionColumn.SOURCE_DESCRIPTION_ID
            ),
            DescriptionColumn.TEXT: d.text,
            DescriptionColumn.CHARS: len(d.text),
            DescriptionColumn.CREATED_AT: _iso(d.created_at),
            **_flag_columns(d, rules),
        }


def anonymized_text_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Yield one row per anonymized text with its spans and review status."""
    texts = (
        AnonymizedText.objects.filter(description__study=study)
        .select_related("description__target")
        .order_by("id")
    )
    for t in texts:
        yield {
            AnonymizedTextColumn.ID: t.pk,
            AnonymizedTextColumn.DESCRIPTION_ID: t.description_id,
            AnonymizedTextColumn.DESCRIPTION_EXTERNAL_ID: t.description.reference,
            AnonymizedTextColumn.TARGET_KEY: t.description.target.key,
            AnonymizedTextColumn.GROUP: t.description.target.group,
            AnonymizedTextColumn.METHOD: t.method,
            AnonymizedTextColumn.MODEL_VERSION: t.model_version,
            AnonymizedTextColumn.STATUS: t.status,
            AnonymizedTextColumn.REVIEWED_AT: _iso(t.reviewed_at),
            AnonymizedTextColumn.REVISION: t.revision,
            AnonymizedTextColumn.TEXT: t.text,
            AnonymizedTextColumn.SPANS: t.spans,
            AnonymizedTextColumn.N_SPANS: len(t.spans),
            AnonymizedTextColumn.UPDATED_AT: _iso(t.updated_at),
        }


def participant_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Yield one row per participant (no session token: it is a credential)."""
    for p in Participant.objects.filter(study=study).order_by("id"):
        checks = p.attention_checks
        yield {
            ParticipantColumn.ID: p.pk,
            ParticipantColumn.PROLIFIC_PID: p.prolific_pid,
            ParticipantColumn.PROLIFIC_STUDY_ID: p.prolific_study_id,
            ParticipantColumn.PROLIFIC_SESSION_ID: p.prolific_session_id,
            ParticipantColumn.STATUS: p.status,
            ParticipantColumn.GROUP: p.group,
            ParticipantColumn.STARTED_AT: _iso(p.started_at),
            ParticipantColumn.CONSENTED_AT: _iso(p.consented_at),
            ParticipantColumn.COMPLETED_AT: _iso(p.completed_at),
            ParticipantColumn.N_DESCRIPTIONS: Description.objects.filter(writer=p).count(),
            ParticipantColumn.N_JUDGMENTS: p.judgments.count(),
            ParticipantColumn.ATTENTION_CHECKS_PASSED: checks.filter(passed=True).count(),
            ParticipantColumn.ATTENTION_CHECKS_FAILED: checks.filter(passed=False).count(),
        }


def attention_check_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Yield one row per attention check served or planned (never a text: no text columns)."""
    checks = (
        AttentionCheck.objects.filter(participant__study=study)
        .select_related("participant")
        .order_by("participant_id", "after_texts")
    )
    for c in checks:
        yield {
            AttentionCheckColumn.ATTENTION_CHECK: True,
            AttentionCheckColumn.ID: c.pk,
            AttentionCheckColumn.PARTICIPANT_PID: c.participant.prolific_pid,
            AttentionCheckColumn.AFTER_TEXTS: c.after_texts,
            AttentionCheckColumn.PROMPT: c.prompt,
            AttentionCheckColumn.EXPECTED: c.expected,
            AttentionCheckColumn.ANSWER: c.answer,
            AttentionCheckColumn.PASSED: c.passed,
            AttentionCheckColumn.SHOWN_AT: _iso(c.shown_at),
            AttentionCheckColumn.ANSWERED_AT: _iso(c.answered_at),
        }


def familiarity_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Yield one row per familiarity answer (had the intruder heard of the name before).

    Study persons first, then the decoys each intruder was asked about beside them.
    """
    answers = (
        FamiliarityAnswer.objects.filter(participant__study=study)
        .select_related("participant", "target")
        .order_by("participant_id", "target__key")
    )
    for a in answers:
        yield {
            FamiliarityColumn.PARTICIPANT_PID: a.participant.prolific_pid,
            FamiliarityColumn.TARGET_KEY: a.target.key,
            FamiliarityColumn.TARGET_NAME: a.target.name,
            FamiliarityColumn.DECOY: False,
            FamiliarityColumn.HEARD_OF: a.heard_of,
            FamiliarityColumn.SIMULATED: a.simulated,
            FamiliarityColumn.ANSWERED_AT: _iso(a.created_at),
        }
    decoys = (
        FamiliarityDecoyAnswer.objects.filter(participant__study=study)
        .select_related("participant")
        .order_by("participant_id", "name")
    )
    for d in decoys:
        yield {
            FamiliarityColumn.PARTICIPANT_PID: d.participant.prolific_pid,
            FamiliarityColumn.TARGET_KEY: "",
            FamiliarityColumn.TARGET_NAME: d.name,
            FamiliarityColumn.DECOY: True,
            FamiliarityColumn.HEARD_OF: d.heard_of,
            FamiliarityColumn.SIMULATED: d.simulated,
            FamiliarityColumn.ANSWERED_AT: _iso(d.created_at),
        }


def target_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Yield one row per target person."""
    for t in study.targets.order_by("group", "key"):
        yield {
            TargetColumn.ID: t.pk,
            TargetColumn.KEY: t.key,
            TargetColumn.NAME: t.name,
            TargetColumn.GROUP: t.group,
            TargetColumn.ALIASES: t.aliases,
            TargetColumn.WIKIPEDIA_URL: t.wikipedia_url,
            TargetColumn.PROFILE: t.profile,
        }


# Each table's columns in order, from the one schema (`intruder.exchange.columns`).
COLUMNS: dict[str, list[str]] = {name: list(table.columns) for name, table in SCHEMA.items()}


TABLES: dict[str, Callable[[Study], Iterator[dict[str, Any]]]] = {
    "judgments": judgment_rows,
    "descriptions": description_rows,
    "anonymized_texts": anonymized_text_rows,
    "participants": participant_rows,
    "attention_checks": attention_check_rows,
    "familiarity": familiarity_rows,
    "targets": target_rows,
}


def _csv_value(column: str, value: Any) -> Any:
    """Return a cell as written to CSV: JSON for nested columns, formulas neutralised."""
    if column in JSON_COLUMNS:
        value = json.dumps(value, ensure_ascii=False)
    return "" if value is None else value


def render_table(study: Study, table: str, fmt: str) -> str:
    """Return one table of the study as CSV (header always present) or JSONL text."""
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; choose from {sorted(TABLES)}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose csv or jsonl")
    rows = TABLES[table](study)
    out = io.StringIO()
    if fmt == "jsonl":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        return out.getvalue()
    columns = COLUMNS[table]
    # RFC 4180 line ends: the csv module quotes a cell only for the characters of its line
    # terminator, and with "\n" a bare "\r" in an answer went out unquoted and split the row.
    writer = SafeDictWriter(out, fieldnames=columns, lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: _csv_value(c, row[c]) for c in columns})
    return out.getvalue()


def export_study(study: Study, out_dir: Path, formats: tuple[str, ...] = FORMATS) -> list[Path]:
    """Write every table of the study in every format to `out_dir`; return the files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for table in TABLES:
        for fmt in formats:
            path = out_dir / f"{study.slug}_{table}.{fmt}"
            path.write_text(render_table(study, table, fmt), encoding="utf-8")
            written.append(path)
    return written
