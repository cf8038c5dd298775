"""Answer evidence's tables: each serving of a text's page and each attention check.

Part of the `intruder` app (`intruder/models.py` imports them; app label and table names are
the app's), so they refer to the app's other tables by name ("intruder.Assignment"). The flag
columns themselves (`FlaggedAnswer`: telemetry, flags, review) are columns of the core's
descriptions and judgments and stay with them.
"""

from __future__ import annotations

from django.db import models


class PageView(models.Model):
    """One serving of an assigned text's page: the server's own evidence of how it was read.

    Each serving (the first, and every reload) gets an unguessable token that the page's
    telemetry must name. A view reports its telemetry once (on leaving the page, or with the
    answer); the conditional update makes a replayed or forged second report a no-op.
    `intruder.evidence.page_views` sums the views of an assignment into its evidence.
    """

    assignment = models.ForeignKey(
        "intruder.Assignment", on_delete=models.CASCADE, related_name="page_views"
    )
    token = models.CharField(max_length=64, unique=True)
    served_at = models.DateTimeField()
    reported_at = models.DateTimeField(null=True, blank=True)
    telemetry = models.JSONField(
        null=True, blank=True, help_text="The view's checked telemetry; empty until reported."
    )
    problems = models.JSONField(
        default=list, blank=True, help_text="What did not fit in its report (in words)."
    )

    class Meta:
        ordering = ["assignment", "served_at", "id"]

    def __str__(self) -> str:
        return f"view {self.pk} of assignment {self.assignment_id}"


class AttentionCheck(models.Model):
    """An instructed-response item shown to an intruder between two texts.

    Not a text: it holds no slot, is never judged and never reaches rates or the risk report.
    `expected` is never sent to the participant; a failed check flags the participant's
    judgments (`intruder.evidence.attention`).
    """

    participant = models.ForeignKey(
        "intruder.Participant", on_delete=models.CASCADE, related_name="attention_checks"
    )
    after_texts = models.PositiveSmallIntegerField(
        help_text="Shown once the participant has judged this many texts."
    )
    prompt = models.TextField()
    expected = models.CharField(max_length=100)
    answer = models.CharField(max_length=200, blank=True)
    passed = models.BooleanField(null=True, blank=True)
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["participant", "after_texts"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "after_texts"], name="attention_check_once_per_place"
            )
        ]

    def __str__(self) -> str:
        return f"attention check after {self.after_texts} texts for {self.participant_id}"
