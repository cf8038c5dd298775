"""Export a study as pandas-friendly CSV and JSONL tables, one row per record.

Tables: judgments (one row per judgment with text id, target, group, participant PID,
scores, the answer's telemetry figures and its flags: `intruder.services.flags`),
descriptions (with the writer's telemetry and flags), anonymized_texts (with spans),
participants (with their attention checks passed and failed), attention_checks (one row per
check, flagged `attention_check`; never mixed with the judgments of texts), targets. Columns are
flat scalars except `spans`/`aliases`/`profile`, which are JSON strings in CSV and lists or
objects in JSONL. CSV cells that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`,
tab, carriage return first) get a leading `'` (`csv_safe`); JSONL is never
escaped.

targets, descriptions and anonymized_texts import back as they are
(`intruder.services.imports`), into the same study or another: a description's
`external_id` (or, where it has none, the `description-<id>` name the analyses use too) is
how anonymized texts find their description. Judgments and participants record what
happened on the platform and are not imported.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from csv_safe import SafeDictWriter
from intruder.models import (
    AnonymizedText,
    AttentionCheck,
    Description,
    FlaggedAnswer,
    Judgment,
    Participant,
    Study,
)
from intruder.services.flags import answer_excluded, study_rules
from intruder.services.telemetry import TELEMETRY_FIELDS

FORMATS = ("csv", "jsonl")
JSON_COLUMNS = frozenset({"spans", "aliases", "profile"})


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _writer_pid(description: Description) -> str:
    if description.writer is not None:
        return description.writer.prolific_pid
    return str(description.provenance.get("writer_pid") or "")


def _flag_columns(answer: FlaggedAnswer, rules: dict[str, Any]) -> dict[str, Any]:
    """Return an answer's telemetry (one column per figure; empty = not recorded) and flags."""
    telemetry = answer.telemetry or {}
    return {
        "has_telemetry": answer.telemetry is not None,
        **{f"telemetry_{name}": telemetry.get(name) for name in TELEMETRY_FIELDS},
        "flags": ";".join(flag.get("code", "") for flag in answer.flags or []),
        "flag_reasons": " | ".join(flag.get("reason", "") for flag in answer.flags or []),
        "flag_review": answer.flag_review,
        "flag_review_reason": answer.flag_review_reason,
        "excluded": answer_excluded(answer, rules),
    }


FLAG_COLUMNS = [
    "has_telemetry",
    *(f"telemetry_{name}" for name in TELEMETRY_FIELDS),
    "flags",
    "flag_reasons",
    "flag_review",
    "flag_review_reason",
    "excluded",
]


def judgment_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Yield one row per judgment of the study's intruders, with telemetry and flags."""
    rules = study_rules(study)
    judgments = (
        Judgment.objects.filter(participant__study=study)
        .select_related("participant", "text__description__target", "assignment")
        .order_by("id")
    )
    for j in judgments:
        target = j.text.description.target
        yield {
            "judgment_id": j.pk,
            "text_id": j.text_id,
            "description_id": j.text.description_id,
            "description_external_id": j.text.description.reference,
            "method": j.text.method,
            "target_key": target.key,
            "target_name": target.name,
            "group": target.group,
            "participant_pid": j.participant.prolific_pid,
            "participant_group": j.participant.group,
            "position": j.assignment.position,
            "self_identified": j.self_identified,
            "guessed_name": j.guessed_name,
            "revealing_text": j.revealing_text,
            "other_knowledge": j.other_knowledge,
            "time_spent_ms": j.time_spent_ms,
            "cosine": j.cosine,
            "identified": j.identified,
            "matched_alias": j.matched_alias,
            "token_set_ratio": j.token_set_ratio,
            "surname_match": j.surname_match,
            "created_at": _iso(j.created_at),
            **_flag_columns(j, rules),
        }


def description_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Yield one row per description with its target, writer, telemetry and flags."""
    rules = study_rules(study)
    for d in study.descriptions.select_related("target", "writer").order_by("id"):
        yield {
            "description_id": d.pk,
            "external_id": d.reference,
            "target_key": d.target.key,
            "target_name": d.target.name,
            "group": d.target.group,
            "writer_pid": _writer_pid(d),
            "source_study": d.provenance.get("source_study", ""),
            "source_description_id": d.provenance.get("source_description_id"),
            "text": d.text,
            "chars": len(d.text),
            "created_at": _iso(d.created_at),
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
            "text_id": t.pk,
            "description_id": t.description_id,
            "description_external_id": t.description.reference,
            "target_key": t.description.target.key,
            "group": t.description.target.group,
            "method": t.method,
            "model_version": t.model_version,
            "status": t.status,
            "reviewed_at": _iso(t.reviewed_at),
            "revision": t.revision,
            "text": t.text,
            "spans": t.spans,
            "n_spans": len(t.spans),
            "updated_at": _iso(t.updated_at),
        }


def participant_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Yield one row per participant (no session token: it is a credential)."""
    for p in Participant.objects.filter(study=study).order_by("id"):
        yield {
            "participant_id": p.pk,
            "prolific_pid": p.prolific_pid,
            "prolific_study_id": p.prolific_study_id,
            "prolific_session_id": p.prolific_session_id,
            "status": p.status,
            "group": p.group,
            "started_at": _iso(p.started_at),
            "consented_at": _iso(p.consented_at),
            "completed_at": _iso(p.completed_at),
            "n_descriptions": Description.objects.filter(writer=p).count(),
            "n_judgments": p.judgments.count(),
            "attention_checks_passed": p.attention_checks.filter(passed=True).count(),
            "attention_checks_failed": p.attention_checks.filter(passed=False).count(),
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
            "attention_check": True,
            "check_id": c.pk,
            "participant_pid": c.participant.prolific_pid,
            "after_texts": c.after_texts,
            "prompt": c.prompt,
            "expected": c.expected,
            "answer": c.answer,
            "passed": c.passed,
            "shown_at": _iso(c.shown_at),
            "answered_at": _iso(c.answered_at),
        }


def target_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Yield one row per target person."""
    for t in study.targets.order_by("group", "key"):
        yield {
            "target_id": t.pk,
            "key": t.key,
            "name": t.name,
            "group": t.group,
            "aliases": t.aliases,
            "wikipedia_url": t.wikipedia_url,
            "profile": t.profile,
        }


COLUMNS: dict[str, list[str]] = {
    "judgments": [
        "judgment_id", "text_id", "description_id", "description_external_id",
        "method", "target_key", "target_name", "group", "participant_pid",
        "participant_group", "position", "self_identified", "guessed_name",
        "revealing_text", "other_knowledge", "time_spent_ms", "cosine", "identified",
        "matched_alias", "token_set_ratio", "surname_match", "created_at", *FLAG_COLUMNS,
    ],
    "descriptions": [
        "description_id", "external_id", "target_key", "target_name", "group",
        "writer_pid", "source_study", "source_description_id", "text", "chars", "created_at",
        *FLAG_COLUMNS,
    ],
    "anonymized_texts": [
        "text_id", "description_id", "description_external_id", "target_key", "group",
        "method", "model_version", "status", "reviewed_at", "revision", "text", "spans",
        "n_spans", "updated_at",
    ],
    "participants": [
        "participant_id", "prolific_pid", "prolific_study_id", "prolific_session_id",
        "status", "group", "started_at", "consented_at", "completed_at",
        "n_descriptions", "n_judgments", "attention_checks_passed", "attention_checks_failed",
    ],
    "attention_checks": [
        "attention_check", "check_id", "participant_pid", "after_texts", "prompt", "expected",
        "answer", "passed", "shown_at", "answered_at",
    ],
    "targets": ["target_id", "key", "name", "group", "aliases", "wikipedia_url", "profile"],
}  # fmt: skip


TABLES: dict[str, Callable[[Study], Iterator[dict[str, Any]]]] = {
    "judgments": judgment_rows,
    "descriptions": description_rows,
    "anonymized_texts": anonymized_text_rows,
    "participants": participant_rows,
    "attention_checks": attention_check_rows,
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
