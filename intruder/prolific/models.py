"""Prolific's tables: a study's Prolific state, its submissions, webhook events, signed
deliveries and the actions taken on Prolific.

They belong to the `intruder` app (their app label is unchanged); `intruder/models.py`
imports them so that Django finds them.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ProlificStudyState(models.Model):
    """A study's Prolific side: what was published and Prolific's status as last reported.

    `status_at` is the X-Timestamp of the event (or the time of the sync) that set `status`:
    an older event never overrides a newer state.
    """

    class CompletionAction(models.TextChoices):
        AUTOMATICALLY_APPROVE = "AUTOMATICALLY_APPROVE", "Approve automatically"
        MANUALLY_REVIEW = "MANUALLY_REVIEW", "Review manually"

    study = models.OneToOneField(
        "intruder.Study", on_delete=models.CASCADE, related_name="prolific"
    )
    status = models.CharField(max_length=40, blank=True, help_text="Prolific's study status.")
    status_at = models.DateTimeField(null=True, blank=True)
    places = models.PositiveIntegerField(default=0)
    reward_minor = models.PositiveIntegerField(default=0, help_text="Reward in pence/cents.")
    estimated_minutes = models.PositiveIntegerField(default=0)
    completion_action = models.CharField(
        max_length=30, choices=CompletionAction.choices, default=CompletionAction.MANUALLY_REVIEW
    )
    counts = models.JSONField(default=dict, blank=True, help_text="Submissions by status.")
    synced_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Prolific {self.study.prolific_study_id or '(no ID)'}: {self.status or 'unknown'}"


class ProlificSubmission(models.Model):
    """A Prolific submission as last reported (webhook or sync), even before enrolment."""

    study = models.ForeignKey(
        "intruder.Study", on_delete=models.CASCADE, related_name="prolific_submissions"
    )
    submission_id = models.CharField(max_length=64, unique=True)
    prolific_pid = models.CharField(max_length=64)
    status = models.CharField(max_length=40)
    status_at = models.DateTimeField(help_text="When Prolific set the status (X-Timestamp).")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["study", "prolific_pid"]
        indexes = [models.Index(fields=["study", "prolific_pid"], name="prolific_sub_study_pid")]

    def __str__(self) -> str:
        return f"{self.prolific_pid}: {self.status}"


class ProlificWebhookEvent(models.Model):
    """A verified webhook event, stored once per X-Event-ID (its signed bytes, once each, are
    ProlificSignedDelivery rows)."""

    event_id = models.CharField(max_length=100, unique=True)
    event_type = models.CharField(max_length=100)
    occurred_at = models.DateTimeField()
    payload = models.JSONField(default=dict)
    outcome = models.CharField(max_length=40, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at"]

    def __str__(self) -> str:
        return f"{self.event_type} {self.event_id} ({self.outcome})"


class ProlificSignedDelivery(models.Model):
    """The digest of every verified delivery, Prolific's retries of a known event included.

    A retry is signed anew and is a duplicate by its X-Event-ID, so no event row keeps its
    digest; without this row an attacker replaying the retry's signed bytes under a new
    X-Event-ID inside the timestamp window would have it applied.
    """

    # SHA-256 of the signed request timestamp and body: a captured delivery replayed under
    # another (unsigned) X-Event-ID is still the same delivery.
    signed_digest = models.CharField(max_length=64, unique=True)
    event_id = models.CharField(max_length=100)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at"]

    def __str__(self) -> str:
        return f"{self.event_id} {self.signed_digest[:12]}"


class ProlificAction(models.Model):
    """An approval, rejection or bonus sent to Prolific: who, what, and Prolific's answer.

    `key` makes each action idempotent (one approval per participant, one payment per
    participant and bonus): a retry re-sends the stored action and never pays twice.
    """

    class Kind(models.TextChoices):
        APPROVE = "approve", "Approve"
        REJECT = "reject", "Reject"
        BONUS = "bonus", "Bonus"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SET_UP = "set_up", "Bonus set up, not yet paid"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed (may be retried)"

    study = models.ForeignKey(
        "intruder.Study", on_delete=models.CASCADE, related_name="prolific_actions"
    )
    key = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    prolific_pid = models.CharField(max_length=64)
    submission_id = models.CharField(max_length=64, blank=True)
    amount = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    reason = models.TextField(blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    prolific_ref = models.CharField(max_length=64, blank=True, help_text="e.g. the bonus id.")
    # A bonus's judgments: the identifications it pays for, so that no later bonus, under
    # any label, pays for them again.
    judgment_ids = models.JSONField(default=list, blank=True)
    override = models.TextField(
        blank=True, help_text="Why a participant outside the default rule was included."
    )
    response = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.prolific_pid} ({self.status})"


class ProlificStudyClaim(models.Model):
    """Which study (and so which account) a Prolific study ID belongs to.

    The server's token opens the whole Prolific workspace, so an ID Prolific confirms as the
    workspace's says nothing about who on this platform made it. A claim does: made by
    creating the draft from the platform (`via=draft`, approved at once), or asked for by
    typing an ID into a study (`via=manual`) and approved by a site administrator. The claim
    outlives the study's field: an ID cleared from its study stays reserved for that study.
    Only an approved claim lets a study hold the ID (`intruder.prolific.claims`).
    """

    class Via(models.TextChoices):
        DRAFT = "draft", "Draft created from the platform"
        MANUAL = "manual", "Typed in, approved by a site administrator"
        EXISTING = "existing", "Held before claims existed (migration)"

    prolific_study_id = models.CharField(max_length=64)
    study = models.ForeignKey(
        "intruder.Study", on_delete=models.CASCADE, related_name="prolific_claims"
    )
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    via = models.CharField(max_length=20, choices=Via.choices)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # One owner per Prolific study ID, whether or not a study field holds it now.
            models.UniqueConstraint(
                fields=["prolific_study_id"],
                condition=models.Q(approved_at__isnull=False),
                name="prolific_claim_one_owner",
            ),
            models.UniqueConstraint(
                fields=["prolific_study_id", "study"], name="prolific_claim_once_per_study"
            ),
        ]

    def __str__(self) -> str:
        state = "approved" if self.approved_at else "awaiting approval"
        return f"{self.prolific_study_id} → study {self.study_id} ({state})"

    @property
    def approved(self) -> bool:
        return self.approved_at is not None
