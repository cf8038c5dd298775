"""Researcher report pages that never wait for their statistics: stored reports, refreshed
by a background job after their data change.

A report page (risk, analysis, annotation agreement) asks `page_report`. The newest computed
report of its owner (a study or annotation project) is labelled in `ComputedReport` and kept
where web and worker processes share it: the database by default, Redis where Django's
cache is Redis (`intruder.reports.cache`). When its data version is the current one the page
shows it (cached in the process too). When the data changed since (a new judgment, flag,
rescoring, finished attack run, submitted annotation) the page shows that older report at
once, labelled with when and from how much it was computed, and queues one
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

from intruder.models import Job, Study
from intruder.reports import versions  # noqa: F401  (registers the study as an owner)
from intruder.reports.cache import REPORT_CACHE_SECONDS, cache_is_shared
from intruder.reports.models import ComputedReport
from intruder.reports.registry import OWNERS, OwnerKind, report_page
from intruder.selectors.jobs import no_worker_note
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
    project: Any = None

    @property
    def kind(self) -> OwnerKind:
        return OWNERS["study" if self.study is not None else "project"]

    @property
    def subject(self) -> Any:
        return self.study if self.study is not None else self.project

    @property
    def where(self) -> dict[str, Any]:
        return {self.kind.field: self.subject}

    @property
    def noun(self) -> str:
        """What the label counts (pluralised with an "s")."""
        return self.kind.noun

    def version(self) -> str:
        return self.kind.version(self.subject)

    def count(self) -> int:
        """How much data there is (the label's "from N judgments; M new since")."""
        return self.kind.count(self.subject)

    def refresh_jobs(self) -> QuerySet[Job]:
        jobs = Job.objects.filter(kind=Job.Kind.REFRESH_REPORTS)
        if self.study is not None:
            return jobs.filter(study=self.study)
        return jobs.filter(study__isnull=True, **{f"params__{self.kind.field}": self.subject.pk})

    def local_key(self, name: str, args_key: str, version: str) -> str:
        owner = f"{self.kind.field}{self.subject.pk}"
        return f"intruder-page-report:{owner}:{name}:{args_key}:{version}"


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


def _load(owner: ReportOwner, row: ComputedReport) -> Any:
    """Return a stored report's value, or None where the shared cache lost it (evicted).

    The database's copy is kept in this process's cache too."""
    key = owner.local_key(row.name, row.args, row.data_version)
    value = cache.get(key)
    if value is not None or cache_is_shared():
        return value
    content = ComputedReport.objects.values_list("content", flat=True).get(pk=row.pk)
    value = pickle.loads(content)
    cache.set(key, value, REPORT_CACHE_SECONDS)
    return value


def _keep(owner: ReportOwner, name: str, args: tuple[Any, ...], version: str, value: Any) -> bytes:
    """Keep a computed value where every process reads it; return the database's copy
    (none where the shared cache is the store)."""
    key = owner.local_key(name, _args_key(args), version)
    if cache_is_shared():
        cache.set(key, value, None)  # the store itself: kept until replaced
        return b""
    cache.set(key, value, REPORT_CACHE_SECONDS)  # this process's copy
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _forget(owner: ReportOwner, row: ComputedReport) -> None:
    """Drop a replaced or deleted report's value from the shared cache."""
    if cache_is_shared():
        cache.delete(owner.local_key(row.name, row.args, row.data_version))


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
    page = report_page(name)
    drawn_from = [report_current(owner.study, page.drawn_from, args)] if page.drawn_from else []
    value = page.compute(owner.subject, args, *drawn_from)
    fields = {
        "data_version": version,
        "content": _keep(owner, name, args, version, value),
        "judgments": count,
        "computed_at": timezone.now(),
        "compute_ms": round(1000 * (time.perf_counter() - start)),
    }
    with transaction.atomic():
        row, created = ComputedReport.objects.select_for_update().get_or_create(
            **owner.where, name=name, args=_args_key(args), defaults=fields
        )
        if not created:
            if row.data_version != version:
                _forget(owner, row)
            if requested_before is None or (
                row.requested_at is not None and row.requested_at <= requested_before
            ):
                fields["requested_at"] = None
            ComputedReport.objects.filter(pk=row.pk).update(**fields)
            for field, value_ in fields.items():
                setattr(row, field, value_)
    return value, row


def report_current(study: Study, name: str, args: tuple[Any, ...] = ()) -> Any:
    """Return the report of the study's current data: stored, or computed now (downloads;
    never an older report)."""
    owner = ReportOwner(study=study)
    version = owner.version()
    value = cache.get(owner.local_key(name, _args_key(args), version))
    if value is not None:
        return value
    row = _stored(owner, name, args)
    if row is not None and row.data_version == version:
        value = _load(owner, row)
    return value if value is not None else _compute_and_store(owner, name, args)[0]


def report_prepare(
    *,
    name: str,
    study: Study | None = None,
    project: Any = None,
    args: tuple[Any, ...] = (),
) -> None:
    """Store a page's report for the current data before anyone asks for it, so that its
    first view is a stored one (the end of an attack run, the demo); nothing when it is
    stored, or when INTRUDER_PREPARE_REPORTS is off."""
    if not settings.INTRUDER_PREPARE_REPORTS:
        return
    owner = ReportOwner(study=study, project=project)
    row = _stored(owner, name, args)
    lost = cache_is_shared() and row is not None and _load(owner, row) is None
    if row is None or row.data_version != owner.version() or lost:
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
            params = {owner.kind.field: owner.subject.pk}
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
    project: Any = None,
    args: tuple[Any, ...] = (),
    user: Any = None,
) -> PageReport:
    """Return what a report page shows without computing in the request (but a first view).

    Current report: from this process's cache or the shared store. Older report: returned
    labelled, the row marked requested and the refresh job queued (or the one under way
    returned). No report yet (or one the shared cache lost): computed now and stored.
    """
    owner = ReportOwner(study=study, project=project)
    version = owner.version()
    row = _stored(owner, name, args)
    value = _load(owner, row) if row is not None else None
    if value is None:  # a first view: nothing to show but the report itself
        value, row = _compute_and_store(owner, name, args)
        return PageReport(value, True, row.computed_at, row.judgments, row.judgments, owner.noun)
    if row.data_version == version:
        return PageReport(value, True, row.computed_at, row.judgments, row.judgments, owner.noun)
    # Always the newest request: the job keeps a report requested while it was computing.
    ComputedReport.objects.filter(pk=row.pk).update(requested_at=timezone.now())
    job, _ = reports_refresh_start(owner=owner, user=user)
    job.waiting_note = no_worker_note(job)  # "no worker has picked this job up", if so
    return PageReport(value, False, row.computed_at, row.judgments, owner.count(), owner.noun, job)


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
            except report_page(row.name).gone:
                _forget(owner, row)
                row.delete()
                dropped.append(f"{row.name}{row.args}")
            else:
                computed.append(f"{row.name}{row.args}")
        if progress is not None:
            progress(len(due), len(due), "stored")
    _forget_old_jobs(owner)
    return {"computed": computed, "dropped": dropped}


def reports_refresh_job(*, job: Job, progress: Progress) -> dict[str, Any]:
    """Run a `refresh_reports` job: of its study, or of the owner in its params (one deleted
    since has nothing to refresh)."""
    if job.study is not None:
        return reports_refresh(owner=ReportOwner(study=job.study), progress=progress)
    project = OWNERS["project"].load(job.params.get("project"))
    if project is None:
        return {"computed": [], "dropped": []}
    return reports_refresh(owner=ReportOwner(project=project), progress=progress)


def _forget_old_jobs(owner: ReportOwner) -> None:
    """Delete the owner's finished refresh jobs but the newest few (one per data change)."""
    refreshes = owner.refresh_jobs()
    newest = list(refreshes.order_by("-created_at", "-pk").values_list("pk", flat=True)[:KEEP_JOBS])
    active = (Job.Status.QUEUED, Job.Status.RUNNING)
    refreshes.exclude(pk__in=newest).exclude(status__in=active).delete()
