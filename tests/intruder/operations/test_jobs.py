"""Background jobs: claim, progress, failure, retry, resume after a crash, stale recovery."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from intruder.models import AnonymizedText, Job
from intruder.services import anonymization, jobs
from tests.intruder.factories import make_description, make_job, make_study
from tests.intruder.fake_anonymizer import FakeAnonymizer

pytestmark = pytest.mark.django_db


@pytest.fixture
def registered_task():
    """Register test job kinds and remove them afterwards."""
    added: list[str] = []

    def register(kind: str, function) -> None:
        jobs.register_task(kind)(function)
        added.append(kind)

    yield register
    for kind in added:
        jobs.TASKS.pop(kind, None)


@pytest.fixture
def fake_anonymizer():
    fake = FakeAnonymizer()
    previous = anonymization.set_anonymizer(fake)
    yield fake
    anonymization.set_anonymizer(previous)


def study_with_descriptions(n: int):
    study = make_study()
    for i in range(n):
        make_description(
            study=study, text=f"Text {i} tells how she met Corvin and Ysolde in Brackwater."
        )
    return study


def test_enqueue_refuses_an_unknown_kind() -> None:
    with pytest.raises(jobs.UnknownTaskError):
        jobs.job_enqueue(kind="no-such-kind")
    assert not Job.objects.exists()


def test_claim_takes_the_oldest_queued_job_and_counts_the_attempt() -> None:
    first = make_job()
    second = make_job()
    make_job(status=Job.Status.FAILED)
    claimed = jobs.job_claim_next(worker="w1")
    assert claimed.pk == first.pk
    assert (claimed.status, claimed.attempts, claimed.worker) == ("running", 1, "w1")
    assert claimed.heartbeat_at is not None
    assert jobs.job_claim_next(worker="w2").pk == second.pk
    assert jobs.job_claim_next(worker="w3") is None


def test_claim_can_be_won_only_once() -> None:
    job = make_job()
    assert jobs._claim_by_update(job.pk, "w1") is True
    assert jobs._claim_by_update(job.pk, "w2") is False
    job.refresh_from_db()
    assert (job.worker, job.attempts) == ("w1", 1)


def test_claim_filters_by_kind() -> None:
    make_job(kind="anonymize_study")
    assert jobs.job_claim_next(worker="w", kinds=["other"]) is None
    assert jobs.job_claim_next(worker="w", kinds=["anonymize_study"]) is not None


def test_progress_is_stored_as_the_job_runs(registered_task) -> None:
    seen: list[tuple[int, int, str]] = []

    def counting(job, progress):
        for done in range(1, 4):
            progress(done, 3, f"step {done}")
            row = Job.objects.get(pk=job.pk)
            seen.append((row.progress_done, row.progress_total, row.message))
        return {"steps": 3}

    registered_task("counting", counting)
    job = jobs.job_enqueue(kind="counting")
    finished = jobs.job_execute(job.pk, heartbeat_interval_s=None)
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert finished.status == "succeeded"
    assert finished.result == {"steps": 3}
    assert finished.progress_pct == 100.0
    assert finished.finished_at is not None


def test_failure_is_recorded_with_its_traceback(registered_task) -> None:
    def broken(job, progress):
        progress(1, 2)
        raise ValueError("the model file is corrupt")

    registered_task("broken", broken)
    job = jobs.job_execute(jobs.job_enqueue(kind="broken").pk, heartbeat_interval_s=None)
    assert job.status == "failed"
    assert "Traceback" in job.error and "ValueError: the model file is corrupt" in job.error
    assert job.message == "failed: ValueError: the model file is corrupt"
    assert job.progress_done == 1


def test_execute_does_not_run_a_job_that_is_not_queued(registered_task) -> None:
    calls: list[int] = []
    registered_task("once", lambda job, progress: calls.append(job.pk))
    job = make_job(kind="once", status=Job.Status.RUNNING)
    assert jobs.job_execute(job.pk, heartbeat_interval_s=None) is None
    assert calls == []


def test_a_job_a_worker_claimed_first_is_followed_to_its_end(registered_task, monkeypatch) -> None:
    """A command that queued a job on a site with workers waits for the worker's run (the
    served rehearsal's `risk_report --attack` found it reading a job still running)."""
    calls: list[int] = []
    registered_task("raced", lambda job, progress: calls.append(job.pk))
    job = make_job(kind="raced", status=Job.Status.RUNNING)
    seen: list[tuple[int, int, str]] = []

    def worker_finishes(seconds: float) -> None:  # the other worker's run ends meanwhile
        Job.objects.filter(pk=job.pk).update(
            status=Job.Status.SUCCEEDED, progress_done=3, progress_total=3, message="done"
        )

    monkeypatch.setattr(jobs.time, "sleep", worker_finishes)

    followed = jobs.job_run_or_follow(job.pk, echo=lambda *step: seen.append(step))

    assert followed.status == Job.Status.SUCCEEDED and calls == []  # not run twice
    assert seen[-1] == (3, 3, "done")


def test_a_queued_job_is_run_here_when_no_worker_took_it(registered_task) -> None:
    calls: list[int] = []
    registered_task("inline", lambda job, progress: calls.append(job.pk))
    job = make_job(kind="inline")

    assert jobs.job_run_or_follow(job.pk).status == Job.Status.SUCCEEDED
    assert calls == [job.pk]


def test_only_failed_jobs_can_be_retried() -> None:
    for status in (Job.Status.QUEUED, Job.Status.RUNNING, Job.Status.SUCCEEDED):
        job = make_job(status=status)
        with pytest.raises(jobs.JobError):
            jobs.job_retry(job=job)
        job.refresh_from_db()
        assert job.status == status


def test_crashed_anonymization_resumes_without_redoing_saved_texts(fake_anonymizer) -> None:
    study = study_with_descriptions(7)
    # The first worker dies on the 4th text: batches of 2, so the first batch is saved.
    anonymization.set_anonymizer(FakeAnonymizer(crash_after=3))
    job = jobs.job_enqueue(kind="anonymize_study", study=study, params={"batch_size": 2})
    job = jobs.job_execute(job.pk, heartbeat_interval_s=None)
    assert job.status == "failed"
    assert "simulated crash" in job.error
    assert AnonymizedText.objects.filter(description__study=study).count() == 2
    assert (job.progress_done, job.progress_total) == (2, 7)

    resumed = FakeAnonymizer()
    anonymization.set_anonymizer(resumed)
    jobs.job_retry(job=job)
    job = jobs.job_execute(job.pk, heartbeat_interval_s=None)
    assert job.status == "succeeded"
    assert job.attempts == 2
    assert job.result == {"created": 5, "skipped": 2, "total": 7, "taken_from_sources": 0}
    assert sum(resumed.calls) == 5  # only the unfinished descriptions reached the model
    texts = AnonymizedText.objects.filter(description__study=study)
    assert texts.count() == 7
    assert set(texts.values_list("method", "model_version", "status").distinct()) == {
        ("textwash-model", "fake-1", "draft")
    }
    assert "PERSON_FIRSTNAME_1" in texts.first().text
    assert "Corvin" not in texts.first().text


def test_anonymization_stores_spans_as_offsets_into_the_original(fake_anonymizer) -> None:
    study = study_with_descriptions(1)
    jobs.job_execute(jobs.job_enqueue(kind="anonymize_study", study=study).pk)
    text = AnonymizedText.objects.get(description__study=study)
    original = text.description.text
    assert [original[s["start"] : s["end"]] for s in text.spans] == [
        "Corvin",
        "Ysolde",
        "Brackwater",
    ]
    assert [s["placeholder"] for s in text.spans] == [
        "PERSON_FIRSTNAME_1",
        "PERSON_FIRSTNAME_2",
        "PERSON_FIRSTNAME_3",
    ]


def test_stale_running_job_is_requeued_and_a_fresh_one_is_left_alone() -> None:
    old = timezone.now() - timedelta(minutes=30)
    stale = make_job(status=Job.Status.RUNNING, heartbeat_at=old, attempts=1, worker="dead:1")
    alive = make_job(status=Job.Status.RUNNING, heartbeat_at=timezone.now(), attempts=1)
    requeued = jobs.jobs_requeue_stale(stale_after=timedelta(minutes=5), max_attempts=3)
    assert requeued == [stale.pk]
    stale.refresh_from_db()
    alive.refresh_from_db()
    assert stale.status == "queued"
    assert "dead:1" in stale.message
    assert alive.status == "running"


def test_a_job_whose_process_on_this_host_is_gone_is_requeued_at_once() -> None:
    import socket

    here = socket.gethostname()
    now = timezone.now()
    crashed = make_job(
        status=Job.Status.RUNNING, heartbeat_at=now, attempts=1, worker=f"{here}:999999999"
    )
    mine = make_job(
        status=Job.Status.RUNNING, heartbeat_at=now, attempts=1, worker=jobs.worker_name()
    )
    elsewhere = make_job(
        status=Job.Status.RUNNING, heartbeat_at=now, attempts=1, worker="other-host:1"
    )
    requeued = jobs.jobs_requeue_stale(stale_after=timedelta(minutes=5), max_attempts=3)
    assert requeued == [crashed.pk]
    for job, status in ((crashed, "queued"), (mine, "running"), (elsewhere, "running")):
        job.refresh_from_db()
        assert job.status == status
    # The import's crash marker follows the same rule.
    assert not jobs.worker_alive(f"{here}:999999999", now, timedelta(minutes=30))
    assert jobs.worker_alive("other-host:1", now, timedelta(minutes=30))
    assert not jobs.worker_alive("other-host:1", now - timedelta(minutes=31), timedelta(minutes=30))


def test_stale_job_out_of_attempts_fails_instead_of_looping() -> None:
    old = timezone.now() - timedelta(minutes=30)
    job = make_job(status=Job.Status.RUNNING, heartbeat_at=old, attempts=3, worker="dead:2")
    assert jobs.jobs_requeue_stale(stale_after=timedelta(minutes=5), max_attempts=3) == []
    job.refresh_from_db()
    assert job.status == "failed"
    assert "stopped responding" in job.error


def test_run_worker_once_drains_the_queue(fake_anonymizer, capsys) -> None:
    studies = [study_with_descriptions(2), study_with_descriptions(3)]
    for study in studies:
        jobs.job_enqueue(kind="anonymize_study", study=study)
    call_command("run_worker", "--once")
    assert set(Job.objects.values_list("status", flat=True)) == {"succeeded"}
    assert AnonymizedText.objects.count() == 5
    assert "worker stopped after 2 job(s)" in capsys.readouterr().out


def test_worker_requeues_a_crashed_job_and_finishes_it(fake_anonymizer) -> None:
    study = study_with_descriptions(2)
    job = make_job(
        study=study,
        status=Job.Status.RUNNING,
        heartbeat_at=timezone.now() - timedelta(hours=1),
        attempts=1,
    )
    assert jobs.run_db_worker(once=True, heartbeat_interval_s=0) == 1
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("succeeded", 2)


@pytest.mark.django_db(transaction=True)
def test_heartbeat_thread_keeps_a_long_job_fresh(registered_task) -> None:
    def slow(job, progress):
        before = Job.objects.get(pk=job.pk).heartbeat_at
        time.sleep(0.5)
        return {"beat": Job.objects.get(pk=job.pk).heartbeat_at > before}

    registered_task("slow", slow)
    job = jobs.job_execute(jobs.job_enqueue(kind="slow").pk, heartbeat_interval_s=0.1)
    assert job.result == {"beat": True}


def test_rq_backend_is_chosen_by_settings_alone(
    settings, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    enqueued: list[tuple] = []

    class FakeQueue:
        def enqueue(self, function: str, *args, **kwargs) -> None:
            enqueued.append((function, args))

    settings.INTRUDER_JOB_BACKEND = "rq"
    monkeypatch.setattr(jobs, "rq_queue", lambda name=None: FakeQueue())
    with django_capture_on_commit_callbacks(execute=True):
        job = jobs.job_enqueue(kind="anonymize_study", study=make_study())
    assert enqueued == [("intruder.services.jobs.job_execute", (job.pk,))]
    job = make_job(status=Job.Status.FAILED)
    with django_capture_on_commit_callbacks(execute=True):
        jobs.job_retry(job=job)
    assert enqueued[-1] == ("intruder.services.jobs.job_execute", (job.pk,))


def test_db_backend_needs_no_queue(settings, monkeypatch) -> None:
    settings.INTRUDER_JOB_BACKEND = "db"
    monkeypatch.setattr(jobs, "rq_queue", lambda: pytest.fail("rq used with the db backend"))
    assert jobs.job_enqueue(kind="anonymize_study", study=make_study()).status == "queued"


def test_unknown_backend_is_a_clear_error(settings) -> None:
    settings.INTRUDER_JOB_BACKEND = "celery"
    with pytest.raises(jobs.ImproperlyConfiguredBackend, match="'db' or 'rq'"):
        jobs.job_enqueue(kind="anonymize_study", study=make_study())


def test_anonymize_button_queues_one_job_and_status_endpoint_reports_progress() -> None:
    study = study_with_descriptions(1)
    client = Client()
    client.force_login(study.owner)
    url = reverse("researcher-study-anonymize", kwargs={"slug": study.slug})
    client.post(url)
    client.post(url)  # a second click while queued adds no second job
    job = Job.objects.get(study=study)
    Job.objects.filter(pk=job.pk).update(progress_done=1, progress_total=4, message="working")
    data = client.get(reverse("researcher-job-status", kwargs={"pk": job.pk})).json()
    assert data["status"] == "queued"
    assert (data["progress_done"], data["progress_total"], data["progress_pct"]) == (1, 4, 25.0)
    assert data["finished"] is False
    page = client.get(reverse("researcher-study", kwargs={"slug": study.slug}))
    assert f'data-job-url="/r/jobs/{job.pk}.json"' in page.content.decode()


def test_retry_button_requeues_a_failed_job() -> None:
    study = make_study()
    job = make_job(study=study, status=Job.Status.FAILED, error="boom")
    client = Client()
    client.force_login(study.owner)
    client.post(reverse("researcher-job-retry", kwargs={"pk": job.pk}))
    job.refresh_from_db()
    assert job.status == "queued"


@pytest.mark.django_db(transaction=True)
def test_concurrent_workers_never_claim_the_same_job() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("row locks (SKIP LOCKED) need PostgreSQL; SQLite's claim is tested above")
    for _ in range(30):
        make_job()

    def drain(worker: str) -> list[int]:
        claimed = []
        try:
            while (job := jobs.job_claim_next(worker=worker)) is not None:
                claimed.append(job.pk)
        finally:
            connection.close()
        return claimed

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(drain, ["w1", "w2", "w3", "w4"]))
    claimed = [pk for result in results for pk in result]
    assert len(claimed) == len(set(claimed)) == 30
    assert set(Job.objects.values_list("attempts", flat=True)) == {1}
