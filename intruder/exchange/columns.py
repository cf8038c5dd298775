"""The column schema of every table a study exports, and of what an import reads back.

One home for each column's spelling: the exports write these names (CSV header, JSONL
keys), the imports read them, and `SCHEMA` says each table's order and which tables import
back. A `StrEnum` member is the string itself, so a member is a dict key, a CSV header and
the field an import error names, all at once. Textwash study files bring a few names of
their own (`TextwashColumn`), read as aliases of ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from intruder.evidence.telemetry import TELEMETRY_FIELDS

# The file formats every table is exported in and imported from.
FORMATS = ("csv", "jsonl")


class TargetColumn(StrEnum):
    ID = "target_id"
    KEY = "key"
    NAME = "name"
    GROUP = "group"
    ALIASES = "aliases"
    WIKIPEDIA_URL = "wikipedia_url"
    PROFILE = "profile"


class DescriptionColumn(StrEnum):
    ID = "description_id"
    EXTERNAL_ID = "external_id"
    TARGET_KEY = "target_key"
    TARGET_NAME = "target_name"
    GROUP = "group"
    WRITER_PID = "writer_pid"
    SOURCE_STUDY = "source_study"
    SOURCE_DESCRIPTION_ID = "source_description_id"
    TEXT = "text"
    CHARS = "chars"
    CREATED_AT = "created_at"


class AnonymizedTextColumn(StrEnum):
    ID = "text_id"
    DESCRIPTION_ID = "description_id"
    DESCRIPTION_EXTERNAL_ID = "description_external_id"
    TARGET_KEY = "target_key"
    GROUP = "group"
    METHOD = "method"
    MODEL_VERSION = "model_version"
    STATUS = "status"
    REVIEWED_AT = "reviewed_at"
    REVISION = "revision"
    TEXT = "text"
    SPANS = "spans"
    N_SPANS = "n_spans"
    UPDATED_AT = "updated_at"


class JudgmentColumn(StrEnum):
    ID = "judgment_id"
    TEXT_ID = "text_id"
    DESCRIPTION_ID = "description_id"
    DESCRIPTION_EXTERNAL_ID = "description_external_id"
    METHOD = "method"
    TARGET_KEY = "target_key"
    TARGET_NAME = "target_name"
    GROUP = "group"
    PARTICIPANT_PID = "participant_pid"
    PARTICIPANT_GROUP = "participant_group"
    POSITION = "position"
    SELF_IDENTIFIED = "self_identified"
    GUESSED_NAME = "guessed_name"
    REVEALING_TEXT = "revealing_text"
    OTHER_KNOWLEDGE = "other_knowledge"
    TIME_SPENT_MS = "time_spent_ms"
    COSINE = "cosine"
    IDENTIFIED = "identified"
    MATCHED_ALIAS = "matched_alias"
    TOKEN_SET_RATIO = "token_set_ratio"
    SURNAME_MATCH = "surname_match"
    NAMED_OTHER = "named_other"
    OTHER_PERSON_KEY = "other_person_key"
    OTHER_COSINE = "other_cosine"
    CREATED_AT = "created_at"


class ParticipantColumn(StrEnum):
    ID = "participant_id"
    PROLIFIC_PID = "prolific_pid"
    PROLIFIC_STUDY_ID = "prolific_study_id"
    PROLIFIC_SESSION_ID = "prolific_session_id"
    STATUS = "status"
    GROUP = "group"
    STARTED_AT = "started_at"
    CONSENTED_AT = "consented_at"
    COMPLETED_AT = "completed_at"
    N_DESCRIPTIONS = "n_descriptions"
    N_JUDGMENTS = "n_judgments"
    ATTENTION_CHECKS_PASSED = "attention_checks_passed"
    ATTENTION_CHECKS_FAILED = "attention_checks_failed"


class AttentionCheckColumn(StrEnum):
    ATTENTION_CHECK = "attention_check"
    ID = "check_id"
    PARTICIPANT_PID = "participant_pid"
    AFTER_TEXTS = "after_texts"
    PROMPT = "prompt"
    EXPECTED = "expected"
    ANSWER = "answer"
    PASSED = "passed"
    SHOWN_AT = "shown_at"
    ANSWERED_AT = "answered_at"


class FamiliarityColumn(StrEnum):
    """The debrief's familiarity question: one row per intruder and name asked about.

    A decoy (a public figure outside the study, `decoy` true) has no target key.
    """

    PARTICIPANT_PID = "participant_pid"
    TARGET_KEY = "target_key"
    TARGET_NAME = "target_name"
    DECOY = "decoy"
    HEARD_OF = "heard_of"
    SIMULATED = "simulated"
    ANSWERED_AT = "answered_at"


class FlagColumn(StrEnum):
    """An answer's flags (after its telemetry columns), on judgments and descriptions."""

    HAS_TELEMETRY = "has_telemetry"
    FLAGS = "flags"
    FLAG_REASONS = "flag_reasons"
    FLAG_REVIEW = "flag_review"
    FLAG_REVIEW_REASON = "flag_review_reason"
    EXCLUDED = "excluded"


def telemetry_column(name: str) -> str:
    """Return the column of one telemetry figure (`intruder.evidence.telemetry`)."""
    return f"telemetry_{name}"


FLAG_COLUMNS: tuple[str, ...] = (
    FlagColumn.HAS_TELEMETRY,
    *(telemetry_column(name) for name in TELEMETRY_FIELDS),
    FlagColumn.FLAGS,
    FlagColumn.FLAG_REASONS,
    FlagColumn.FLAG_REVIEW,
    FlagColumn.FLAG_REVIEW_REASON,
    FlagColumn.EXCLUDED,
)


class TextwashColumn(StrEnum):
    """Columns of the Textwash study files (`textwash_study/*.jsonl`) that imports accept."""

    ID = "id"
    ORIGINAL = "original"
    TEXTWASH = "textwash"
    PERSON = "person"
    TYPE = "type"


# What an import reads under more than one name, the preferred name first.
GROUP_COLUMNS = (TargetColumn.GROUP, TextwashColumn.TYPE)
TEXT_COLUMNS = (DescriptionColumn.TEXT, TextwashColumn.ORIGINAL)
EXTERNAL_ID_COLUMNS = (TextwashColumn.ID, DescriptionColumn.EXTERNAL_ID)
TARGET_KEY_COLUMNS = ("target", DescriptionColumn.TARGET_KEY)
DESCRIPTION_REFERENCE_COLUMNS = (AnonymizedTextColumn.DESCRIPTION_EXTERNAL_ID, "description")
PROVENANCE_COLUMNS = (
    DescriptionColumn.WRITER_PID,
    DescriptionColumn.SOURCE_STUDY,
    DescriptionColumn.SOURCE_DESCRIPTION_ID,
)
# A row with one of these is an anonymized text (a description row has neither).
ANONYMIZED_MARKERS = (AnonymizedTextColumn.METHOD, AnonymizedTextColumn.SPANS)
# Nested values: JSON strings in CSV, lists or objects in JSONL.
JSON_COLUMNS = frozenset({AnonymizedTextColumn.SPANS, TargetColumn.ALIASES, TargetColumn.PROFILE})


@dataclass(frozen=True)
class Table:
    """One exported table: its columns in order, and whether an import reads it back."""

    name: str
    columns: tuple[str, ...]
    imported: bool


SCHEMA: dict[str, Table] = {
    table.name: table
    for table in (
        Table("judgments", (*JudgmentColumn, *FLAG_COLUMNS), imported=False),
        Table("descriptions", (*DescriptionColumn, *FLAG_COLUMNS), imported=True),
        Table("anonymized_texts", tuple(AnonymizedTextColumn), imported=True),
        Table("participants", tuple(ParticipantColumn), imported=False),
        Table("attention_checks", tuple(AttentionCheckColumn), imported=False),
        Table("familiarity", tuple(FamiliarityColumn), imported=False),
        Table("targets", tuple(TargetColumn), imported=True),
    )
}

# Columns that only the tables not imported have: a file with one is refused, by table.
NOT_IMPORTED = {JudgmentColumn.ID: "judgments", ParticipantColumn.ID: "participants"}
