"""Researcher report pages that never wait for their statistics: stored reports, refreshed
by a background job after the study's data change.

A report page (risk, analysis) asks `page_report`. The newest computed report of the study
lives in `ComputedReport`, which web and worker processes share (the default cache is per
process). When its data version is the study's current one the page shows it (cached in the
process too). When the data changed since (a new judgment, flag, rescoring, finished attack
run) the page shows that older report at once, labelled with when and from how many
judgments it was computed, and queues one `refresh_reports` job for the study; the page
polls the job and reloads when the fresh one is stored. A burst of changes queues one job:
the database allows one queued or running job per study and kind, and the job computes
from the data as they are when it runs. Only a report never computed for the study (its
first view) is computed in the request.

Downloads use `report_current`, which never returns an older report.
"""

from __future__ import annotations

import ast
import pickle
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from intruder.models import ComputedReport, Job, Judgment, Study
from intruder.selectors.report_cache import REPORT_CACHE_SECONDS, study_data_version
from intruder.selectors.report_pages import GONE_ERRORS, PAGE_REPORTS
from intruder.services.jobs import Progress, job_start

# Rounds of the job: data that keep changing while it computes get at most this many passes
# (the page queues another job when it finds the result behind again).
MAX_ROUNDS = 3
# Refresh jobs kept per study (for the job list); older finished ones are deleted.
KEEP_JOBS = 3


@dataclass
class PageReport:
    """What a report page shows: the report, whether it is current, and how far behind."""

    value: Any
    current: bool
    computed_at: datetime
    judgments_then: int
    judgments_now: int
    job: Job | None = None

    @property
    def new_judgments(self) -> int:
        return max(0, self.judgments_now - self.judgments_then)

    @property
    def jobs(self) -> list[Job]:
        """The refresh job as a job list (the page's progress rows)."""
        return [self.job] if self.job is not None else []


def _args_key(args: tuple[Any, ...]) -> str:
    return repr(tuple(args))


def _local_key(study: Study, name: str, args: tuple[Any, ...], version: str) -> str:
    return f"intruder-page-report:{study.pk}:{name}:{_args_key(args)}:{version}"


def _judgment_count(study: Study) -> int:
    return Judgment.objects.filter(participant__study=study).count()


def _stored(study: Study, name: str, args: tuple[Any, ...]) -> ComputedReport | None:
    rows = ComputedReport.objects.filter(study=study, name=name, args=_args_key(args))
    return rows.defer("content").first()


def _load(row: ComputedReport, key: str | None = None) -> Any:
    """Return a stored report's value (kept in this process's cache under `key`, if given)."""
    content = ComputedReport.objects.values_list("content", flat=True).get(pk=row.pk)
    value = pickle.loads(content)
    if key is not None:
        cache.set(key, value, REPORT_CACHE_SECONDS)
    return value


def _compute_and_store(
    study: Study, name: str, args: tuple[Any, ...], *, requested_before: datetime | None = None
) -> tuple[Any, ComputedReport]:
    """Compute a report from the study's data as they are now and store it (replacing the
    older one). A page request newer than `requested_before` stays requested."""
    version = study_data_version(study)
    judgments = _judgment_count(study)
    start = time.perf_counter()
    value = PAGE_REPORTS[name](study, args)
    fields = {
        "data_version": version,
        "content": pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL),
        "judgments": judgments,
        "computed_at": timezone.now(),
        "compute_ms": round(1000 * (time.perf_counter() - start)),
    }
    with transaction.atomic():
        row, created = ComputedReport.objects.select_for_update().get_or_create(
            study=study, name=name, args=_args_key(args), defaults=fields
        )
        if not created:
            if requested_before is None or (
                row.requested_at is not None and row.requested_at <= requested_before
            ):
                fields["requested_at"] = None
            ComputedReport.objects.filter(pk=row.pk).update(**fields)
    cache.set(_local_key(study, name, args, version), value, REPORT_CACHE_SECONDS)
    row.data_version = version
    return value, row


def report_current(study: Study, name: str, args: tuple[Any, ...] = ()) -> Any:
    """Return the report of the study's current data: stored, or computed now (downloads;
    never an older report)."""
    version = study_data_version(study)
    key = _local_key(study, name, args, version)
    value = cache.get(key)
    if value is not None:
        return value
    row = _stored(study, name, args)
    if row is not None and row.data_version == version:
        return _load(row, key)
    return _compute_and_store(study, name, args)[0]


def reports_refresh_start(*, study: Study, user: Any = None) -> tuple[Job, bool]:
    """Queue the study's report refresh unless one is queued or running; (job, created)."""
    return job_start(kind=Job.Kind.REFRESH_REPORTS, study=study, created_by=user)


def page_report(
    *, study: Study, name: str, args: tuple[Any, ...] = (), user: Any = None
) -> PageReport:
    """Return what a report page shows without computing in the request (but a first view).

    Current report: from this process's cache or the shared store. Older report: returned
    labelled, the row marked requested and the refresh job queued (or the one under way
    returned). No report yet: computed now and stored.
    """
    version = study_data_version(study)
    key = _local_key(study, name, args, version)
    value = cache.get(key)
    row = _stored(study, name, args)
    if row is None:  # a first view: nothing to show but the report itself
        value, row = _compute_and_store(study, name, args)
        return PageReport(value, True, row.computed_at, row.judgments, row.judgments)
    if row.data_version == version:
        if value is None:
            value = _load(row, key)
        return PageReport(value, True, row.computed_at, row.judgments, row.judgments)
    # Always the newest request: the job keeps a report requested while it was computing.
    ComputedReport.objects.filter(pk=row.pk).update(requested_at=timezone.now())
    job, _ = reports_refresh_start(study=study, user=user)
    return PageReport(
        _load(row),
        False,
        row.computed_at,
        row.judgments,
        _judgment_count(study),
        job,
    )


def reports_refresh(*, study: Study, progress: Progress | None = None) -> dict[str, Any]:
    """Compute every requested report of the study that is behind its data (the job's work).

    Runs up to MAX_ROUNDS passes, so changes that land while it computes are caught up with;
    a report of a row that is gone (a deleted run) is dropped.
    """
    computed: list[str] = []
    dropped: list[str] = []
    for _ in range(MAX_ROUNDS):
        version = study_data_version(study)
        due = list(
            ComputedReport.objects.filter(study=study, requested_at__isnull=False)
            .exclude(data_version=version)
            .defer("content")
            .order_by("requested_at", "pk")
        )
        if not due:
            break
        for index, row in enumerate(due):
            if progress is not None:
                progress(index, len(due), f"computing {row.name}")
            args = _parse_args(row.args)
            try:
                _compute_and_store(study, row.name, args, requested_before=row.requested_at)
            except GONE_ERRORS:
                row.delete()
                dropped.append(f"{row.name}{row.args}")
            else:
                computed.append(f"{row.name}{row.args}")
        if progress is not None:
            progress(len(due), len(due), "stored")
    _forget_old_jobs(study)
    return {"computed": computed, "dropped": dropped}


def _parse_args(text: str) -> tuple[Any, ...]:
    """Read back `_args_key`: a tuple of ints and strings (run ids, method names)."""
    value = ast.literal_eval(text) if text else ()
    return tuple(value)


def _forget_old_jobs(study: Study) -> None:
    """Delete the study's finished refresh jobs but the newest few (one per data change)."""
    refreshes = Job.objects.filter(study=study, kind=Job.Kind.REFRESH_REPORTS)
    newest = list(refreshes.order_by("-created_at", "-pk").values_list("pk", flat=True)[:KEEP_JOBS])
    refreshes.exclude(pk__in=newest).exclude(
        status__in=(Job.Status.QUEUED, Job.Status.RUNNING)
    ).delete()
