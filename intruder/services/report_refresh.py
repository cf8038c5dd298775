"""Researcher report pages that never wait for their statistics: stored reports, refreshed
by a background job after their data change.

A report page (risk, analysis, annotation agreement) asks `page_report`. The newest computed
report of its study or annotation project lives in `ComputedReport`, which web and worker
processes share (the default cache is per process). When its data version is the current
one the page shows it (cached in the process too). When the data changed since (a new
judgment, flag, rescoring, finished attack run, submitted annotation) the page shows that
older report at once, labelled with when and from how much it was computed, and queues one
`refresh_reports` job; the page polls the job and reloads when the fresh one is stored. A
burst of changes queues one job: the database allows one queued or running job per study
(or project) and kind, and the job computes from the data as they are when it runs. An
attack run's job stores its risk report before it ends, and the demo stores its pages, so
that only a report nobody prepared (an analysis or agreement page's very first view) is
computed in the request.

Downloads use `report_current`, which never returns an older report.
"""

from __future__ import annotations

import ast
import pickle
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from intruder.annotation.models import Project, Task
from intruder.models import ComputedReport, Job, Judgment, Study
from intruder.selectors.jobs import no_worker_note
from intruder.selectors.report_cache import (
    REPORT_CACHE_SECONDS,
    project_data_version,
    study_data_version,
)
from intruder.selectors.report_pages import DRAWN_FROM, GONE_ERRORS, PAGE_REPORTS
from intruder.services.jobs import JobAlreadyActive, Progress, job_enqueue, job_start

# Rounds of the job: data that keep changing while it computes get at most this many passes
# (the page queues another job when it finds the result behind again).
MAX_ROUNDS = 3
# Refresh jobs kept per study or project (for the job list); older finished ones are deleted.
KEEP_JOBS = 3


@dataclass(frozen=True)
class ReportOwner:
    """The study or annotation project whose data a stored report is computed from."""

    study: Study | None = None
    project: Project | None = None

    @property
    def where(self) -> dict[str, Any]:
        return {"study": self.study} if self.study is not None else {"project": self.project}

    @property
    def subject(self) -> Study | Project:
        return self.study if self.study is not None else self.project

    @property
    def noun(self) -> str:
        """What the label counts (pluralised with an "s")."""
        return "judgment" if self.study is not None else "submitted annotation"

    def version(self) -> str:
        if self.study is not None:
            return study_data_version(self.study)
        return project_data_version(self.project)

    def count(self) -> int:
        """How much data there is (the label's "from N judgments; M new since")."""
        if self.study is not None:
            return Judgment.objects.filter(participant__study=self.study).count()
        from intruder.annotation.adjudication import GOLD_LAYER

        tasks = Task.objects.filter(document__project=self.project, status=Task.Status.SUBMITTED)
        return tasks.exclude(annotator__name=GOLD_LAYER).count()

    def refresh_jobs(self) -> QuerySet[Job]:
        jobs = Job.objects.filter(kind=Job.Kind.REFRESH_REPORTS)
        if self.study is not None:
            return jobs.filter(study=self.study)
        return jobs.filter(study__isnull=True, params__project=self.project.pk)

    def local_key(self, name: str, args: tuple[Any, ...], version: str) -> str:
        owner = f"study{self.study.pk}" if self.study is not None else f"project{self.project.pk}"
        return f"intruder-page-report:{owner}:{name}:{_args_key(args)}:{version}"


@dataclass
class PageReport:
    """What a report page shows: the report, whether it is current, and how far behind."""

    value: Any
    current: bool
    computed_at: datetime
    count_then: int
    count_now: int
    noun: str
    job: Job | None = None

    @property
    def count_new(self) -> int:
        return max(0, self.count_now - self.count_then)

    @property
    def jobs(self) -> list[Job]:
        """The refresh job as a job list (the page's progress rows)."""
        return [self.job] if self.job is not None else []


def _args_key(args: tuple[Any, ...]) -> str:
    return repr(tuple(args))


def _parse_args(text: str) -> tuple[Any, ...]:
    """Read back `_args_key`: a tuple of ints and strings (run ids, method names)."""
    return tuple(ast.literal_eval(text)) if text else ()


def _stored(owner: ReportOwner, name: str, args: tuple[Any, ...]) -> ComputedReport | None:
    rows = ComputedReport.objects.filter(**owner.where, name=name, args=_args_key(args))
    return rows.defer("content").first()


def _load(row: ComputedReport, key: str | None = None) -> Any:
    """Return a stored report's value (kept in this process's cache under `key`, if given)."""
    content = ComputedReport.objects.values_list("content", flat=True).get(pk=row.pk)
    value = pickle.loads(content)
    if key is not None:
        cache.set(key, value, REPORT_CACHE_SECONDS)
    return value


def _compute_and_store(
    owner: ReportOwner,
    name: str,
    args: tuple[Any, ...],
    *,
    requested_before: datetime | None = None,
) -> tuple[Any, ComputedReport]:
    """Compute a report from the data as they are now and store it (replacing the older
    one). A page request newer than `requested_before` stays requested."""
    version = owner.version()
    count = owner.count()
    start = time.perf_counter()
    source = DRAWN_FROM.get(name)
    drawn_from = [report_current(owner.study, source, args)] if source else []
    value = PAGE_REPORTS[name](owner.subject, args, *drawn_from)
    fields = {
        "data_version": version,
        "content": pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL),
        "judgments": count,
        "computed_at": timezone.now(),
        "compute_ms": round(1000 * (time.perf_counter() - start)),
    }
    with transaction.atomic():
        row, created = ComputedReport.objects.select_for_update().get_or_create(
            **owner.where, name=name, args=_args_key(args), defaults=fields
        )
        if not created:
            if requested_before is None or (
                row.requested_at is not None and row.requested_at <= requested_before
            ):
                fields["requested_at"] = None
            ComputedReport.objects.filter(pk=row.pk).update(**fields)
            for field, value_ in fields.items():
                setattr(row, field, value_)
    cache.set(owner.local_key(name, args, version), value, REPORT_CACHE_SECONDS)
    return value, row


def report_current(study: Study, name: str, args: tuple[Any, ...] = ()) -> Any:
    """Return the report of the study's current data: stored, or computed now (downloads;
    never an older report)."""
    owner = ReportOwner(study=study)
    version = owner.version()
    key = owner.local_key(name, args, version)
    value = cache.get(key)
    if value is not None:
        return value
    row = _stored(owner, name, args)
    if row is not None and row.data_version == version:
        return _load(row, key)
    return _compute_and_store(owner, name, args)[0]


def report_prepare(
    *,
    name: str,
    study: Study | None = None,
    project: Project | None = None,
    args: tuple[Any, ...] = (),
) -> None:
    """Store a page's report for the current data before anyone asks for it, so that its
    first view is a stored one (the end of an attack run, the demo); nothing when it is
    stored, or when INTRUDER_PREPARE_REPORTS is off."""
    if not settings.INTRUDER_PREPARE_REPORTS:
        return
    owner = ReportOwner(study=study, project=project)
    row = _stored(owner, name, args)
    if row is None or row.data_version != owner.version():
        _compute_and_store(owner, name, args)


def reports_refresh_start(*, owner: ReportOwner, user: Any = None) -> tuple[Job, bool]:
    """Queue the refresh of a study's or project's reports unless one is queued or running;
    return (job, created)."""
    if owner.study is not None:
        return job_start(kind=Job.Kind.REFRESH_REPORTS, study=owner.study, created_by=user)
    active = owner.refresh_jobs().filter(status__in=(Job.Status.QUEUED, Job.Status.RUNNING))
    for _ in range(2):  # an active one that finishes in between: queue anew
        job = active.first()
        if job is not None:
            return job, False
        try:
            params = {"project": owner.project.pk}
            kind = Job.Kind.REFRESH_REPORTS
            return job_enqueue(kind=kind, params=params, created_by=user), True
        except JobAlreadyActive as busy:
            if busy.job is not None:
                return busy.job, False
    raise JobAlreadyActive(None)


def page_report(
    *,
    name: str,
    study: Study | None = None,
    project: Project | None = None,
    args: tuple[Any, ...] = (),
    user: Any = None,
) -> PageReport:
    """Return what a report page shows without computing in the request (but a first view).

    Current report: from this process's cache or the shared store. Older report: returned
    labelled, the row marked requested and the refresh job queued (or the one under way
    returned). No report yet: computed now and stored.
    """
    owner = ReportOwner(study=study, project=project)
    version = owner.version()
    key = owner.local_key(name, args, version)
    value = cache.get(key)
    row = _stored(owner, name, args)
    if row is None:  # a first view: nothing to show but the report itself
        value, row = _compute_and_store(owner, name, args)
        return PageReport(value, True, row.computed_at, row.judgments, row.judgments, owner.noun)
    if row.data_version == version:
        if value is None:
            value = _load(row, key)
        return PageReport(value, True, row.computed_at, row.judgments, row.judgments, owner.noun)
    # Always the newest request: the job keeps a report requested while it was computing.
    ComputedReport.objects.filter(pk=row.pk).update(requested_at=timezone.now())
    job, _ = reports_refresh_start(owner=owner, user=user)
    job.waiting_note = no_worker_note(job)  # "no worker has picked this job up", if so
    return PageReport(
        _load(row), False, row.computed_at, row.judgments, owner.count(), owner.noun, job
    )


def reports_refresh(*, owner: ReportOwner, progress: Progress | None = None) -> dict[str, Any]:
    """Compute every requested report of the owner that is behind its data (the job's work).

    Runs up to MAX_ROUNDS passes, so changes that land while it computes are caught up with;
    a report of a row that is gone (a deleted run) is dropped.
    """
    computed: list[str] = []
    dropped: list[str] = []
    for _ in range(MAX_ROUNDS):
        version = owner.version()
        due = list(
            ComputedReport.objects.filter(**owner.where, requested_at__isnull=False)
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
                _compute_and_store(owner, row.name, args, requested_before=row.requested_at)
            except GONE_ERRORS:
                row.delete()
                dropped.append(f"{row.name}{row.args}")
            else:
                computed.append(f"{row.name}{row.args}")
        if progress is not None:
            progress(len(due), len(due), "stored")
    _forget_old_jobs(owner)
    return {"computed": computed, "dropped": dropped}


def reports_refresh_job(*, job: Job, progress: Progress) -> dict[str, Any]:
    """Run a `refresh_reports` job: of its study, or of the annotation project in its params
    (a project deleted since has nothing to refresh)."""
    if job.study is not None:
        return reports_refresh(owner=ReportOwner(study=job.study), progress=progress)
    project = Project.objects.filter(pk=job.params.get("project")).first()
    if project is None:
        return {"computed": [], "dropped": []}
    return reports_refresh(owner=ReportOwner(project=project), progress=progress)


def _forget_old_jobs(owner: ReportOwner) -> None:
    """Delete the owner's finished refresh jobs but the newest few (one per data change)."""
    refreshes = owner.refresh_jobs()
    newest = list(refreshes.order_by("-created_at", "-pk").values_list("pk", flat=True)[:KEEP_JOBS])
    active = (Job.Status.QUEUED, Job.Status.RUNNING)
    refreshes.exclude(pk__in=newest).exclude(status__in=active).delete()
