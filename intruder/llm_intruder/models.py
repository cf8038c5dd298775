"""The LLM intruder's table: one scored answer per text of an open-world LLM intruder job.

Part of the `intruder` app (`intruder/models.py` imports it; app label and table name are the
app's), so it refers to the app's other tables by name ("intruder.Job").
"""

from __future__ import annotations

from django.db import models


class LLMGuess(models.Model):
    """One answer of the open-world LLM intruder: its guessed names for one text, scored as a
    human guess is. A row per text keeps the job's result small and lets a retry resume."""

    job = models.ForeignKey("intruder.Job", on_delete=models.CASCADE, related_name="llm_guesses")
    anonymized_text = models.ForeignKey(
        "intruder.AnonymizedText", on_delete=models.CASCADE, related_name="llm_guesses"
    )
    guesses = models.JSONField(default=list, blank=True, help_text="Names, most likely first.")
    cosine = models.FloatField(null=True, blank=True, help_text="First name's character cosine.")
    identified = models.BooleanField(null=True, blank=True)
    matched_alias = models.CharField(max_length=200, blank=True)
    named_other = models.BooleanField(
        null=True, blank=True, help_text="The first name is closer to another person of the study."
    )
    error_reason = models.CharField(
        max_length=40, blank=True, help_text="Why no usable answer came (empty when one did)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "anonymized_text"]
        constraints = [
            models.UniqueConstraint(
                fields=["job", "anonymized_text"], name="llm_guess_once_per_job_and_text"
            )
        ]

    def __str__(self) -> str:
        return f"LLM guess of text {self.anonymized_text_id} in job {self.job_id}"
