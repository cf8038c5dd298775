"""The guard job's live table and its background options (uploaded documents or k-fold)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from intruder.models import Job
from intruder.risk.guarding import GUARD_BATCH, GuardRunError, execute_guard_run, guard_run_start
from intruder.risk.models import GuardResult, GuardRun
from tests.intruder.factories import logged_in, make_member, make_user
from tests.intruder.risk_fixtures import (
    HOBBIES,
    guard_run_of,
    guarded_run,
    study_with_guardable_texts,
)

pytestmark = pytest.mark.django_db

# Uploaded background about the same made-up persons, one document each.
UPLOADED = {
    key: f"{key.title()} paints rivers and teaches drawing, and loves {hobby} at home."
    for key, hobby in HOBBIES.items()
}


def test_rows_are_stored_batch_by_batch_while_the_job_runs():
    study = study_with_guardable_texts()
    run = guard_run_of(study, folds=2)
    stored = []
    summary = execute_guard_run(
        run=run, progress=lambda *a, **kw: stored.append(GuardResult.objects.count())
    )
    assert stored == sorted(stored) and stored[-1] == summary["guarded"] == 12
    # Rows appear while the job runs, a batch at a time (not all at the end).
    steps = sorted(set(stored) - {0})
    assert len(steps) >= 12 // GUARD_BATCH and steps[0] <= GUARD_BATCH


def test_uploaded_background_guards_every_text_against_the_documents():
    study = study_with_guardable_texts()
    run = guarded_run(study, background="uploaded", background_documents=UPLOADED)
    assert run.summary["guarded"] == 12
    zora = list(run.results.filter(target="zora"))
    assert len(zora) == 3
    assert all("origami" in row.masked_words for row in zora)
    assert all(rank >= 2 for row in zora for rank in row.rank_after.values())


def test_uploaded_background_for_one_person_is_refused():
    study = study_with_guardable_texts()
    with pytest.raises(GuardRunError, match="at least two of the study"):
        guard_run_start(
            study=study,
            user=study.owner,
            background="uploaded",
            background_documents={"zora": UPLOADED["zora"]},
        )
    assert not GuardRun.objects.exists() and not Job.objects.exists()


def test_review_form_queues_an_uploaded_background_with_the_documents():
    study = study_with_guardable_texts()
    files = [
        SimpleUploadedFile(f"{key}.txt", text.encode(), content_type="text/plain")
        for key, text in UPLOADED.items()
    ]
    url = reverse("researcher-study-guard", args=[study.slug])
    data = {
        "rank": "2",
        "budget": "0.3",
        "background": "uploaded",
        "folds": "5",
        "documents": files,
    }
    assert logged_in(study.owner).post(url, data).status_code == 302
    run = GuardRun.objects.get(job__kind="guard_study")
    assert run.background == "uploaded"
    assert run.background_documents == UPLOADED
    # The documents have one home, the run: the job names the run.
    assert "background_documents" not in run.job.params


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ([], "at least two of the study"),
        ([("people.jsonl", b'{"target": "zora"}\n')], "people.jsonl, line 1"),
    ],
)
def test_review_form_refuses_a_bad_upload_without_queuing(files, message):
    study = study_with_guardable_texts()
    uploads = [SimpleUploadedFile(name, content) for name, content in files]
    url = reverse("researcher-study-guard", args=[study.slug])
    data = {"rank": "2", "budget": "0.3", "background": "uploaded", "documents": uploads}
    page = logged_in(study.owner).post(url, data, follow=True)
    assert page.status_code == 200 and message in page.content.decode()
    assert not Job.objects.filter(kind="guard_study").exists()


def test_rows_endpoint_serves_the_rows_of_a_running_job():
    study = study_with_guardable_texts()
    run = guarded_run(study, status=Job.Status.RUNNING, folds=2)
    partial = list(run.results.order_by("pk")[:3])
    run.results.exclude(pk__in=[row.pk for row in partial]).delete()
    Job.objects.filter(pk=run.job_id).update(progress_done=3, progress_total=12)
    viewer = make_member(study=study)
    answer = logged_in(viewer).get(reverse("researcher-study-guard-rows", args=[study.slug]))
    data = answer.json()
    assert data["status"] == "running" and not data["finished"]
    assert (data["job"], data["run"]) == (run.job_id, run.pk)
    assert (data["progress_done"], data["progress_total"]) == (3, 12)
    assert set(data["rows"]) == {str(row.anonymized_text_id) for row in partial}
    row = data["rows"][str(partial[0].anonymized_text_id)]
    assert {"ranks", "masked_words", "residual_words", "review_url", "flagged", "reason"} <= set(
        row
    )
    assert row["ranks"] == [list(r) for r in partial[0].ranks]
    assert row["masked_words"] == partial[0].masked_words
    page = logged_in(study.owner).get(reverse("researcher-review", args=[study.slug]))
    html = page.content.decode()
    assert "Machine rank before → after" in html and "waiting" in html
    assert "guard_rows.js" in html


def test_rows_endpoint_reads_the_latest_run_in_a_fixed_number_of_queries(
    django_assert_max_num_queries,
):
    study = study_with_guardable_texts()
    older = guarded_run(study, status=Job.Status.SUCCEEDED, folds=2)
    run = guarded_run(study, status=Job.Status.RUNNING, folds=2)
    run.results.filter(pk__in=list(run.results.values_list("pk", flat=True)[:4])).delete()
    client = logged_in(study.owner)
    url = reverse("researcher-study-guard-rows", args=[study.slug])
    client.get(url)  # the session and the study, as any page
    with django_assert_max_num_queries(5):  # session, user, study, run + job, rows
        data = client.get(url).json()
    assert data["run"] == run.pk != older.pk and len(data["rows"]) == 8


def test_rows_endpoint_of_a_study_never_guarded_says_so():
    study = study_with_guardable_texts()
    url = reverse("researcher-study-guard-rows", args=[study.slug])
    assert logged_in(study.owner).get(url).json() == {"job": None, "rows": {}}


def test_rows_endpoint_is_for_the_study_members_only():
    study = study_with_guardable_texts()
    url = reverse("researcher-study-guard-rows", args=[study.slug])
    assert logged_in(make_user()).get(url).status_code == 404
    assert Client().get(url).status_code == 302  # to the login page


def test_a_cancelled_run_keeps_its_rows_and_the_page_stops_polling():
    study = study_with_guardable_texts()
    run = guarded_run(study, status=Job.Status.CANCELLED, folds=2)
    run.results.filter(pk__in=list(run.results.values_list("pk", flat=True)[:4])).delete()
    client = logged_in(study.owner)
    data = client.get(reverse("researcher-study-guard-rows", args=[study.slug])).json()
    assert data["status"] == "cancelled" and data["finished"] and len(data["rows"]) == 8
    html = client.get(reverse("researcher-review", args=[study.slug])).content.decode()
    assert 'id="guard-status"' in html and 'data-finished="1"' in html
    assert "not guarded" in html and "waiting" not in html
