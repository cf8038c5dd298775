"""The tables of computed reports: the stored page reports and the rendered downloads.

They belong to the `intruder` app (their app label is unchanged); `intruder/models.py`
imports them so that Django finds them.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class ReportFile(models.Model):
    """A rendered download of a run's report (the PDF) for one version of the study's data.

    Rendering takes seconds, so a job makes it and the page links to it; it is stored in the
    database so that a worker on another host can hand it to the web hosts. A file of an
    older data version is never served (the study changed since): it is replaced.
    """

    run = models.ForeignKey(
        "intruder.AttackRun", on_delete=models.CASCADE, related_name="report_files"
    )
    name = models.CharField(max_length=50, help_text="The download's name, e.g. report.pdf.")
    data_version = models.CharField(
        max_length=64, help_text="intruder.selectors.report_cache.study_data_version"
    )
    content = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "name", "data_version"], name="report_file_once_per_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} of run {self.run_id}"


class ComputedReport(models.Model):
    """The newest computed report behind a researcher page: a study's risk and analysis
    pages, an annotation project's agreement.

    Computing one takes seconds, so the `refresh_reports` job makes it and web and worker
    processes share it: here, or in Redis where Django's cache is Redis (`content` is then
    empty; `intruder.reports.cache`). `data_version` (`study_data_version`,
    `project_data_version`) says which data it was computed from, so a page tells a current
    report from an older one, which it shows labelled while the job computes the fresh one.
    One row per report, replaced in place.
    """

    study = models.ForeignKey(
        "intruder.Study",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="computed_reports",
    )
    project = models.ForeignKey(
        "annotation.Project",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="computed_reports",
    )
    name = models.CharField(max_length=50, help_text="The report, e.g. risk-page.")
    args = models.CharField(max_length=200, blank=True, help_text="Its arguments (a run id).")
    data_version = models.CharField(
        max_length=64, help_text="intruder.selectors.report_cache.study_data_version"
    )
    content = models.BinaryField(help_text="The computed report, pickled.")
    judgments = models.PositiveIntegerField(
        default=0,
        help_text="How many judgments (a project: submitted annotations) it was computed from.",
    )
    computed_at = models.DateTimeField()
    compute_ms = models.PositiveIntegerField(default=0)
    requested_at = models.DateTimeField(
        null=True, blank=True, help_text="A page asked for a fresh one (the job clears it)."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "name", "args"],
                condition=Q(study__isnull=False),
                name="computed_report_once_per_study",
            ),
            models.UniqueConstraint(
                fields=["project", "name", "args"],
                condition=Q(project__isnull=False),
                name="computed_report_once_per_project",
            ),
            # Exactly one owner: a study or an annotation project.
            models.CheckConstraint(
                condition=Q(study__isnull=False, project__isnull=True)
                | Q(study__isnull=True, project__isnull=False),
                name="computed_report_one_owner",
            ),
        ]

    def __str__(self) -> str:
        owner = f"study {self.study_id}" if self.study_id else f"project {self.project_id}"
        return f"{self.name}{self.args} of {owner}"
