"""Risk's tables: study runs (attack runs and guard runs) and their per-text results.

Part of the `intruder` app (`intruder/models.py` imports them; app label and table names are
the app's), so they refer to the app's other tables by name ("intruder.Study").
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from intruder.bounds import FOLDS, GUARD_BUDGET, RANK, SEED


def _study_key(related_name: str) -> models.ForeignKey:
    return models.ForeignKey("intruder.Study", on_delete=models.CASCADE, related_name=related_name)


def _job_key(related_name: str) -> models.OneToOneField:
    return models.OneToOneField(
        "intruder.Job", on_delete=models.SET_NULL, null=True, blank=True, related_name=related_name
    )


class StudyRun(models.Model):
    """What every run of machine attacks on a study's texts holds: its settings, the job that
    runs it, its background and its outcome.

    `study` and `job` are declared by each run with the reverse name its table had before
    (`study.attack_runs`, `job.guard_run`); Django names reverse relations of an abstract
    base only after the class ("attackrun"). The settings' ranges live in `intruder.bounds`.
    """

    class Background(models.TextChoices):
        UPLOADED = "uploaded", "Uploaded documents per target person"
        CROSS_VALIDATED = "cross_validated", "The study's own descriptions, k-fold"

    attacks = models.JSONField(default=list, help_text="Attack names, e.g. ['tfidf', 'bm25'].")
    background = models.CharField(
        max_length=20, choices=Background.choices, default=Background.CROSS_VALIDATED
    )
    background_documents = models.JSONField(
        default=dict, blank=True, help_text="Uploaded background: target key -> text."
    )
    folds = models.PositiveSmallIntegerField(
        default=FOLDS.default, help_text="k of the k-fold background."
    )
    seed = models.PositiveIntegerField(default=SEED.default)
    summary = models.JSONField(
        default=dict,
        blank=True,
        help_text="The outcome: attack runs' TRIR tables, guard runs' counts.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    @staticmethod
    def folds_constraint(name: str) -> models.CheckConstraint:
        """Return the database's share of `FOLDS` (named per table, as migrated)."""
        return models.CheckConstraint(condition=Q(folds__gte=FOLDS.low), name=name)


class AttackRun(StudyRun):
    """A machine re-identification attack on a study's texts: its settings and its outcome.

    The per-text results live in AttackResult, written as they are made by the run's job,
    so a crashed run resumes. A "risk check" is a run of the cheap attacks with the study's
    own descriptions as background, made to flag risky drafts before release.
    """

    class Purpose(models.TextChoices):
        REPORT = "report", "Risk report"
        RISK_CHECK = "risk_check", "Pre-release risk check"

    study = _study_key("attack_runs")
    job = _job_key("attack_run")
    purpose = models.CharField(max_length=20, choices=Purpose.choices, default=Purpose.REPORT)
    methods = models.JSONField(
        default=list,
        help_text="What is attacked: study methods (e.g. 'textwash-model') and baselines "
        "('clear', 'spacy-ner', 'model@0.2').",
    )
    distractor_documents = models.JSONField(
        default=dict,
        blank=True,
        help_text="Open-world distractors: persons not in the study (name -> text), added as "
        "candidates to every background.",
    )
    knowledge_budget = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="Descriptions known per candidate (b), drawn at random from the study's own; "
        "empty = every description outside the fold.",
    )
    budget_resamples = models.PositiveSmallIntegerField(
        default=1, help_text="Random draws of the b descriptions (R), averaged."
    )
    config = models.JSONField(default=dict, blank=True, help_text="Attack config overrides.")

    class Meta(StudyRun.Meta):
        constraints = [StudyRun.folds_constraint("attack_run_folds_at_least_2")]

    def __str__(self) -> str:
        return f"{self.get_purpose_display()} {self.pk} on {self.study}"


class AttackResult(models.Model):
    """One attack's prediction for one description under one anonymization method."""

    run = models.ForeignKey(AttackRun, on_delete=models.CASCADE, related_name="results")
    description = models.ForeignKey(
        "intruder.Description", on_delete=models.CASCADE, related_name="+"
    )
    anonymized_text = models.ForeignKey(
        "intruder.AnonymizedText",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="attack_results",
        help_text="The stored text attacked; empty for baselines made on the fly.",
    )
    method = models.CharField(max_length=50)
    attack = models.CharField(max_length=20)
    fold = models.PositiveSmallIntegerField(null=True, blank=True)
    predicted_key = models.CharField(max_length=100)
    true_rank = models.PositiveIntegerField(
        null=True, blank=True, help_text="1-based; empty when the person has no background."
    )
    true_prob = models.FloatField(null=True, blank=True)
    top_k = models.JSONField(default=list, help_text="[[target key, probability], ...]")
    masked_share = models.FloatField(
        null=True, blank=True, help_text="Share of the original's words masked in this text."
    )
    driving_words = models.JSONField(
        default=list, blank=True, help_text="Words shared with the predicted person's background."
    )
    hit_share = models.FloatField(
        null=True,
        blank=True,
        help_text="Knowledge-budget runs: share of the R resamples that ranked the true person "
        "first (true_rank is the median rank over them).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "description", "method", "attack"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "description", "method", "attack"],
                name="attack_result_once_per_text_method_attack",
            )
        ]

    def __str__(self) -> str:
        return f"{self.attack} on {self.description} [{self.method}]"

    @property
    def correct(self) -> bool:
        return self.true_rank == 1


class GuardRun(StudyRun):
    """One run of the guard on a study: its settings and counts; per text, GuardResult.

    The run's job writes a result row per text as it guards it (a batch at a time, with the
    text's new spans, in one transaction), so the review page fills in while it runs and a
    retried job skips the texts this run has a row for.
    """

    study = _study_key("guard_runs")
    job = _job_key("guard_run")
    rank = models.PositiveIntegerField(
        validators=RANK.validators(),
        help_text="Mask until every attack ranks the person at this rank or worse.",
    )
    budget = models.FloatField(
        validators=GUARD_BUDGET.validators(),
        help_text="Most words the guard may mask, as a share of a text's.",
    )
    undone_at = models.DateTimeField(
        null=True, blank=True, help_text="When a researcher took the run's masks off again."
    )

    class Meta(StudyRun.Meta):
        # The ranges `guard.GuardConfig` and the review page's form accept.
        constraints = [
            models.CheckConstraint(condition=Q(rank__gte=2), name="guard_run_rank_at_least_2"),
            models.CheckConstraint(
                condition=Q(budget__gt=0) & Q(budget__lte=1), name="guard_run_budget_share"
            ),
            StudyRun.folds_constraint("guard_run_folds_at_least_2"),
        ]

    def __str__(self) -> str:
        return f"guard run {self.pk} on {self.study} (rank {self.rank})"


class GuardResult(models.Model):
    """The guard's outcome for one anonymized text: each attack's rank of the person before
    and after, and the words masked and those the attacks still lean on."""

    run = models.ForeignKey(GuardRun, on_delete=models.CASCADE, related_name="results")
    anonymized_text = models.ForeignKey(
        "intruder.AnonymizedText", on_delete=models.CASCADE, related_name="guard_results"
    )
    description = models.ForeignKey(
        "intruder.Description", on_delete=models.CASCADE, related_name="+"
    )
    target = models.CharField(max_length=100, help_text="The true person's target key.")
    rank_before = models.JSONField(
        default=dict, help_text="Attack -> the person's 1-based rank before guarding."
    )
    rank_after = models.JSONField(default=dict, help_text="Attack -> the rank after guarding.")
    masked_words = models.JSONField(default=list, blank=True)
    guard_spans = models.JSONField(
        default=list, blank=True, help_text="The texts of the spans the guard added."
    )
    residual_words = models.JSONField(
        default=list, blank=True, help_text="Unmasked words the attacks still lean on most."
    )
    changed = models.BooleanField(default=False, help_text="The guard stored new spans.")
    # What undoing the run restores, while the text is still as the guard left it.
    spans_before = models.JSONField(
        default=list, blank=True, help_text="The text's spans before the guard changed them."
    )
    revision_after = models.PositiveIntegerField(
        null=True, blank=True, help_text="The text's revision the guard's change left."
    )
    flagged = models.BooleanField(
        default=False, help_text="An attack still ranks the person better than k-th."
    )
    reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "anonymized_text"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "anonymized_text"], name="guard_result_once_per_run_and_text"
            )
        ]

    def __str__(self) -> str:
        return f"guard of text {self.anonymized_text_id} in run {self.run_id}"

    @property
    def ranks(self) -> list[tuple[str, int | None, int | None]]:
        """Return (attack, rank before, rank after) per attack, as the review table shows."""
        return [
            (attack, before, self.rank_after.get(attack))
            for attack, before in self.rank_before.items()
        ]
