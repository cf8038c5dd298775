"""The risk report's PDF, made by a background job and kept per version of the study's data
(`intruder.reports.files`).

Drawing the PDF (a summary page, the plots and every main table as pages) takes seconds,
longer than a page may take, so the risk page queues `risk_report_pdf` and links the file
once it is made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from intruder.models import Job
from intruder.reports.files import report_file_current, report_file_store
from intruder.reports.models import ReportFile
from intruder.reports.refresh import report_current
from intruder.reports.versions import study_data_version
from intruder.risk.models import AttackRun
from intruder.risk.pages import RISK_REPORT, report_title
from intruder.risk.rendering import pdf_bytes
from intruder.services.jobs import JobAlreadyActive, job_enqueue

PDF_NAME = "report.pdf"


def cached_run_report(run: AttackRun) -> Any:
    """Return the run's report for the study's current data, computed once per data version
    and stored where every process reads it (the page's refresh job makes it too, so the
    downloads after it are not computed again)."""
    return report_current(run.study, RISK_REPORT, (run.pk,))


def report_pdf_current(run: AttackRun) -> ReportFile | None:
    """Return the run's PDF made from the study's current data (without its bytes), or None."""
    return report_file_current(run, PDF_NAME)


def report_pdf_job(run: AttackRun) -> Job | None:
    """Return the newest PDF job of the run, or None."""
    jobs = Job.objects.filter(study=run.study, kind=Job.Kind.RISK_REPORT_PDF, params__run=run.pk)
    return jobs.order_by("-created_at", "-id").first()


def report_pdf_job_start(*, run: AttackRun, user: Any) -> tuple[Job, bool]:
    """Queue the run's PDF unless a PDF job of the study is active; return (job, created)."""
    try:
        job = job_enqueue(
            kind=Job.Kind.RISK_REPORT_PDF, study=run.study, params={"run": run.pk}, created_by=user
        )
    except JobAlreadyActive as active:
        if active.job is None:  # it finished in between: queue this one
            return report_pdf_job_start(run=run, user=user)
        return active.job, False
    return job, True


def report_pdf_make(
    *, run: AttackRun, progress: Callable[..., None] | None = None
) -> tuple[ReportFile | None, bytes]:
    """Draw the run's PDF from the study's current data and store it (older versions go).

    Returns the stored file (None when a retried job had stored it already) and the bytes.
    """
    version = study_data_version(run.study)
    if progress is not None:
        progress(0, 1, "computing the report")
    report = cached_run_report(run)
    content = pdf_bytes(report, report_title(run), progress=progress)
    stored = report_file_store(run=run, name=PDF_NAME, version=version, content=content)
    return stored, content
