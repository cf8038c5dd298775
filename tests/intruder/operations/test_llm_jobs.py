"""LLM jobs from the platform: anonymization and the open-world intruder, against the real
loopback server (tiny random model) and real background jobs."""

from __future__ import annotations

import pytest
from django.urls import reverse

from intruder.llm_intruder import services as llm_jobs
from intruder.llm_intruder.selectors import open_world_llm_results
from intruder.models import AnonymizedText, Job
from intruder.risk import attack_runs
from intruder.services import jobs
from tests.intruder.factories import (
    logged_in,
    make_description,
    make_job,
    make_study,
    make_target,
    make_text,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def llm_env(llm_settings, monkeypatch):
    for key, value in {
        "LLM_BASE_URL": llm_settings.base_url,
        "LLM_MODEL": llm_settings.model,
        "LLM_API_KEY": llm_settings.api_key,
        "LLM_MAX_RETRIES": "1",
        "LLM_BACKOFF_S": "0",
        "LLM_CONCURRENCY": "1",
        "LLM_CACHE_DIR": llm_settings.cache_dir,
    }.items():
        monkeypatch.setenv(key, value)
    return llm_settings


@pytest.fixture
def study():
    study = make_study()
    for name in ("Ada Byrne", "Bo Keane"):
        target = make_target(study=study, name=name, aliases=["The Rower"])
        make_description(study=study, target=target, text=f"{name} rows in Galway.")
    return study


def _run(job: Job) -> Job:
    return jobs.job_execute(job.pk, heartbeat_interval_s=None)


def test_an_llm_anonymization_job_saves_texts_and_reports_failures(study, llm_env, llm_server):
    job = llm_jobs.llm_anonymization_start(study=study, user=study.owner, prompt="paper002")
    llm_server.queue_answers('["Ada Byrne", "Galway"]', "nope", "nope")
    job = _run(job)
    assert job.status == Job.Status.SUCCEEDED, job.error
    texts = AnonymizedText.objects.filter(description__study=study, method="llm-paper002")
    (text,) = texts
    assert "Ada" not in text.text and "Galway" not in text.text
    assert text.status == AnonymizedText.Status.DRAFT  # reviewed before release
    assert text.model_version.startswith("llm:paper002:tiny-random-gpt2")
    assert [f["reason"] for f in job.result["failed"]] == ["unparseable"]
    assert job.result["llm"]["model"] == "tiny-random-gpt2" and "test-key" not in str(job.result)

    # Started again, the job asks again for the failed text only.
    llm_server.queue_answers('["Bo Keane"]')
    sent = len(llm_server.requests)
    job = _run(llm_jobs.llm_anonymization_start(study=study, user=study.owner, prompt="paper002"))
    assert len(llm_server.requests) == sent + 1
    assert job.result["created"] == 1 and job.result["failed"] == []
    assert texts.all().count() == 2


def test_without_an_endpoint_nothing_is_queued(study, monkeypatch):
    monkeypatch.delenv("LLM_BASE_URL", raising=False)
    with pytest.raises(llm_jobs.LLMJobError, match="LLM_BASE_URL"):
        llm_jobs.llm_anonymization_start(study=study, user=study.owner, prompt="paper002")
    with pytest.raises(attack_runs.AttackRunError, match="LLM_BASE_URL"):
        attack_runs.attack_run_start(
            study=study, user=study.owner, attacks=["llm"], methods=["clear"]
        )
    assert not Job.objects.exists()


def test_an_unreachable_endpoint_fails_the_job_before_any_text_is_sent(
    study, llm_env, llm_server, monkeypatch
):
    job = llm_jobs.llm_anonymization_start(study=study, user=study.owner, prompt="student")
    monkeypatch.setenv("LLM_BASE_URL", "http://127.0.0.1:9/v1")
    job = _run(job)
    assert job.status == Job.Status.FAILED and "cannot reach" in job.message
    assert llm_server.requests == []


def test_the_open_world_intruder_is_scored_like_human_guesses(study, llm_env, llm_server):
    for description in study.descriptions.all():
        AnonymizedText.objects.create(
            description=description, method="textwash-model", text="PERSON_1 rows in LOCATION_1."
        )
    job = llm_jobs.llm_intruder_start(study=study, user=study.owner)
    llm_server.queue_answers('["The Rower"]', '["the rower", "Ada Byrne"]')
    job = _run(job)
    assert job.status == Job.Status.SUCCEEDED, job.error
    results = open_world_llm_results(study)
    row = results["methods"]["textwash-model"]
    assert (row["n"], row["identified"], row["failed"]) == (2, 2, 0)
    assert results["complete"] and results["threshold"] == study.identification_threshold
    assert {r["matched_alias"] for r in results["rows"]} == {"The Rower"}


def test_the_study_page_and_api_start_llm_jobs(study, llm_env, llm_server):
    client = logged_in(study.owner)
    page = client.get(reverse("researcher-study", kwargs={"slug": study.slug}))
    assert b"Anonymize descriptions with an LLM" in page.content
    client.post(
        reverse("researcher-study-anonymize-llm", kwargs={"slug": study.slug}),
        {"prompt": "sparks"},
    )
    assert Job.objects.get().params == {"llm_prompt": "sparks"}
    api = client.post(
        f"/api/studies/{study.pk}/anonymize-llm/", {"prompt": "sparks"}, "application/json"
    )
    assert api.status_code == 400 and "already" in api.json()["detail"]
    assert client.get(f"/api/studies/{study.pk}/llm-intruder/").status_code == 404


def test_an_attack_run_with_the_llm_attack_records_its_model_and_failures(llm_env, llm_server):
    """The tiny model never names a candidate: rows are stored as not re-identified."""
    study = make_study()
    for name in ("Ada Byrne", "Bo Keane"):
        target = make_target(study=study, name=name)
        for place in ("Galway", "Cork"):
            make_description(study=study, target=target, text=f"{name} rows in {place}.")
    run = attack_runs.attack_run_start(
        study=study, user=study.owner, attacks=["llm"], methods=["clear"], folds=2
    )
    job = _run(run.job)
    assert job.status == Job.Status.SUCCEEDED, job.error
    run.refresh_from_db()
    assert run.results.count() == 4
    assert not run.results.filter(true_rank=1).exists()
    folds = run.summary["llm"]
    assert all(stats["sampling"]["model"] == "tiny-random-gpt2" for stats in folds.values())
    assert sum(sum(s["failures"].values()) for s in folds.values()) == 4


def _judged_texts(study, copies: int = 1) -> None:
    for description in study.descriptions.all():
        for n in range(copies):
            AnonymizedText.objects.create(
                description=description,
                method=f"textwash-model-{n}" if copies > 1 else "textwash-model",
                text=f"PERSON_1 rows in LOCATION_{n}.",
            )


def test_the_intruders_answers_are_rows_and_the_job_result_stays_small(study, llm_env, llm_server):
    from intruder.llm_intruder.models import LLMGuess

    _judged_texts(study)
    job = llm_jobs.llm_intruder_start(study=study, user=study.owner)
    llm_server.queue_answers('["Ada Byrne"]', '["' + "Bo Keane " * 100 + '"]')
    job = _run(job)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert "rows" not in job.result and job.result["answered"] == 2
    assert len(str(job.result)) < 2000
    rows = LLMGuess.objects.filter(job=job)
    assert rows.count() == 2 and all(len(n) <= 200 for r in rows for n in r.guesses)
    # Retried, it asks for nothing it already has.
    sent = len(llm_server.requests)
    Job.objects.filter(pk=job.pk).update(status=Job.Status.FAILED)
    job = _run(jobs.job_retry(job=job))
    assert job.status == Job.Status.SUCCEEDED and len(llm_server.requests) == sent
    assert open_world_llm_results(study)["methods"]["textwash-model"]["n"] == 2


def test_a_cancelled_llm_job_stops_at_once_and_sends_nothing_more(
    study, llm_env, llm_server, monkeypatch
):
    _judged_texts(study, copies=10)  # 20 texts: two rounds of the client
    job = llm_jobs.llm_intruder_start(study=study, user=study.owner)
    llm_server.queue_answers(*['["Ada Byrne"]'] * 20)
    real = jobs.JobProgress.cancelled
    sent_at_cancel: list[int] = []

    def cancel_after_the_first_answer(progress) -> bool:
        if llm_server.requests and not sent_at_cancel:
            sent_at_cancel.append(len(llm_server.requests))
            jobs.job_cancel(job=progress.job)  # the researcher presses Cancel
        return real(progress)

    monkeypatch.setattr(jobs.JobProgress, "cancelled", cancel_after_the_first_answer)
    job = _run(job)
    assert job.status == Job.Status.CANCELLED
    # Concurrency 1: after the cancel, at most the one request already on its way.
    assert len(llm_server.requests) <= sent_at_cancel[0] + 1 < 20


def test_a_changed_threshold_scores_the_llm_guesses_again_as_the_judgments(study):
    """The LLM package's rescoring reaches `judgments_rescore` through its registry (installed
    when the app is ready): the core's scoring service imports none of the package."""
    from intruder.llm_intruder.models import LLMGuess
    from intruder.services.scoring import judgments_rescore

    text = make_text(study=study, description=study.descriptions.first())
    job = make_job(study=study, kind=Job.Kind.LLM_INTRUDER_STUDY)
    guess = LLMGuess.objects.create(
        job=job, anonymized_text=text, guesses=["Ada Byrne"], cosine=0.8, identified=True
    )
    study.identification_threshold = 0.9
    study.save(update_fields=["identification_threshold"])
    judgments_rescore(study=study)
    guess.refresh_from_db()
    assert guess.identified is False and guess.named_other is False
