"""Issue 22, findings 9, 12 and 13: attack-run API validation, job cancel, one active job per
study and kind (in the database), the token endpoint's lockout as 429, tokens out of logs."""

from __future__ import annotations

import logging

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from rest_framework.test import APIClient

from intruder.log_redaction import RedactingGunicornLogger, redact
from intruder.models import Job, StudyMember
from intruder.risk.models import AttackRun
from intruder.services import jobs
from tests.intruder.factories import make_job, make_member, make_participant, make_user
from tests.intruder.risk_fixtures import risk_study

pytestmark = pytest.mark.django_db


def api_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def run_payload(study, **overrides):
    payload = {"study": study.pk, "attacks": ["tfidf"], "methods": ["clear"], "folds": 3}
    payload.update(overrides)
    return payload


# Finding 9 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides",
    [
        {"config": {"top_k": "abc"}},
        {"config": {"top_k": 2**70}},
        {"config": {"seed": 2**31}},
        {"config": {"use_document_curation": 1}},
        {"config": {"finetuning_learning_rate": "fast"}},
        {"config": {"precision": ["fp32"]}},
        {"seed": 2**70},
        {"seed": 2**31},
        {"seed": -1},
    ],
)
def test_bad_attack_run_settings_get_400_and_store_nothing(overrides):
    study = risk_study(per_person=2)
    response = api_for(study.owner).post(
        "/api/attack-runs/create/", run_payload(study, **overrides), format="json"
    )
    assert response.status_code == 400, response.content
    assert not AttackRun.objects.exists() and not Job.objects.exists()


def test_the_largest_seed_postgresql_holds_is_accepted():
    study = risk_study(per_person=2)
    response = api_for(study.owner).post(
        "/api/attack-runs/create/", run_payload(study, seed=2**31 - 1), format="json"
    )
    assert response.status_code == 201, response.content
    assert AttackRun.objects.get().seed == 2**31 - 1


# Finding 13: one active job per study and kind -------------------------------------------


def test_a_double_click_queues_one_attack_run_and_answers_409():
    study = risk_study(per_person=2)
    client = api_for(study.owner)
    first = client.post("/api/attack-runs/create/", run_payload(study), format="json")
    second = client.post("/api/attack-runs/create/", run_payload(study), format="json")
    assert (first.status_code, second.status_code) == (201, 409)
    assert AttackRun.objects.count() == 1 and Job.objects.count() == 1


def test_the_database_refuses_a_second_active_job_of_a_kind_for_a_study():
    study = risk_study(per_person=2)
    make_job(study=study, kind="anonymize_study")
    with pytest.raises(IntegrityError), transaction.atomic():
        make_job(study=study, kind="anonymize_study", status=Job.Status.RUNNING)
    make_job(study=study, kind="construct_loss")  # another kind is free
    make_job(study=study, kind="anonymize_study", status=Job.Status.FAILED)  # finished is free
    with pytest.raises(jobs.JobAlreadyActive):
        jobs.job_enqueue(kind="anonymize_study", study=study)


@pytest.mark.parametrize(
    ("kind", "params", "other"),
    [
        (Job.Kind.ANNOTATION_SUGGESTIONS, {"project": 7}, {"project": 8}),
        (Job.Kind.ATTACK_FOLD, {"run": 3, "fold": 1, "parent": 9}, {"run": 3, "fold": 2}),
    ],
)
def test_the_database_refuses_a_second_active_job_of_no_study_on_the_same_thing(
    kind, params, other
):
    first = make_job(kind=kind, params=params)
    with pytest.raises(IntegrityError), transaction.atomic():
        make_job(kind=kind, params=params, status=Job.Status.RUNNING)
    make_job(kind=kind, params=other)  # another project / fold is free
    make_job(kind=kind, params=params, status=Job.Status.FAILED)  # finished is free
    with pytest.raises(jobs.JobAlreadyActive) as busy:
        jobs.job_enqueue(kind=kind, params=params)
    assert busy.value.job == first


def test_a_second_click_on_suggestions_gets_the_job_already_at_work(monkeypatch):
    from intruder.annotation import services as annotation
    from tests.annotation.conftest import make_project

    project = make_project(suggest=False)
    first, created = annotation.suggestions_job_start(project=project, user=None)
    assert created
    # The click that lost the race to the database: its look for an active job saw none.
    monkeypatch.setattr(annotation, "suggestions_job_latest", lambda **kwargs: None)
    assert annotation.suggestions_job_start(project=project, user=None) == (first, False)


def test_a_failed_job_is_not_retried_beside_an_active_one():
    study = risk_study(per_person=2)
    failed = make_job(study=study, kind="anonymize_study", status=Job.Status.FAILED)
    make_job(study=study, kind="anonymize_study")
    with pytest.raises(jobs.JobAlreadyActive):
        jobs.job_retry(job=failed)


# Finding 12: jobs can be cancelled ---------------------------------------------------------


def test_a_cancelled_queued_job_is_never_claimed():
    job = make_job()
    jobs.job_cancel(job=job)
    assert job.status == Job.Status.CANCELLED
    assert jobs.job_claim_next(worker="w:1") is None


def test_a_running_job_stops_at_its_next_progress_report_and_stays_cancelled():
    seen = []

    def long_task(job, progress):
        for i in range(100):
            if i == 3:
                jobs.job_cancel(job=Job.objects.get(pk=job.pk))  # the researcher clicks
            progress(i, 100)
            seen.append(i)
        return {"done": True}

    jobs.TASKS["cancel_test"] = long_task
    try:
        job = make_job(kind="cancel_test")
        jobs.job_execute(job.pk, heartbeat_interval_s=None)
    finally:
        jobs.TASKS.pop("cancel_test")
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED and job.result == {}
    assert seen == [0, 1, 2]


def test_only_owners_and_editors_cancel_through_the_api():
    study = risk_study(per_person=2)
    job = make_job(study=study)
    viewer = make_member(study=study, role=StudyMember.Role.VIEWER)
    assert api_for(viewer).post(f"/api/jobs/{job.pk}/cancel/").status_code == 403
    response = api_for(study.owner).post(f"/api/jobs/{job.pk}/cancel/")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    again = api_for(study.owner).post(f"/api/jobs/{job.pk}/cancel/")
    assert again.status_code == 200
    job.status = Job.Status.SUCCEEDED
    job.save()
    assert api_for(study.owner).post(f"/api/jobs/{job.pk}/cancel/").status_code == 400


# Finding 13: lockout 429, tokens out of logs ---------------------------------------------


def test_a_locked_out_token_request_answers_429(settings):
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 3
    settings.INTRUDER_TOKEN_RATE = None
    make_user(username="carol", password="correct-horse-9")
    api = APIClient(REMOTE_ADDR="203.0.113.11")
    codes = [
        api.post("/api/auth/token/", {"username": "carol", "password": f"g{i}"}).status_code
        for i in range(3)
    ]
    locked = api.post("/api/auth/token/", {"username": "carol", "password": "correct-horse-9"})
    assert codes[:2] == [400, 400]
    assert locked.status_code == 429


def test_participant_tokens_stay_out_of_request_logs(caplog):
    study = risk_study(per_person=2)
    participant = make_participant(study=study)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        Client().get(f"/p/{participant.token}x/")
        Client().get(f"/a/p/{participant.token}/")
        Client().post(f"/p/{participant.token}/finish/", {})
    assert caplog.records, "Django logs 404s and 405s as warnings"
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert participant.token not in text and "[redacted]" in text


def test_the_gunicorn_access_log_redacts_tokens_and_prolific_ids():
    from types import SimpleNamespace

    from gunicorn.config import Config

    logger = RedactingGunicornLogger(Config())
    token = "s3cr3tT0kenValue"
    request = SimpleNamespace(
        method="GET",
        uri=f"/p/{token}/judge/",
        path=f"/p/{token}/judge/",
        query="",
        version=(1, 1),
        headers=[],
    )
    response = SimpleNamespace(status="200 OK", sent=10, headers=[], response_length=10)
    environ = {
        "REMOTE_ADDR": "127.0.0.1",
        "RAW_URI": f"/p/{token}/judge/",
        "REQUEST_METHOD": "GET",
        "PATH_INFO": f"/p/{token}/judge/",
        "QUERY_STRING": "",
        "SERVER_PROTOCOL": "HTTP/1.1",
    }
    from datetime import timedelta

    atoms = logger.atoms(response, request, environ, timedelta(seconds=0.1))
    assert token not in str(atoms)
    assert (
        redact("/s/x/?PROLIFIC_PID=abc123&STUDY_ID=s") == "/s/x/?PROLIFIC_PID=[redacted]&STUDY_ID=s"
    )


# Finding 12: bounded background uploads ----------------------------------------------------


def test_an_oversized_background_upload_is_refused_and_queues_nothing(settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.intruder.factories import logged_in

    settings.INTRUDER_BACKGROUND_MAX_MB = 1
    study = risk_study(per_person=2)
    key = study.targets.values_list("key", flat=True).first()
    big = ("target,text\n" + f"{key},{'word ' * 60_000}\n" * 5).encode()
    response = logged_in(study.owner).post(
        f"/r/{study.slug}/risk/runs/",
        {
            "attacks": ["tfidf"],
            "methods": ["clear"],
            "background": "uploaded",
            "folds": 3,
            "seed": 0,
            "documents": [SimpleUploadedFile("bg.csv", big)],
        },
    )
    assert response.status_code == 302
    assert not AttackRun.objects.exists() and not Job.objects.exists()
    api = api_for(study.owner).post(
        "/api/attack-runs/create/",
        run_payload(study, background="uploaded", background_documents={key: "w " * 600_000}),
        format="json",
    )
    assert api.status_code in (400, 413)
    assert not AttackRun.objects.exists()
