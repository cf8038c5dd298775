"""Background jobs: enqueue, claim, run with progress, fail, retry, recover from crashes.

Two backends, chosen by configuration alone (`settings.INTRUDER_JOB_BACKEND`):

- "db" (default): `manage.py run_worker` polls the Job table. A claim is atomic: with
  `SELECT ... FOR UPDATE SKIP LOCKED` where the database supports it (PostgreSQL), otherwise
  (SQLite) with a conditional `UPDATE ... WHERE status='queued'` that only one worker can win.
- "rq": `job_enqueue` also pushes the job id onto a Redis queue (RQ), and `run_worker` serves
  that queue from any number of hosts. RQ is imported only when chosen.

The registry of job kinds lives here too: `intruder.tasks` registers one runner per
`Job.Kind` (imported when the app is ready), and each kind has a start service beside the
work it does (`anonymization_job_start`, `attack_run_start`, ...), so imports point one way:
views -> start services -> this queue, and tasks -> services -> this queue; never back.

The Job row stays the source of truth in both: status, progress, error and attempts live
there, and `job_execute` claims the row atomically, so a job is never run twice at once.
Job functions write their results incrementally, so a crashed or failed job that is retried
resumes from what it already stored.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import (
    DatabaseError,
    IntegrityError,
    close_old_connections,
    connection,
    transaction,
)
from django.db.models import F
from django.utils import timezone

from intruder.exceptions import IntruderError
from intruder.models import JOB_PARAM_SCOPES, Job, Study

logger = logging.getLogger(__name__)

Progress = Callable[..., None]
TaskFunction = Callable[[Job, Progress], dict[str, Any] | None]

# kind -> function(job, progress) -> result summary; filled by `intruder.tasks`.
TASKS: dict[str, TaskFunction] = {}


# A worker draining the queue (--once) gives up after this many database errors in a row;
# the long-running worker never does.
DB_ERROR_RETRIES = 5


class JobError(IntruderError):
    """An operation on a job that its state does not allow."""

    api_field = "status"


class JobAlreadyActive(JobError):
    """A job of this kind is already queued or running for the study; `job` is that one."""

    def __init__(self, job: Job | None) -> None:
        super().__init__(
            f"a {job.kind} job ({job.pk}) is already {job.status} for this study"
            if job is not None
            else "a job of this kind is already active for this study"
        )
        self.job = job


class JobCancelled(IntruderError):
    """Raised inside a running job function when its job was cancelled."""

    status_code = 409


ACTIVE_STATUSES = (Job.Status.QUEUED, Job.Status.RUNNING)


class ImproperlyConfiguredBackend(IntruderError):
    """INTRUDER_JOB_BACKEND names no known backend."""

    status_code = 503


class UnknownTaskError(IntruderError):
    """No job function is registered under this kind."""


def register_task(kind: str) -> Callable[[TaskFunction], TaskFunction]:
    """Register the decorated function as the runner of jobs of `kind`."""

    def decorator(function: TaskFunction) -> TaskFunction:
        TASKS[kind] = function
        return function

    return decorator


def get_task(kind: str) -> TaskFunction:
    """Return the function registered for `kind`."""
    try:
        return TASKS[kind]
    except KeyError:
        raise UnknownTaskError(f"no job kind {kind!r}; known: {sorted(TASKS)}") from None


def worker_name() -> str:
    """Return this process's worker identity, host:pid."""
    return f"{socket.gethostname()}:{os.getpid()}"


def process_alive(worker: str) -> bool:
    """Return whether host:pid (`worker_name`) names a live process; another host's (or a
    name that is not host:pid) cannot be checked from here, so it counts as alive."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def worker_alive(worker: str, heartbeat_at: Any, stale_after: timedelta) -> bool:
    """The one liveness rule of the job queue and of an import's crash marker.

    A worker is alive while its heartbeat is younger than `stale_after` and, when it ran on
    this host, its process still exists: a crash here is seen at once, one on another host
    by its silence. (A host name is taken to name one process namespace.)
    """
    if heartbeat_at is None or heartbeat_at < timezone.now() - stale_after:
        return False
    return process_alive(worker)


def job_backend() -> str:
    """Return the configured backend name ("db" or "rq")."""
    backend = getattr(settings, "INTRUDER_JOB_BACKEND", "db")
    if backend not in ("db", "rq"):
        raise ImproperlyConfiguredBackend(
            f"INTRUDER_JOB_BACKEND must be 'db' or 'rq', not {backend!r}"
        )
    return backend


def rq_queue(name: str | None = None) -> Any:
    """Return the RQ queue `name` (default: the main one); imports rq and redis only here."""
    try:
        import redis
        import rq
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise ImproperlyConfiguredBackend(
            "INTRUDER_JOB_BACKEND='rq' needs the optional extra: pip install -e '.[rq]'"
        ) from exc
    connection_ = redis.Redis.from_url(settings.INTRUDER_REDIS_URL)
    return rq.Queue(name or settings.INTRUDER_RQ_QUEUE, connection=connection_)


def queue_name(job: Job) -> str:
    """Return the RQ queue of a job: the GPU queue for jobs that want one, where it is set."""
    if job.params.get("gpu") and settings.INTRUDER_RQ_GPU_QUEUE:
        return settings.INTRUDER_RQ_GPU_QUEUE
    return settings.INTRUDER_RQ_QUEUE


def _dispatch(job: Job) -> None:
    """Hand a queued job to the backend (the db backend needs nothing: workers poll)."""
    if job_backend() == "rq":
        name = queue_name(job)
        # Enqueue after commit so the worker never looks for a row it cannot see yet.
        transaction.on_commit(
            lambda: rq_queue(name).enqueue(
                "intruder.services.jobs.job_execute", job.pk, job_timeout=-1
            )
        )


def _active_twin(job: Job) -> Job | None:
    """Return the queued or running job that `job` may not run beside, if any."""
    twins = Job.objects.filter(kind=job.kind, status__in=ACTIVE_STATUSES).exclude(pk=job.pk)
    if job.study_id is not None:
        return twins.filter(study=job.study_id).first()
    keys = JOB_PARAM_SCOPES.get(job.kind)
    if keys is None:
        return None
    return twins.filter(**{f"params__{key}": job.params.get(key) for key in keys}).first()


def job_enqueue(
    *,
    kind: str,
    study: Study | None = None,
    params: dict[str, Any] | None = None,
    created_by: Any = None,
) -> Job:
    """Create a queued job of a registered kind and hand it to the configured backend.

    Raises JobAlreadyActive when the study has a queued or running job of this kind, or a
    job of no study has a twin at work on the same thing (JOB_PARAM_SCOPES): the database
    refuses a second one, so a double click cannot queue the same work twice.
    """
    get_task(kind)  # unknown kinds fail here, not later in a worker
    job = Job(kind=kind, study=study, params=params or {}, created_by=created_by)
    # The registry, just asked, is the list of kinds that can run (tests add their own).
    job.full_clean(exclude=["kind"], validate_constraints=False)
    try:
        with transaction.atomic():
            job.save()
    except IntegrityError:
        raise JobAlreadyActive(_active_twin(job)) from None
    _dispatch(job)
    return job


def job_start(
    *,
    kind: str,
    study: Study,
    params: dict[str, Any] | None = None,
    created_by: Any = None,
) -> tuple[Job, bool]:
    """Queue a job of `kind` for the study unless one is queued or running; (job, created).

    The kinds' start services build on this. A double click racing this one loses at the
    database's one-active-job constraint and gets the winner's job back.
    """
    active = Job.objects.filter(study=study, kind=kind, status__in=ACTIVE_STATUSES).first()
    if active is not None:
        return active, False
    try:
        return job_enqueue(kind=kind, study=study, params=params, created_by=created_by), True
    except JobAlreadyActive as busy:
        if busy.job is None:  # the winner finished in between: nothing to hand back
            raise
        return busy.job, False


def job_cancel(*, job: Job) -> Job:
    """Cancel a queued or running job; a running one stops at its next progress report.

    What the job stored so far stays (results are written incrementally); retrying is not
    offered for a cancelled job: start a new one.
    """
    changed = Job.objects.filter(pk=job.pk, status__in=ACTIVE_STATUSES).update(
        status=Job.Status.CANCELLED, message="cancelled", finished_at=timezone.now()
    )
    job.refresh_from_db()
    if not changed and job.status != Job.Status.CANCELLED:
        raise JobError(
            f"only queued or running jobs can be cancelled; job {job.pk} is {job.status}"
        )
    return job


def _claim_by_update(job_id: int, worker: str) -> bool:
    """Move one queued job to running; return whether this caller won it."""
    now = timezone.now()
    won = Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING,
        attempts=F("attempts") + 1,
        started_at=now,
        heartbeat_at=now,
        finished_at=None,
        worker=worker,
        error="",
    )
    return won == 1


def job_claim_next(*, worker: str | None = None, kinds: Iterable[str] | None = None) -> Job | None:
    """Claim the oldest queued job for this worker, or return None when there is none."""
    worker = worker or worker_name()
    queued = Job.objects.filter(status=Job.Status.QUEUED).order_by("created_at", "id")
    if kinds is not None:
        queued = queued.filter(kind__in=list(kinds))
    if connection.features.has_select_for_update_skip_locked:
        with transaction.atomic():
            job = queued.select_for_update(skip_locked=True).first()
            if job is None:
                return None
            _claim_by_update(job.pk, worker)
        job.refresh_from_db()
        return job
    # SQLite: no row locks; the conditional UPDATE is the claim, a lost race tries the next.
    for job_id in queued.values_list("pk", flat=True)[:20]:
        if _claim_by_update(job_id, worker):
            return Job.objects.get(pk=job_id)
    return None


class JobProgress:
    """Progress callback handed to job functions: progress(done, total, message="").

    Each call stores the counts and refreshes the heartbeat, so the status endpoint shows
    live progress and a crashed worker is recognised by its stale heartbeat.
    """

    def __init__(self, job: Job, echo: Callable[[int, int, str], None] | None = None) -> None:
        self.job = job
        self.echo = echo  # e.g. a CLI progress bar that mirrors the stored progress

    def __call__(self, done: int, total: int, message: str = "") -> None:
        now = timezone.now()
        fields: dict[str, Any] = {
            "progress_done": max(0, int(done)),
            "progress_total": max(0, int(total)),
            "heartbeat_at": now,
        }
        if message:
            fields["message"] = message[:500]
        if not Job.objects.filter(pk=self.job.pk, status=Job.Status.RUNNING).update(**fields):
            # Cancelled (or taken away as stale): stop here; stored results stay.
            raise JobCancelled(f"job {self.job.pk} is no longer running")
        for name, value in fields.items():
            setattr(self.job, name, value)
        if self.echo is not None:
            self.echo(int(done), int(total), message)

    def cancelled(self) -> bool:
        """Return whether the job was cancelled (or taken away) meanwhile: for work that waits
        long between progress reports (an LLM endpoint) to stop without waiting for one."""
        return not Job.objects.filter(pk=self.job.pk, status=Job.Status.RUNNING).exists()


class _Heartbeat:
    """Refresh a running job's heartbeat from a side thread (e.g. during a long model load)."""

    def __init__(self, job_id: int, interval_s: float) -> None:
        self.job_id = job_id
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self) -> None:
        try:
            while not self._stop.wait(self.interval_s):
                try:
                    Job.objects.filter(pk=self.job_id, status=Job.Status.RUNNING).update(
                        heartbeat_at=timezone.now()
                    )
                except DatabaseError:  # a locked database skips one beat, not all of them
                    logger.warning("heartbeat of job %s failed", self.job_id, exc_info=True)
        finally:
            connection.close()

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def job_run_claimed(
    job: Job,
    *,
    heartbeat_interval_s: float | None = None,
    echo: Callable[[int, int, str], None] | None = None,
) -> Job:
    """Run a job this process has claimed and record success or failure with its traceback.

    `echo(done, total, message)` also receives every progress call (a CLI progress bar).
    """
    progress = JobProgress(job, echo)
    try:
        function = get_task(job.kind)
        if heartbeat_interval_s:
            with _Heartbeat(job.pk, heartbeat_interval_s):
                result = function(job, progress)
        else:
            result = function(job, progress)
    except JobCancelled:
        logger.info("job %s (%s) stopped: cancelled", job.pk, job.kind)
    except Exception as exc:
        logger.exception("job %s (%s) failed", job.pk, job.kind)
        Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
            status=Job.Status.FAILED,
            error=traceback.format_exc(),
            message=f"failed: {type(exc).__name__}: {exc}"[:500],
            finished_at=timezone.now(),
        )
    else:
        Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
            status=Job.Status.SUCCEEDED,
            result=result or {},
            finished_at=timezone.now(),
            heartbeat_at=timezone.now(),
        )
    job.refresh_from_db()
    return job


def job_execute(
    job_id: int,
    *,
    heartbeat_interval_s: float | None = 30.0,
    echo: Callable[[int, int, str], None] | None = None,
) -> Job | None:
    """Claim one specific job and run it; the entry point of RQ workers and inline runs.

    Return None when the job is not queued (another worker has it, or it is finished).
    """
    if not _claim_by_update(job_id, worker_name()):
        return None
    job = Job.objects.get(pk=job_id)
    return job_run_claimed(job, heartbeat_interval_s=heartbeat_interval_s, echo=echo)


def job_run_or_follow(
    job_id: int,
    *,
    echo: Callable[[int, int, str], None] | None = None,
    poll_s: float = 0.5,
) -> Job:
    """Run a job here, or follow it to its end when a worker claimed it first; return it.

    A command that queues a job on a site whose workers watch the queue (RQ, or a polling
    worker) races them for it: whoever claims it runs it, and the command must then wait
    for the worker's result instead of reading a job that is still running.
    """
    if job_execute(job_id, echo=echo) is not None:
        return Job.objects.get(pk=job_id)
    while True:
        job = Job.objects.get(pk=job_id)
        if echo is not None:
            echo(job.progress_done, job.progress_total, job.message)
        if job.status not in (Job.Status.QUEUED, Job.Status.RUNNING):
            return job
        time.sleep(poll_s)


def job_retry(*, job: Job) -> Job:
    """Queue a failed job again; its function skips whatever the earlier attempt stored."""
    try:
        with transaction.atomic():
            updated = Job.objects.filter(pk=job.pk, status=Job.Status.FAILED).update(
                status=Job.Status.QUEUED,
                message="queued for retry",
                finished_at=None,
                worker="",
            )
    except IntegrityError:
        raise JobAlreadyActive(_active_twin(job)) from None
    if not updated:
        job.refresh_from_db()
        raise JobError(f"only failed jobs can be retried; job {job.pk} is {job.status}")
    job.refresh_from_db()
    _dispatch(job)
    return job


def jobs_requeue_stale(
    *, stale_after: timedelta | None = None, max_attempts: int | None = None
) -> list[int]:
    """Re-queue running jobs whose worker is not alive (`worker_alive`: it stopped beating, or
    its process on this host is gone); fail those out of attempts.

    Return the ids of the jobs re-queued.
    """
    if stale_after is None:
        stale_after = timedelta(minutes=settings.INTRUDER_JOB_STALE_MINUTES)
    if max_attempts is None:
        max_attempts = settings.INTRUDER_JOB_MAX_ATTEMPTS
    running = Job.objects.filter(status=Job.Status.RUNNING)
    stale = [job for job in running if not worker_alive(job.worker, job.heartbeat_at, stale_after)]
    requeued: list[int] = []
    for job in stale:
        # Only if nothing moved since it was judged: a live worker's beat keeps its job.
        unchanged = {"pk": job.pk, "status": Job.Status.RUNNING, "heartbeat_at": job.heartbeat_at}
        if job.attempts >= max_attempts:
            Job.objects.filter(**unchanged).update(
                status=Job.Status.FAILED,
                error=f"worker {job.worker} stopped responding; {job.attempts} attempts used",
                message="failed: worker lost, no attempts left",
                finished_at=timezone.now(),
            )
            continue
        moved = Job.objects.filter(**unchanged).update(
            status=Job.Status.QUEUED,
            message=f"re-queued: worker {job.worker} stopped responding",
            worker="",
        )
        if moved:
            requeued.append(job.pk)
            job.refresh_from_db()
            _dispatch(job)
    return requeued


def run_db_worker(
    *,
    once: bool = False,
    poll_interval_s: float = 1.0,
    heartbeat_interval_s: float = 30.0,
    max_jobs: int | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    log: Callable[[str], None] = logger.info,
    periodic: Callable[[], str | None] | None = None,
    periodic_interval_s: float = 60.0,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Poll the Job table and run jobs until stopped; return how many jobs ran.

    `once` drains the queue and returns; otherwise it sleeps `poll_interval_s` when idle.
    Stale jobs of crashed workers are re-queued on every idle round. `periodic` (e.g. the
    sweep that releases expired assignments) runs first and then every `periodic_interval_s`
    between jobs; a line it returns is logged.
    """
    worker = worker_name()
    ran = db_errors = 0
    periodic_due = clock()
    while not should_stop():
        if not connection.in_atomic_block:
            # Drop connections the database closed while we slept (not inside a test's
            # transaction, where closing would end the test's connection).
            close_old_connections()
        if periodic is not None and clock() >= periodic_due:
            periodic_due = clock() + periodic_interval_s
            try:
                line = periodic()
            except Exception:  # a failed sweep must not stop the jobs; it runs again later
                logger.exception("periodic task failed")
            else:
                if line:
                    log(line)
        try:
            requeued = jobs_requeue_stale()
            if requeued:
                log(f"re-queued stale jobs {requeued}")
            job = job_claim_next(worker=worker)
            if job is not None:
                log(f"running job {job.pk} ({job.kind}, attempt {job.attempts})")
                job = job_run_claimed(job, heartbeat_interval_s=heartbeat_interval_s)
                log(f"job {job.pk} {job.status}: {job.message}")
        except DatabaseError as exc:
            # "database is locked" (SQLite under a long write) or a dropped connection: the
            # worker lives on and claims again. A job it was running keeps beating from the
            # heartbeat thread or goes stale and is re-queued; its stored results survive.
            db_errors += 1
            logger.exception("database error in the worker loop")
            log(f"database error ({type(exc).__name__}: {exc}); retrying")
            if once and db_errors >= DB_ERROR_RETRIES:
                raise
            time.sleep(min(poll_interval_s * db_errors, 30.0))
            continue
        db_errors = 0
        if job is None:
            if once:
                break
            time.sleep(poll_interval_s)
            continue
        ran += 1
        if max_jobs is not None and ran >= max_jobs:
            break
    return ran


def run_rq_worker(*, burst: bool = False, queues: Iterable[str] | None = None) -> None:
    """Serve the RQ queue in this (Django-configured) process.

    SimpleWorker runs jobs in this process instead of a fork per job, so the model stays
    loaded between jobs and no database connection is shared across a fork. Its maintenance
    round (at start, then every half stale period) re-queues the jobs of crashed workers,
    which goes back onto the queue: a killed worker's job is retried by another worker.
    `queues` are served in order (a GPU host: the GPU queue first); default: the main queue.
    """
    import rq

    class Worker(rq.SimpleWorker):
        def run_maintenance_tasks(self) -> None:
            super().run_maintenance_tasks()
            try:
                requeued = jobs_requeue_stale()
            except DatabaseError:  # the next round tries again
                logger.exception("re-queueing stale jobs failed")
            else:
                if requeued:
                    logger.info("re-queued stale jobs %s", requeued)

    served = [rq_queue(name) for name in (queues or [settings.INTRUDER_RQ_QUEUE])]
    queue = served[0]
    interval = max(1, int(settings.INTRUDER_JOB_STALE_MINUTES * 30))
    worker = Worker(
        served,
        connection=queue.connection,
        name=worker_name(),
        maintenance_interval=interval,
        # An idle worker wakes from its blocking dequeue every worker_ttl - 15 s: once per
        # maintenance round.
        worker_ttl=max(interval + 15, 30),
    )
    worker.work(burst=burst)
