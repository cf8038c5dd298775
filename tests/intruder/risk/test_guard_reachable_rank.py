"""The web guard offers and accepts only a rank the study's candidates can reach (issue 40).

With fewer persons than the rank no text can rank its person there or worse: the guard would mask
until its budget ran out, the ranks could not move and the released texts read
"REIDENTIFYING_1 who REIDENTIFYING_2 up in a REIDENTIFYING_3".
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from intruder.models import AnonymizedText, Description, Job
from intruder.risk.guarding import (
    GuardRunError,
    execute_guard_run,
    guard_run_start,
    reachable_rank,
)
from intruder.risk.models import GuardRun
from intruder.services import jobs
from tests.intruder.factories import logged_in
from tests.intruder.risk_fixtures import HOBBIES, guard_run_of, study_with_guardable_texts

pytestmark = pytest.mark.django_db

PERSONS = len(HOBBIES)  # 4: the fixture's study is about four persons


def _post(study, data, follow=True):
    url = reverse("researcher-study-guard", args=[study.slug])
    return logged_in(study.owner).post(url, data, follow=follow)


def test_the_form_offers_the_k_the_study_can_reach_and_says_why():
    study = study_with_guardable_texts()
    html = logged_in(study.owner).get(reverse("researcher-review", args=[study.slug])).content
    html = html.decode()
    assert f'name="rank" value="{PERSONS}"' in html  # not the guard's default 5
    assert f"are about {PERSONS} persons: the rank is at most {PERSONS}" in html
    assert "Rank" in html and "Cross-validation folds" in html
    assert "k (folds)" not in html


def test_the_default_k_is_the_guards_own_where_the_study_has_enough_persons():
    assert reachable_rank(20) == 5 and reachable_rank(3) == 3 and reachable_rank(0) == 2


@pytest.mark.parametrize("rank", [PERSONS + 1, 999])
def test_a_rank_beyond_the_candidates_is_refused_next_to_the_field_and_nothing_is_queued(rank):
    study = study_with_guardable_texts()
    page = _post(study, {"rank": str(rank), "budget": "0.3"})
    html = page.content.decode()
    assert page.status_code == 200
    assert f"Rank: rank {rank} is more than the {PERSONS} persons" in html
    assert f"rank its person {rank}th or worse" in html and f"{rank}-th" not in html
    assert not Job.objects.exists() and not GuardRun.objects.exists()
    assert not AnonymizedText.objects.filter(revision__gt=1).exists()


def test_the_largest_reachable_rank_is_queued():
    study = study_with_guardable_texts()
    assert _post(study, {"rank": str(PERSONS), "budget": "0.3"}, follow=False).status_code == 302
    assert GuardRun.objects.get().rank == PERSONS


def test_the_service_refuses_an_unreachable_rank_whoever_calls_it():
    """The API and scripts call the start service, not the form: it checks the same bound."""
    study = study_with_guardable_texts()
    with pytest.raises(GuardRunError, match=f"more than the {PERSONS} candidate persons"):
        guard_run_start(study=study, user=study.owner, rank=PERSONS + 1)
    documents = {"zora": "origami", "alma": "pottery"}
    with pytest.raises(GuardRunError, match="more than the 2 candidate persons"):
        guard_run_start(
            study=study,
            user=study.owner,
            rank=3,
            background="uploaded",
            background_documents=documents,
        )
    assert not GuardRun.objects.exists() and not Job.objects.exists()


def test_an_uploaded_background_with_more_persons_allows_a_larger_k_on_the_form():
    """The study's own persons bound the cross-validated background only."""
    study = study_with_guardable_texts()
    with pytest.raises(GuardRunError, match="more than the 4 candidate"):
        guard_run_start(
            study=study,
            user=study.owner,
            rank=5,
            background="uploaded",
            background_documents={key: f"{key} {hobby}" for key, hobby in HOBBIES.items()},
        )
    documents = {key: f"{key} {hobby}" for key, hobby in HOBBIES.items()}
    documents["extra"] = "someone else who sails"
    run, created = guard_run_start(
        study=study, user=study.owner, rank=5, background="uploaded", background_documents=documents
    )
    assert created and run.rank == 5


def test_a_fold_with_fewer_persons_than_k_skips_its_texts_untouched():
    """Zora has one text: the fold that tests it lacks her in its background, holding three
    persons, fewer than the rank, 4. Its texts are skipped, not masked to the budget."""
    study = study_with_guardable_texts()
    zoras = Description.objects.filter(target__key="zora").order_by("pk")
    Description.objects.filter(pk__in=list(zoras.values_list("pk", flat=True)[1:])).delete()
    assert Description.objects.filter(target__key="zora").count() == 1
    run = guard_run_of(study, rank=PERSONS, folds=3)
    summary = execute_guard_run(run=run, progress=lambda *a, **kw: None)
    reason = f"fewer persons in the background than the rank, {PERSONS}"
    assert summary["skipped"].get(reason, 0) >= 1
    assert summary["guarded"] + sum(summary["skipped"].values()) == 10
    zora = AnonymizedText.objects.get(description__target__key="zora")
    assert zora.revision == 1 and "REIDENTIFYING" not in zora.text
    assert not run.results.filter(anonymized_text=zora).exists()


def test_a_finished_job_says_what_the_run_did_not_its_last_step():
    study = study_with_guardable_texts()
    run, _ = guard_run_start(study=study, user=study.owner, rank=2, folds=3)
    job = jobs.job_execute(run.job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    run.refresh_from_db()
    assert job.message == (
        f"finished: 12 guarded, {run.summary['changed']} changed, "
        f"{run.summary['flagged']} flagged, 0 skipped"
    )
    assert (job.progress_done, job.progress_total) == (12, 12)
    assert "fitting" not in job.message
