"""Annotation projects, their documents, annotators, tasks and mentions.

Invariants are database constraints: one task per annotator and document, each of a
document's `annotators_per_text` slots held by one active or submitted task at a time (so two
annotators racing for the last slot cannot both get it), one mention per span in a task, and
one decision per pre-annotation suggestion.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q

from anonymize.annotations.schema import (
    CONFIDENTIAL_STATUSES,
    DATASET_TYPES,
    EDIT_TYPES,
    IDENTIFIER_TYPES,
)
from intruder.models import PROLIFIC_ID_PATTERN, new_completion_code, new_participant_token

HELD_STATUSES = ("active", "submitted")


def _choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(v, v) for v in values]


class Project(models.Model):
    """A set of texts to annotate for PSI under one scheme."""

    class Scheme(models.TextChoices):
        TEXTWASH = "textwash", "Textwash categories"
        TAB = "tab", "TAB categories"
        CUSTOM = "custom", "Custom categories"

    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="annotation_projects"
    )
    scheme = models.CharField(max_length=20, choices=Scheme.choices, default=Scheme.TEXTWASH)
    categories = models.JSONField(default=list, help_text="The scheme's category names.")
    # Validators as well as the check constraints below: the form and the API refuse a 0
    # beside the field, and the database still refuses one that got past them.
    annotators_per_text = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1)]
    )
    texts_per_annotator = models.PositiveSmallIntegerField(
        default=10,
        validators=[MinValueValidator(1)],
        help_text="Crowd annotators: texts each one annotates.",
    )
    guidelines = models.TextField(blank=True)
    pre_annotate = models.BooleanField(
        default=True, help_text="Show the shipped anonymizer's spans as suggestions."
    )
    suggestion_threshold = models.FloatField(
        null=True, blank=True, help_text="P(PSI) threshold of the suggestions; empty = model's."
    )
    show_others_work = models.BooleanField(
        default=False, help_text="Annotators also see the submitted work of the others."
    )
    is_open = models.BooleanField(
        default=False,
        help_text="Crowd annotators may enrol. Projects start closed; a project holding a "
        "study's originals cannot be open while an intruder study over its targets is.",
    )
    prolific_study_id = models.CharField(
        "Prolific study ID",
        max_length=64,
        blank=True,
        validators=[RegexValidator(PROLIFIC_ID_PATTERN, "Not a Prolific study ID.")],
        help_text="Prolific's STUDY_ID of the crowd study: entry links with another STUDY_ID "
        "are refused. Empty = any STUDY_ID (pilots only).",
    )
    task_time_limit_minutes = models.PositiveSmallIntegerField(
        default=60,
        validators=[MinValueValidator(1), MaxValueValidator(24 * 60)],
        help_text="Crowd annotators: a text untouched this long is given to someone else.",
    )
    completion_code = models.CharField(max_length=32, default=new_completion_code)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(annotators_per_text__gte=1), name="annotation_annotators_positive"
            ),
            models.CheckConstraint(
                condition=Q(texts_per_annotator__gte=1), name="annotation_texts_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.title


class ProjectMember(models.Model):
    """A researcher's role in a project (the owner is implicitly a manager)."""

    class Role(models.TextChoices):
        MANAGER = "manager", "Manager"
        ANNOTATOR = "annotator", "Annotator"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotation_memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.ANNOTATOR)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="annotation_member_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) on {self.project}"


class Document(models.Model):
    """A text to annotate, with the model's suggestions computed once."""

    class Source(models.TextChoices):
        IMPORT = "import", "Imported file"
        DESCRIPTION = "description", "Study description"
        ANONYMIZED = "anonymized", "Anonymized text"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="documents")
    doc_id = models.CharField(max_length=200)
    text = models.TextField()
    dataset_type = models.CharField(max_length=10, choices=_choices(DATASET_TYPES), default="train")
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.IMPORT)
    source_ref = models.CharField(max_length=100, blank=True)
    suggestions = models.JSONField(
        default=list, blank=True, help_text="[{start, end, category, entity, score}]"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "doc_id"], name="annotation_doc_id_unique")
        ]

    def __str__(self) -> str:
        return self.doc_id


class Annotator(models.Model):
    """Who annotates: a researcher (user), a crowd worker (Prolific PID) or an imported layer."""

    class Status(models.TextChoices):
        STARTED = "started", "Started"
        COMPLETED = "completed", "Completed"
        TIMED_OUT = "timed_out", "Timed out"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotators")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="annotator_seats",
    )
    prolific_pid = models.CharField(max_length=64, blank=True)
    name = models.CharField(max_length=100, blank=True, help_text="Imported annotation layers.")
    token = models.CharField(max_length=64, unique=True, default=new_participant_token)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.STARTED)
    instructions_seen_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "user"],
                condition=Q(user__isnull=False),
                name="annotation_annotator_user_unique",
            ),
            models.UniqueConstraint(
                fields=["project", "prolific_pid"],
                condition=~Q(prolific_pid=""),
                name="annotation_annotator_pid_unique",
            ),
            models.UniqueConstraint(
                fields=["project", "name"],
                condition=~Q(name=""),
                name="annotation_annotator_name_unique",
            ),
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        """Return the annotator's name in exports (username, prolific-<PID> or layer name)."""
        if self.user_id:
            return self.user.get_username()
        if self.prolific_pid:
            return f"prolific-{self.prolific_pid}"
        return self.name


class Task(models.Model):
    """One annotator's work on one document; `revision` detects conflicting saves."""

    class Status(models.TextChoices):
        ACTIVE = "active", "In progress"
        SUBMITTED = "submitted", "Submitted"
        RELEASED = "released", "Released"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="tasks")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="tasks")
    slot = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    revision = models.PositiveIntegerField(default=0)
    assigned_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["document", "slot"],
                condition=Q(status__in=HELD_STATUSES),
                name="annotation_slot_held_once",
            ),
            models.UniqueConstraint(
                fields=["document", "annotator"], name="annotation_task_once_per_annotator"
            ),
            models.CheckConstraint(condition=Q(slot__gte=1), name="annotation_slot_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.document}"


class Mention(models.Model):
    """An annotated span: Python character offsets into the document's text."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="mentions")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    entity_type = models.CharField(max_length=100)
    identifier_type = models.CharField(max_length=10, choices=_choices(IDENTIFIER_TYPES))
    confidential_status = models.CharField(
        max_length=20, choices=_choices(CONFIDENTIAL_STATUSES), default="NOT_CONFIDENTIAL"
    )
    entity = models.CharField(max_length=64, help_text="Entity key within the task.")
    edit_type = models.CharField(max_length=10, choices=_choices(EDIT_TYPES), default="insert")
    suggestion = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["start", "end"]
        constraints = [
            models.UniqueConstraint(fields=["task", "start", "end"], name="annotation_span_once"),
            models.CheckConstraint(condition=Q(end__gt=models.F("start")), name="mention_nonempty"),
        ]

    def __str__(self) -> str:
        return f"[{self.start}, {self.end}) {self.entity_type}"


class SuggestionDecision(models.Model):
    """What an annotator did with a model suggestion (TAB's edit_type, plus rejections)."""

    class Decision(models.TextChoices):
        ACCEPTED = "accepted", "Accepted as is"
        CORRECTED = "corrected", "Accepted with changes"
        REJECTED = "rejected", "Rejected"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="decisions")
    suggestion = models.PositiveIntegerField()
    decision = models.CharField(max_length=20, choices=Decision.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task", "suggestion"], name="annotation_decision_once")
        ]

    def __str__(self) -> str:
        return f"suggestion {self.suggestion}: {self.decision}"
