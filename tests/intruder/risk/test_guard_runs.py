"""Guard runs as rows: the job stores a row per text, a crashed job resumes without
duplicates, the database refuses settings the guard cannot use, and guard jobs made before
runs existed become runs."""

from __future__ import annotations

import importlib

import pytest
from django.db import IntegrityError, transaction

import guard
from intruder.models import AnonymizedText, Job
from intruder.risk.guarding import GuardRunError, guard_run_start
from intruder.risk.models import GuardResult, GuardRun
from intruder.services import jobs
from tests.intruder.factories import make_job
from tests.intruder.risk_fixtures import guard_run_of, guarded_run, study_with_guardable_texts
from tests.migrations import at_migration

pytestmark = pytest.mark.django_db

COUNTS = ("guarded", "changed", "flagged", "skipped")


def test_the_worker_stores_rows_and_the_job_keeps_only_the_counts():
    study = study_with_guardable_texts()
    run, created = guard_run_start(study=study, user=study.owner, rank=2, folds=3)
    assert created and run.job.status == Job.Status.QUEUED
    job = jobs.job_execute(run.job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    run.refresh_from_db()
    assert run.results.count() == 12 == run.summary["guarded"]
    assert "texts" not in job.result and "skipped_texts" not in job.result
    assert job.result["run"] == run.pk and job.result["rank"] == 2
    assert {key: job.result[key] for key in COUNTS} == {key: run.summary[key] for key in COUNTS}


def test_a_crashed_job_resumes_and_stores_each_text_once(monkeypatch):
    study = study_with_guardable_texts()
    run, _ = guard_run_start(study=study, user=study.owner, rank=2, folds=3)
    real = guard.guard_texts
    guarded: list[int] = []

    def crash_on_the_second_batch(items, *args, **kwargs):
        if guarded:
            raise RuntimeError("worker killed")
        guarded.append(len(items))
        return real(items, *args, **kwargs)

    monkeypatch.setattr(guard, "guard_texts", crash_on_the_second_batch)
    job = jobs.job_execute(run.job.pk)
    assert job.status == Job.Status.FAILED and "worker killed" in job.error
    first = set(run.results.values_list("anonymized_text_id", flat=True))
    assert len(first) == guarded[0] == 4  # one fold's batch, stored before the crash
    revisions = dict(AnonymizedText.objects.values_list("pk", "revision"))

    def count_the_rest(items, *args, **kwargs):
        guarded.append(len(items))
        return real(items, *args, **kwargs)

    monkeypatch.setattr(guard, "guard_texts", count_the_rest)
    jobs.job_retry(job=job)
    job = jobs.job_execute(run.job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert sum(guarded[1:]) == 8  # the stored texts are not guarded again
    ids = list(run.results.values_list("anonymized_text_id", flat=True))
    assert len(ids) == len(set(ids)) == 12 and first <= set(ids)
    # The texts guarded before the crash kept their one guard edit.
    for pk in first:
        assert AnonymizedText.objects.get(pk=pk).revision == revisions[pk]
    run.refresh_from_db()
    assert run.summary["guarded"] == 12 and job.result["guarded"] == 12


def test_a_batch_stores_its_spans_and_rows_together_or_not_at_all(monkeypatch):
    study = study_with_guardable_texts()
    run = guard_run_of(study)

    def fail(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(GuardResult.objects, "bulk_create", fail)
    from intruder.risk.guarding import execute_guard_run

    with pytest.raises(RuntimeError, match="went away"):
        execute_guard_run(run=run, progress=lambda *a, **kw: None)
    # The batch's spans were rolled back with its rows: no text is guarded without its row.
    assert not AnonymizedText.objects.filter(revision__gt=1).exists()
    assert not run.results.exists()


def test_a_text_edited_meanwhile_is_skipped_and_gets_no_row(monkeypatch):
    study = study_with_guardable_texts()
    run = guard_run_of(study, folds=2)
    real = guard.guard_texts

    def edit_one_first(items, *args, **kwargs):
        AnonymizedText.objects.filter(pk=int(items[0].doc_id)).update(revision=7)
        return real(items, *args, **kwargs)

    monkeypatch.setattr(guard, "guard_texts", edit_one_first)
    from intruder.risk.guarding import execute_guard_run

    summary = execute_guard_run(run=run, progress=lambda *a, **kw: None)
    edited = AnonymizedText.objects.filter(revision=7)
    changed_edited = [t for t in edited if run.results.filter(anonymized_text=t).exists()]
    skipped = summary["skipped"].get("edited by a researcher meanwhile", 0)
    # An edited text the guard would change is skipped (no row); one it leaves alone keeps
    # its row (nothing was overwritten).
    assert skipped >= 1 and skipped + summary["guarded"] == 12
    assert edited.count() == 2  # one per fold's batch, and the guard overwrote neither
    assert all(not run.results.get(anonymized_text=t).changed for t in changed_edited)


@pytest.mark.parametrize(
    ("field", "value"),
    [("rank", 1), ("budget", 0.0), ("budget", 1.5), ("folds", 1)],
)
def test_the_database_refuses_settings_the_guard_cannot_use(field, value):
    study = study_with_guardable_texts()
    with pytest.raises(IntegrityError), transaction.atomic():
        GuardRun.objects.create(study=study, **{"rank": 2, "budget": 0.3, field: value})


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"rank": 1}, "the rank must lie between 2 and 1000"),
        ({"budget": 0}, "the masking budget must lie between 0.01 and 1.0"),
        ({"folds": 21}, "between 2 and 20"),
        ({"background": "web"}, "background must be one of"),
        ({"attacks": []}, "at least one attack"),
    ],
)
def test_the_start_service_refuses_bad_settings_and_stores_nothing(bad, message):
    study = study_with_guardable_texts()
    with pytest.raises(GuardRunError, match=message):
        guard_run_start(study=study, user=study.owner, **bad)
    assert not GuardRun.objects.exists() and not Job.objects.exists()


def test_a_run_holds_one_row_per_text():
    study = study_with_guardable_texts()
    run = guarded_run(study)
    row = run.results.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        GuardResult.objects.create(
            run=run,
            anonymized_text=row.anonymized_text,
            description=row.description,
            target=row.target,
        )
    # Another run may hold its own row for the same text.
    other = guard_run_of(study)
    GuardResult.objects.create(
        run=other, anonymized_text=row.anonymized_text, description=row.description
    )


# The data migration of 0016 wrote `GuardRun.k`: it runs on the last schema that has it.
BEFORE_RANK = [("intruder", "0029_issue48_49_familiarity_guard_undo_rehearsal")]


@pytest.mark.django_db(transaction=True)
def test_guard_jobs_made_before_runs_existed_become_runs():
    # The study is made with today's tables: its rows outlive the way back, which drops the
    # columns added since.
    study = study_with_guardable_texts()
    with at_migration(BEFORE_RANK) as old:
        _guard_jobs_become_runs(old, study)


def _guard_jobs_become_runs(old, study):
    OldRun = old.get_model("intruder", "GuardRun")
    text = AnonymizedText.objects.filter(description__study=study).first()
    row = {
        "text_id": text.pk,
        "description_id": text.description_id,
        "target": text.description.target.key,
        "rank_before": {"tfidf": 1, "bm25": 1},
        "rank_after": {"tfidf": 3, "bm25": 2},
        "masked_words": ["origami"],
        "guard_spans": ["origami"],
        "residual_words": ["paints"],
        "flagged": False,
        "reason": "rank >= k under every attack",
    }
    gone = {**row, "text_id": 10**9}  # a text deleted since: its row cannot be shown
    result = {
        "k": 3,
        "attacks": ["tfidf", "bm25"],
        "budget": 0.25,
        "background": "cross_validated",
        "guarded": 2,
        "changed": 2,
        "flagged": 0,
        "skipped": {"released": 1},
        "texts": [row, gone],
    }
    job = make_job(
        study=study,
        kind="guard_study",
        status=Job.Status.SUCCEEDED,
        params={"k": 3, "budget": 0.25, "background": "cross_validated", "folds": 4},
        result=result,
    )
    queued = make_job(
        study=study, kind="guard_study", status=Job.Status.FAILED, params={"k": 2, "budget": 0.3}
    )
    migration = importlib.import_module("intruder.migrations.0016_h27guard_guard_runs")
    migration.guard_jobs_to_runs(old, None)
    run = OldRun.objects.get(job=job.pk)
    assert (run.k, run.budget, run.folds, run.attacks) == (3, 0.25, 4, ["tfidf", "bm25"])
    assert run.created_at == job.created_at
    assert run.summary == {"guarded": 2, "changed": 2, "flagged": 0, "skipped": {"released": 1}}
    (stored,) = run.results.all()
    assert stored.anonymized_text_id == text.pk and stored.rank_after == {"tfidf": 3, "bm25": 2}
    assert stored.changed and stored.residual_words == ["paints"]
    job.refresh_from_db()
    assert "texts" not in job.result and job.result["run"] == run.pk
    assert job.params["run"] == run.pk
    # A job with no rows (failed, or still queued) gets its run too, so it can be retried.
    assert OldRun.objects.get(job=queued.pk).k == 2


def test_the_api_lists_guard_runs_and_their_rows_to_the_studys_readers(
    django_assert_max_num_queries,
):
    from rest_framework.test import APIClient

    from tests.intruder.factories import make_member, make_user

    study = study_with_guardable_texts()
    run = guarded_run(study, status=Job.Status.SUCCEEDED)
    viewer = APIClient()
    viewer.force_authenticate(make_member(study=study))
    listed = viewer.get("/api/guard-runs/", {"study": study.pk}).json()
    (shown,) = listed["results"]
    assert (shown["id"], shown["rank"], shown["job_status"]) == (run.pk, 2, "succeeded")
    assert shown["summary"]["guarded"] == 12 and "background_documents" not in shown
    assert viewer.get(f"/api/guard-runs/{run.pk}/").json()["id"] == run.pk
    with django_assert_max_num_queries(6):  # no query per row
        rows = viewer.get("/api/guard-results/", {"run": run.pk, "page_size": 50}).json()
    assert rows["count"] == 12
    zora = [row for row in rows["results"] if row["target_key"] == "zora"]
    assert zora and all(row["masked_words"] == ["origami"] for row in zora)
    assert {"rank_before", "rank_after", "residual_words", "flagged", "reason"} <= set(zora[0])
    flagged = viewer.get("/api/guard-results/", {"run": run.pk, "flagged": "true"}).json()
    assert flagged["count"] == run.summary["flagged"]
    outsider = APIClient()
    outsider.force_authenticate(make_user())
    assert outsider.get(f"/api/guard-runs/{run.pk}/").status_code == 404
    assert outsider.get("/api/guard-results/", {"run": run.pk}).json()["count"] == 0


def test_the_admin_shows_guard_runs_and_rows_read_only():
    from django.test import Client
    from django.urls import reverse

    from tests.intruder.factories import make_user

    study = study_with_guardable_texts()
    run = guarded_run(study, status=Job.Status.SUCCEEDED, background_documents={"a": "b"})
    row = run.results.first()
    client = Client()
    client.force_login(make_user(is_staff=True, is_superuser=True))
    for model, obj in (("guardrun", run), ("guardresult", row)):
        assert client.get(reverse(f"admin:intruder_{model}_changelist")).status_code == 200
        page = client.get(reverse(f"admin:intruder_{model}_change", args=[obj.pk]))
        assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
        assert client.get(reverse(f"admin:intruder_{model}_add")).status_code == 403
