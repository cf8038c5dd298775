"""The guard as a study job: background (b) from the study itself, spans stored like an edit,
a result row per text."""

from __future__ import annotations

import pytest
from django.urls import reverse

from intruder import tasks
from intruder.models import AnonymizedText, Job
from intruder.risk.guarding import execute_guard_run
from intruder.risk.models import GuardRun
from intruder.services import jobs
from tests.intruder.factories import (
    logged_in,
    make_member,
    make_user,
)
from tests.intruder.risk_fixtures import guard_run_of, guarded_run, study_with_guardable_texts

pytestmark = pytest.mark.django_db


def test_guard_job_masks_the_telling_word_and_reports_ranks():
    study = study_with_guardable_texts()
    run = guard_run_of(study)
    calls = []
    summary = execute_guard_run(run=run, progress=lambda *a, **kw: calls.append(a))
    rows = list(run.results.all())
    assert summary["guarded"] == len(rows) == 12
    # Persons early in name order win ties (as the attacks rank ties); their texts can run out
    # of budget and are flagged, never passed as safe.
    assert all(row.flagged == row.reason.startswith("budget spent") for row in rows)
    assert summary["flagged"] == sum(row.flagged for row in rows)
    assert summary["changed"] == sum(row.changed for row in rows)
    zora = [row for row in rows if row.target == "zora"]
    assert all(row.masked_words == ["origami"] for row in zora)
    assert all(row.guard_spans == ["origami"] and row.changed for row in zora)
    assert all(row.rank_before["tfidf"] == 1 for row in zora)
    assert all(rank >= 2 for row in zora for rank in row.rank_after.values())
    assert all(row.description_id == row.anonymized_text.description_id for row in zora)
    stored = AnonymizedText.objects.get(pk=zora[0].anonymized_text_id)
    assert "origami" not in stored.text and "REIDENTIFYING_1" in stored.text
    assert stored.revision == 2
    assert calls[-1][:2] == (12, 12)
    run.refresh_from_db()
    assert run.summary == {
        **{key: summary[key] for key in ("guarded", "changed", "flagged", "skipped")},
        "skipped_texts": {},
    }


def test_guard_job_leaves_released_texts_alone():
    study = study_with_guardable_texts(status=AnonymizedText.Status.RELEASED)
    run = guard_run_of(study)
    summary = execute_guard_run(run=run, progress=lambda *a, **kw: None)
    assert summary["guarded"] == 0 and summary["skipped"] == {"released": 12}
    assert not run.results.exists()
    assert not AnonymizedText.objects.filter(revision__gt=1).exists()


def test_guard_job_is_registered_as_a_task_kind():
    assert jobs.get_task(Job.Kind.GUARD_STUDY) is tasks.guard_study


def test_review_page_queues_the_guard_job_with_its_settings():
    study = study_with_guardable_texts()
    client = logged_in(study.owner)
    url = reverse("researcher-study-guard", args=[study.slug])
    response = client.post(url, {"rank": "3", "budget": "0.25"})
    assert response.status_code == 302
    job = Job.objects.get(kind="guard_study")
    run = GuardRun.objects.get()
    assert job.study == study and run.job == job and run.study == study
    assert (run.rank, run.budget, run.background, run.folds) == (3, 0.25, "cross_validated", 5)
    assert run.attacks == ["tfidf", "bm25"] and run.created_by == study.owner
    assert job.params == {
        "run": run.pk,
        "rank": 3,
        "budget": 0.25,
        "background": "cross_validated",
        "folds": 5,
    }
    client.post(url, {"rank": "3", "budget": "0.25"})
    assert Job.objects.filter(kind="guard_study").count() == 1  # one at a time
    assert GuardRun.objects.count() == 1


@pytest.mark.parametrize("rank", ["1", "x", ""])
def test_review_page_refuses_a_bad_rank_without_queuing(rank):
    study = study_with_guardable_texts()
    client = logged_in(study.owner)
    response = client.post(
        reverse("researcher-study-guard", args=[study.slug]),
        {"rank": rank, "budget": "0.3"},
        follow=True,
    )
    assert response.status_code == 200
    assert "Not queued" in response.content.decode()
    assert not Job.objects.filter(kind="guard_study").exists()


def test_a_post_naming_the_rank_by_its_old_name_k_is_refused_not_defaulted():
    """Issue 50 renamed the guard's `k` to `rank`: a stale page or script that still posts
    `k` gets the missing field named, never a run at the default rank it did not ask for."""
    study = study_with_guardable_texts()
    client = logged_in(study.owner)
    url = reverse("researcher-study-guard", args=[study.slug])
    page = client.post(url, {"k": "3", "budget": "0.3"}, follow=True).content.decode()
    assert "Not queued: Rank: This field is required." in page
    assert not GuardRun.objects.exists() and not Job.objects.filter(kind="guard_study").exists()


def test_review_page_shows_ranks_before_and_after_and_the_masked_words():
    study = study_with_guardable_texts()
    run = guarded_run(study, status=Job.Status.SUCCEEDED)
    page = logged_in(study.owner).get(reverse("researcher-review", args=[study.slug]))
    html = page.content.decode()
    assert "Mask until the machine attackers rank the person k-th or worse" in html
    assert "k-anonymous" not in html
    assert "Machine rank before → after" in html and "origami" in html
    assert "tfidf 1 → " in html
    run.refresh_from_db()
    assert f"rank 2, {run.summary['changed']} texts changed" in html


def test_guard_job_needs_edit_rights():
    study = study_with_guardable_texts()
    stranger = make_user()
    response = logged_in(stranger).post(
        reverse("researcher-study-guard", args=[study.slug]), {"rank": "5", "budget": "0.3"}
    )
    assert response.status_code == 404
    assert not Job.objects.filter(kind="guard_study").exists()


def test_a_viewer_cannot_start_the_guard_job():
    study = study_with_guardable_texts()
    viewer = make_member(study=study)
    response = logged_in(viewer).post(
        reverse("researcher-study-guard", args=[study.slug]), {"rank": "5", "budget": "0.3"}
    )
    assert response.status_code == 403
    assert not Job.objects.filter(kind="guard_study").exists()
