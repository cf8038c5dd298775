"""Rendered downloads of a run's report (the PDF), kept per version of the study's data.

Drawing one takes seconds, longer than a page may take, so a job makes it and the page
links the file once it is made. A file is served only for the data version it was made
from; a newer one replaces it.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from intruder.reports.models import ReportFile
from intruder.reports.versions import study_data_version


def report_file_current(run: Any, name: str) -> ReportFile | None:
    """Return the run's file `name` made from the study's current data (without its bytes)."""
    version = study_data_version(run.study)
    return run.report_files.filter(name=name, data_version=version).defer("content").first()


def report_file_store(*, run: Any, name: str, version: str, content: bytes) -> ReportFile | None:
    """Store the run's file `name` made from data `version` (older versions go); return it,
    or None when a retried job (or a download) stored it already, from the same data."""
    with transaction.atomic():
        run.report_files.filter(name=name).exclude(data_version=version).delete()
        try:
            with transaction.atomic():
                return ReportFile.objects.create(
                    run=run, name=name, data_version=version, content=content
                )
        except IntegrityError:
            return None
