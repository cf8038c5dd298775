"""Data model of crowd studies: targets, descriptions, anonymized texts, participants, judgments.

The core's tables. A package's tables (risk's runs, Prolific's, the computed reports', answer
evidence's, the LLM intruder's) live in its own `models.py`, which the app config imports so
that Django registers them (same app label and tables); code imports them from there.

Invariants that must hold under concurrency (no over-assignment, one judgment per assignment,
one enrolment per Prolific PID) are database constraints, not only Python checks.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.db.models.fields.json import KT

from intruder.bounds import (
    ATTENTION_CHECKS,
    CATCH_TRIALS,
    IDENTIFICATION_THRESHOLD,
    ITEMS_PER_PARTICIPANT,
    JUDGMENTS_PER_TEXT,
    MIN_DESCRIPTION_CHARS,
    TIME_LIMIT_MINUTES,
)
from intruder.identification import DEFAULT_RULE, RULE_CHOICES
from model_runtime.guess_scoring import BEST_MATCH, BEST_MATCH_SURNAME, PAPER

# Sane ranges of a study's settings (`intruder.bounds`), enforced by the form, the API (both
# read them) and the database (check constraints). Without them a time limit of 10^14
# minutes overflows every date computation of the expiry sweep, and a huge
# judgments_per_text makes each text claim build a set of that many slot numbers.
MAX_ITEMS_PER_PARTICIPANT = ITEMS_PER_PARTICIPANT.high
MAX_JUDGMENTS_PER_TEXT = JUDGMENTS_PER_TEXT.high
MAX_DESCRIPTION_CHARS = MIN_DESCRIPTION_CHARS.high  # also the longest description taken
MAX_TIME_LIMIT_MINUTES = TIME_LIMIT_MINUTES.high
# Attention checks per intruder: a few are enough (each costs the participant time).
MAX_ATTENTION_CHECKS = ATTENTION_CHECKS.high

# Prolific IDs are 24 hex characters; accept any short token-like string so that pilots and
# other panels work, but nothing that could smuggle markup or whitespace into pages and logs.
PROLIFIC_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


# The telemetry signals a study can switch off (issue 20; `intruder.evidence.telemetry`).
TELEMETRY_SIGNALS = ("timing", "keystrokes", "paste", "copy", "focus")


def all_telemetry_signals() -> list[str]:
    """Return every telemetry signal: the default of a new study."""
    return list(TELEMETRY_SIGNALS)


def validate_telemetry_signals(value: object) -> None:
    """Refuse anything but a list of known telemetry signal names."""
    from django.core.exceptions import ValidationError

    if not isinstance(value, list) or not all(
        isinstance(item, str) and item in TELEMETRY_SIGNALS for item in value
    ):
        raise ValidationError(f"A list of signals among: {', '.join(TELEMETRY_SIGNALS)}.")


def new_participant_token() -> str:
    """Return an unguessable participant session token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def new_completion_code() -> str:
    """Return a fresh Prolific-style completion code."""
    return secrets.token_hex(4).upper()


class PersonGroup(models.TextChoices):
    FAMOUS = "famous", "Famous"
    SEMIFAMOUS = "semifamous", "Semi-famous"
    FICTITIOUS = "fictitious", "Fictitious"


class Study(models.Model):
    """A description-collection or motivated-intruder study run on a crowd platform."""

    class Kind(models.TextChoices):
        COLLECTION = "collection", "Description collection"
        INTRUDER = "intruder", "Motivated-intruder test"

    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200, help_text="Internal name, seen by researchers only.")
    public_title = models.CharField(
        max_length=200, blank=True, help_text="Shown to participants; empty = the title."
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_studies"
    )
    items_per_participant = models.PositiveSmallIntegerField(
        default=ITEMS_PER_PARTICIPANT.default, validators=ITEMS_PER_PARTICIPANT.validators()
    )
    judgments_per_text = models.PositiveSmallIntegerField(
        default=JUDGMENTS_PER_TEXT.default, validators=JUDGMENTS_PER_TEXT.validators()
    )
    min_description_chars = models.PositiveIntegerField(
        default=MIN_DESCRIPTION_CHARS.default, validators=MIN_DESCRIPTION_CHARS.validators()
    )
    groups = models.JSONField(
        default=list, blank=True, help_text="Person groups shown, e.g. ['famous']; empty = all."
    )
    consent_text = models.TextField(blank=True)
    instructions_text = models.TextField(blank=True)
    debrief_text = models.TextField(blank=True)
    completion_code = models.CharField(max_length=32, default=new_completion_code)
    time_limit_minutes = models.PositiveIntegerField(
        default=TIME_LIMIT_MINUTES.default,
        validators=TIME_LIMIT_MINUTES.validators(),
        help_text="Unfinished assignments are released after this many minutes.",
    )
    identification_threshold = models.FloatField(
        default=IDENTIFICATION_THRESHOLD.default,
        validators=IDENTIFICATION_THRESHOLD.validators(),
        help_text="Character cosine at or above which a guess counts as identified.",
    )
    identification_rule = models.CharField(
        "a guess names the person when",
        max_length=20,
        choices=[
            (
                BEST_MATCH_SURNAME,
                "The person is the guess's best match among the study's persons, and the "
                "guess holds the person's surname",
            ),
            (BEST_MATCH, "The person is the guess's best match among the study's persons"),
            (PAPER, "Its cosine to the person reaches the threshold (Textwash paper)"),
        ],
        default=BEST_MATCH_SURNAME,
        help_text="Which guesses count as identified: the best-match rules refuse a guess that "
        "is closer to another person of the study, and the surname test a famous name from "
        'outside the study whose letters resemble the person\'s ("Kate Winslet" for Kate '
        "Middleton); the paper's rule is kept for replication.",
    )
    identified_rule = models.CharField(
        "identified by humans",
        max_length=20,
        choices=RULE_CHOICES,
        default=DEFAULT_RULE,
        help_text="When a judged text counts as identified by humans: one rule for every "
        "table, plot, statistic and export of the risk report.",
    )
    # The human threat model: who the intruders are. The human rate depends on it, so the
    # risk report prints these (and says when they are empty).
    intruder_population = models.TextField(
        blank=True, help_text="Who the intruders are, e.g. UK adults on Prolific."
    )
    intruder_recruitment = models.TextField(
        blank=True, help_text="How they were recruited and screened, e.g. Prolific's filters."
    )
    intruder_familiarity = models.TextField(
        blank=True, help_text="How familiar they may be with the persons described."
    )
    # Measured familiarity (opt-in): after an intruder's last answer is locked, the debrief
    # asks which of the study's famous persons they had heard of before. Only for public
    # figures: asking about private, semi-famous or invented persons would name them to
    # people who may never have seen their names, and "heard of" means nothing for them.
    ask_familiarity = models.BooleanField(
        default=False,
        help_text="Ask intruders on the debrief which of the study's famous persons they had "
        "heard of before (after their last answer is locked).",
    )
    # The question lists only the persons an intruder judged, hidden among decoys, so a list
    # shared on a forum reveals nothing. Blank: the shipped list of public figures.
    familiarity_decoys = models.TextField(
        blank=True,
        help_text="Decoy names for the familiarity question, one per line: famous persons "
        "of the same kind as the study's, not in the study. Blank: a shipped list of "
        "well-known public figures.",
    )
    # Closed by default: a study opens only once its researcher has checked it (and written
    # the consent text, see clean()).
    is_open = models.BooleanField(default=False, help_text="Whether new participants may enrol.")
    prolific_study_id = models.CharField(
        "Prolific study ID",
        max_length=64,
        blank=True,
        validators=[RegexValidator(PROLIFIC_ID_PATTERN, "Not a Prolific study ID.")],
        help_text="Prolific's STUDY_ID of this study: entry links with another STUDY_ID are "
        "refused. Empty = any STUDY_ID (pilots only).",
    )
    source_studies = models.ManyToManyField(
        "self",
        symmetrical=False,
        blank=True,
        related_name="fed_studies",
        help_text="Intruder tests: the collection studies whose descriptions they take.",
    )
    archived_at = models.DateTimeField(
        null=True, blank=True, help_text="Archived studies are closed and listed apart."
    )
    telemetry_signals = models.JSONField(
        default=all_telemetry_signals,
        blank=True,
        validators=[validate_telemetry_signals],
        help_text="Answer telemetry recorded: timing, keystrokes, paste, copy, focus "
        "(never what is typed).",
    )
    discourage_copy = models.BooleanField(
        default=False,
        help_text="Intruder texts: remind a participant who copies the text to answer on "
        "their own (copying is logged either way).",
    )
    allow_same_target = models.BooleanField(
        default=False,
        help_text="Intruder tests: let one intruder judge several texts about the same "
        "person (their judgments are then not independent).",
    )
    attention_checks = models.PositiveSmallIntegerField(
        default=ATTENTION_CHECKS.default,
        validators=ATTENTION_CHECKS.validators(),
        help_text="Intruder tests: instructed-response items placed among each intruder's "
        "texts (0 = none); scored apart, never counted as texts.",
    )
    catch_trials_per_participant = models.PositiveSmallIntegerField(
        default=CATCH_TRIALS.default,
        validators=CATCH_TRIALS.validators(),
        help_text="Intruder tests: the study's catch trials (made-up persons) each intruder "
        "is shown among their texts, at random places; never counted in the rates.",
    )
    attention_check_prompt = models.TextField(
        blank=True,
        max_length=1000,
        help_text="The check's instruction; empty = the built-in ones "
        "(`intruder.evidence.attention`).",
    )
    attention_check_answer = models.CharField(
        max_length=100,
        blank=True,
        help_text="The answer the instruction asks for (needed with a written instruction).",
    )
    exclusion_rules = models.JSONField(
        default=dict,
        blank=True,
        help_text="Which flags exclude an answer and the flags' thresholds, fixed before "
        "launch (`intruder.evidence.flags`).",
    )
    exclusion_rules_set_at = models.DateTimeField(
        null=True, blank=True, help_text="When the exclusion rules were recorded."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(
                condition=Q(judgments_per_text__gte=JUDGMENTS_PER_TEXT.low)
                & Q(judgments_per_text__lte=JUDGMENTS_PER_TEXT.high),
                name="study_judgments_per_text_range",
            ),
            models.CheckConstraint(
                condition=Q(items_per_participant__gte=ITEMS_PER_PARTICIPANT.low)
                & Q(items_per_participant__lte=ITEMS_PER_PARTICIPANT.high),
                name="study_items_range",
            ),
            models.CheckConstraint(
                condition=Q(time_limit_minutes__gte=TIME_LIMIT_MINUTES.low)
                & Q(time_limit_minutes__lte=TIME_LIMIT_MINUTES.high),
                name="study_time_limit_range",
            ),
            models.CheckConstraint(
                condition=Q(min_description_chars__lte=MIN_DESCRIPTION_CHARS.high),
                name="study_min_description_chars_range",
            ),
            models.CheckConstraint(
                condition=Q(identification_threshold__gte=IDENTIFICATION_THRESHOLD.low)
                & Q(identification_threshold__lte=IDENTIFICATION_THRESHOLD.high),
                name="study_threshold_unit_interval",
            ),
            # One owner per Prolific study: every Prolific action and webhook resolves to
            # exactly one study (docs/decisions/prolific.md).
            models.UniqueConstraint(
                fields=["prolific_study_id"],
                condition=~Q(prolific_study_id=""),
                name="study_one_per_prolific_study",
                violation_error_message="Another study already has this Prolific study ID.",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def clean(self) -> None:
        """Refuse an open study without a consent text: participants must see what they agree to."""
        super().clean()
        if self.is_open and not (self.consent_text or "").strip():
            raise ValidationError(
                {
                    "consent_text": "Write the consent text before opening the study: "
                    "participants must see what they agree to."
                }
            )

        if self.ask_familiarity and self.groups and PersonGroup.FAMOUS not in self.groups:
            raise ValidationError(
                {
                    "ask_familiarity": "The familiarity question is asked about famous persons "
                    "only: tick the famous group, or leave the question off."
                }
            )

        prompt = (self.attention_check_prompt or "").strip()
        expected = (self.attention_check_answer or "").strip()
        if bool(prompt) != bool(expected):
            field = "attention_check_answer" if prompt else "attention_check_prompt"
            raise ValidationError(
                {
                    field: "Write both the check's instruction and the answer it asks for, or "
                    "neither (the built-in checks are then used)."
                }
            )

    @property
    def participant_title(self) -> str:
        """Return the title participants see (never the internal one when a public one is set)."""
        return self.public_title or self.title


class StudyMember(models.Model):
    """A researcher's role on a study (owners are implicit members with every right)."""

    class Role(models.TextChoices):
        EDITOR = "editor", "Editor"
        VIEWER = "viewer", "Viewer"
        ANNOTATOR = "annotator", "PSI annotator"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="study_memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "user"], name="member_unique_per_study")
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) on {self.study}"


class TargetPerson(models.Model):
    """A person that writers describe and intruders try to name."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="targets")
    key = models.CharField(
        max_length=100, help_text="Stable identifier within the study, e.g. 'fictitious_4'."
    )
    name = models.CharField(max_length=200)
    aliases = models.JSONField(default=list, blank=True)
    group = models.CharField(max_length=20, choices=PersonGroup.choices)
    wikipedia_url = models.URLField(blank=True)
    profile = models.JSONField(
        default=dict,
        blank=True,
        help_text="Fictitious persons: full_name, relationship_status, job, age, country.",
    )
    catch = models.BooleanField(
        default=False,
        help_text="A catch trial: a made-up person nobody can know; its texts are served but "
        "never counted in the rates, and naming it is flagged.",
    )

    class Meta:
        ordering = ["group", "key"]
        constraints = [
            models.UniqueConstraint(fields=["study", "key"], name="target_key_unique_per_study")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.group})"


class Participant(models.Model):
    """A crowd worker enrolled in one study (writer or intruder, by the study's kind)."""

    class Status(models.TextChoices):
        STARTED = "started", "Started"
        COMPLETED = "completed", "Completed"
        RETURNED = "returned", "Returned"
        TIMED_OUT = "timed_out", "Timed out"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    prolific_pid = models.CharField(max_length=64)
    prolific_study_id = models.CharField(max_length=64, blank=True)
    prolific_session_id = models.CharField(max_length=64, blank=True)
    token = models.CharField(max_length=64, unique=True, default=new_participant_token)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.STARTED)
    group = models.CharField(
        max_length=20, choices=PersonGroup.choices, blank=True, help_text="Intruders: group shown."
    )
    simulated = models.BooleanField(
        default=False, help_text="Invented by the demo, not a person: labelled wherever shown."
    )
    consented_at = models.DateTimeField(null=True, blank=True)
    instructions_seen_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    catch_named = models.PositiveSmallIntegerField(
        default=0,
        help_text="Intruders: catch trials (made-up persons) they named someone for; the "
        "catch flag's count, kept here so that an answer needs no look at the others.",
    )
    form_state = models.JSONField(
        default=dict,
        blank=True,
        help_text="The last rejected answer (what was typed and the errors), shown again after "
        "the redirect; cleared when an answer is accepted.",
    )

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "prolific_pid"], name="participant_pid_unique_per_study"
            )
        ]
        # Enrolment looks a new PID up across studies (linked-study refusal).
        indexes = [models.Index(fields=["prolific_pid"], name="participant_pid")]

    def __str__(self) -> str:
        return f"{self.prolific_pid} in {self.study}"


class FlaggedAnswer(models.Model):
    """A participant's answer with its telemetry, its flags and the researcher's review.

    `telemetry` is None where the browser sent none or a malformed one ("no telemetry");
    `flags` is [{code, reason}] (`intruder.evidence.flags`). A confirmed flag excludes the
    answer, an overruled one keeps it, and an unreviewed one follows the study's rules.
    """

    class Review(models.TextChoices):
        PENDING = "", "Not reviewed"
        CONFIRMED = "confirmed", "Confirmed (excluded)"
        OVERRULED = "overruled", "Overruled (kept)"

    telemetry = models.JSONField(null=True, blank=True)
    flags = models.JSONField(default=list, blank=True)
    flag_review = models.CharField(
        max_length=20, choices=Review.choices, default=Review.PENDING, blank=True
    )
    flag_review_reason = models.TextField(blank=True)
    flag_reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    flag_reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class Description(FlaggedAnswer):
    """A person description: collected from a writer or imported."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="descriptions")
    target = models.ForeignKey(TargetPerson, on_delete=models.PROTECT, related_name="descriptions")
    writer = models.ForeignKey(
        Participant,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="descriptions",
    )
    external_id = models.CharField(max_length=100, blank=True)
    text = models.TextField()
    source = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="copies",
        help_text="The collection study's description this one was taken from.",
    )
    provenance = models.JSONField(
        default=dict,
        blank=True,
        help_text="Where the text came from: source_study, source_description_id, writer_pid.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "source"],
                condition=Q(source__isnull=False),
                name="description_source_taken_once",
            ),
            models.UniqueConstraint(
                fields=["study", "external_id"],
                condition=~Q(external_id=""),
                name="description_external_id_unique_per_study",
            ),
            models.UniqueConstraint(
                fields=["writer", "target"],
                condition=Q(writer__isnull=False),
                name="description_one_per_writer_and_target",
            ),
        ]

    def __str__(self) -> str:
        return self.external_id or f"description {self.pk}"

    @property
    def reference(self) -> str:
        """Return the external id, or `description-<id>`: the name exports and analyses use,
        and by which imported anonymized texts find their description."""
        return self.external_id or f"description-{self.pk}"


class WritingTask(models.Model):
    """One target a writer is asked to describe, in the order famous, semifamous, fictitious."""

    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="writing_tasks"
    )
    target = models.ForeignKey(TargetPerson, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField()
    description = models.OneToOneField(
        Description, on_delete=models.SET_NULL, null=True, blank=True, related_name="task"
    )

    class Meta:
        ordering = ["participant", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "position"], name="writing_task_position_unique"
            ),
            models.UniqueConstraint(
                fields=["participant", "target"], name="writing_task_target_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.participant} #{self.position}: {self.target}"


class AnonymizedText(models.Model):
    """An anonymized version of a description; only released ones reach intruders.

    `spans` holds the character offsets in the original text of every replaced item:
    [{start, end, text, category, placeholder, score}], as produced by `anonymize`.
    """

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft (needs review)"
        RELEASED = "released", "Released to intruders"
        WITHDRAWN = "withdrawn", "Withdrawn"

    description = models.ForeignKey(
        Description, on_delete=models.CASCADE, related_name="anonymizations"
    )
    method = models.CharField(max_length=50, default="textwash-model")
    model_version = models.CharField(max_length=100, blank=True)
    text = models.TextField()
    spans = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
    revision = models.PositiveIntegerField(
        default=1, help_text="Bumped on every edit; stale edits are refused."
    )
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reviewed_at = models.DateTimeField(
        null=True, blank=True, help_text="When a researcher marked it reviewed; edits clear it."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["description", "method"], name="anonymization_unique_per_method"
            )
        ]

    def __str__(self) -> str:
        return f"{self.description} [{self.method}]"


class Assignment(models.Model):
    """An anonymized text shown to an intruder, holding one of the text's judgment slots.

    A text has `study.judgments_per_text` slots; an active or completed assignment holds one.
    The partial unique constraint on (text, slot) makes over-assignment impossible even when
    two participants race for the last slot.
    """

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        COMPLETED = "completed", "Completed"
        RELEASED = "released", "Released (abandoned)"

    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="assignments"
    )
    text = models.ForeignKey(AnonymizedText, on_delete=models.PROTECT, related_name="assignments")
    position = models.PositiveSmallIntegerField()
    slot = models.PositiveSmallIntegerField()
    exclusive_target = models.ForeignKey(
        TargetPerson,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="The text's target, held once per participant; empty where the study "
        "allows several texts about one person.",
    )
    canary = models.CharField(
        max_length=40, blank=True, help_text="The hidden word served with this text."
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    assigned_at = models.DateTimeField(auto_now_add=True)
    shown_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["participant", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["text", "slot"],
                condition=Q(status__in=["active", "completed"]),
                name="assignment_slot_held_once",
            ),
            models.UniqueConstraint(
                fields=["participant", "text"], name="assignment_text_once_per_participant"
            ),
            # One intruder, one text per person: a second text about a person they have
            # already judged is not a fresh intruder's view (NULL = the study allows it).
            models.UniqueConstraint(
                fields=["participant", "exclusive_target"],
                name="assignment_target_once_per_participant",
            ),
            models.UniqueConstraint(
                fields=["participant", "position"],
                condition=Q(status__in=["active", "completed"]),
                name="assignment_position_unique",
            ),
            models.CheckConstraint(condition=Q(slot__gte=1), name="assignment_slot_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.participant} #{self.position}: text {self.text_id} slot {self.slot}"


class Judgment(FlaggedAnswer):
    """An intruder's answer about one anonymized text, with its score against the target."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="judgment")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="judgments")
    text = models.ForeignKey(AnonymizedText, on_delete=models.PROTECT, related_name="judgments")
    self_identified = models.BooleanField(help_text="'Could you identify the person?'")
    guessed_name = models.CharField(max_length=200, blank=True)
    revealing_text = models.TextField(blank=True, help_text="What revealed the identity.")
    other_knowledge = models.TextField(
        blank=True, help_text="What they could tell about the person if not identified."
    )
    time_spent_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Scores, filled in on submission (model_runtime.guess_scoring) and recomputable.
    cosine = models.FloatField(null=True, blank=True)
    identified = models.BooleanField(null=True, blank=True)
    matched_alias = models.CharField(max_length=200, blank=True)
    token_set_ratio = models.FloatField(null=True, blank=True)
    surname_match = models.BooleanField(null=True, blank=True)
    surname_agrees = models.BooleanField(
        null=True,
        blank=True,
        help_text="A word of the guess is the person's surname (or one-word name), a typo "
        "allowed: what the best-match-and-surname rule asks beside the cosine.",
    )
    # The best match among the study's other persons (`model_runtime.guess_scoring`).
    other_cosine = models.FloatField(
        null=True, blank=True, help_text="Best character cosine to another person of the study."
    )
    other_person = models.ForeignKey(
        "TargetPerson",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The other person the guess matches best.",
    )
    named_other = models.BooleanField(
        null=True,
        blank=True,
        help_text="The guess is closer to another person of the study, at or above the threshold.",
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "text"], name="judgment_once_per_participant_and_text"
            )
        ]

    def __str__(self) -> str:
        return f"judgment {self.pk} by {self.participant_id} on text {self.text_id}"


# Job kinds that belong to no study are one at a time per these params (a job of a study is
# one at a time per study and kind). The queue reads this to name the active job it meets.
JOB_PARAM_SCOPES: dict[str, tuple[str, ...]] = {
    "annotation_suggestions": ("project",),
    "attack_fold": ("run", "fold"),
    "refresh_reports": ("project",),  # an annotation project's (a study's: one per study)
}


class Job(models.Model):
    """A background job (batch anonymization, TRIA run, training) with progress and retries.

    Results are written incrementally by the job itself, so a crashed job that is retried
    resumes from what is already stored rather than losing it.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    class Kind(models.TextChoices):
        """Every kind of background job; `intruder.tasks` registers one runner for each."""

        ANONYMIZE_STUDY = "anonymize_study", "Anonymize a study"
        CONSTRUCT_LOSS = "construct_loss", "Construct loss"
        ATTACK_STUDY = "attack_study", "Attack run"
        ATTACK_FOLD = "attack_fold", "One fold of an attack run"
        ANNOTATION_SUGGESTIONS = "annotation_suggestions", "Annotation suggestions"
        GUARD_STUDY = "guard_study", "Guard a study's texts"
        LLM_INTRUDER_STUDY = "llm_intruder_study", "Open-world LLM intruder"
        REHEARSE_STUDY = "rehearse_study", "Dress rehearsal with a simulated crowd"
        ANNOTATION_EVALUATE = "annotation_evaluate", "Evaluate an anonymizer on annotations"
        RISK_REPORT_PDF = "risk_report_pdf", "Draw a risk report's PDF"
        REFRESH_REPORTS = "refresh_reports", "Refresh the study's reports"

    kind = models.CharField(max_length=50, choices=Kind.choices)
    study = models.ForeignKey(
        Study, on_delete=models.CASCADE, null=True, blank=True, related_name="jobs"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    message = models.CharField(max_length=500, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the worker running it."
    )
    worker = models.CharField(max_length=200, blank=True, help_text="host:pid of the claimer.")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "created_at"], name="job_status_created")]
        constraints = [
            # A double click must not queue the same work twice (jobs of no study are free).
            models.UniqueConstraint(
                fields=["study", "kind"],
                condition=Q(status__in=("queued", "running"), study__isnull=False),
                name="job_one_active_per_study_and_kind",
            ),
            # The kinds of no study are one at a time per what they work on.
            *(
                models.UniqueConstraint(
                    *(KT(f"params__{key}") for key in keys),
                    condition=Q(status__in=("queued", "running"), kind=kind),
                    name=f"job_one_active_{kind}",
                )
                for kind, keys in JOB_PARAM_SCOPES.items()
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status})"

    @property
    def progress_pct(self) -> float:
        return 100.0 * self.progress_done / self.progress_total if self.progress_total else 0.0

    @property
    def attempt_label(self) -> str:
        """Return the attempts in words: a queued job has made none (not "attempt 0"), and
        a job run once says nothing, so the label changes only when a job is run again."""
        if self.attempts == 0:
            return "not started yet"
        return "" if self.attempts == 1 else f"attempt {self.attempts}"


class FamiliarityAnswer(models.Model):
    """An intruder's answer on the debrief: had they heard of this famous person before?"""

    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="familiarity_answers"
    )
    target = models.ForeignKey(
        TargetPerson, on_delete=models.CASCADE, related_name="familiarity_answers"
    )
    heard_of = models.BooleanField()
    simulated = models.BooleanField(
        default=False, help_text="Made by the demo's simulated intruders, not a person."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "target"], name="familiarity_once_per_participant_target"
            )
        ]

    def __str__(self) -> str:
        return f"{self.participant_id} {'knew' if self.heard_of else 'did not know'} {self.target}"


class FamiliarityDecoyAnswer(models.Model):
    """An intruder's answer about a decoy name on the familiarity list (no study person).

    Kept apart from `FamiliarityAnswer`, which the analyses read: a decoy has no texts. How
    decoys are answered shows how readily intruders claim to know a famous name.
    """

    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="familiarity_decoy_answers"
    )
    name = models.CharField(max_length=200)
    heard_of = models.BooleanField()
    simulated = models.BooleanField(
        default=False, help_text="Made by the demo's simulated intruders, not a person."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "name"], name="familiarity_decoy_once_per_participant"
            )
        ]

    def __str__(self) -> str:
        return f"{self.participant_id} {'knew' if self.heard_of else 'did not know'} {self.name}"


class ImportBatch(models.Model):
    """A study data import in progress: what it has committed so far, batch by batch.

    Written in the same transaction as each batch of rows, so after a crash (kill -9, power
    loss) the marker lists exactly the rows the unfinished import left behind; the next
    import of the study, or the next start of a worker, deletes them again. A finished or
    rolled-back import leaves no marker.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="import_batches")
    worker = models.CharField(max_length=200, help_text="host:pid of the importing process.")
    created = models.JSONField(
        default=dict, help_text="Ids written so far: targets, descriptions, texts."
    )
    started_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["started_at"]

    def __str__(self) -> str:
        return f"import into {self.study} by {self.worker}"
