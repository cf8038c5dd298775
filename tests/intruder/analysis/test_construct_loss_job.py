"""Construct loss as a background job, the analysis page around it, and what a study without
analysable texts is told."""

import math
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from intruder.analysis.services import construct_loss_latest
from intruder.models import AnonymizedText, Job
from intruder.selectors.jobs import job_status
from intruder.services.jobs import job_execute
from tests.intruder.factories import (
    make_description,
    make_job,
    make_member,
    make_study,
    make_target,
    make_text,
)

pytestmark = pytest.mark.django_db


def _client_for(client, study):
    client.force_login(study.owner)
    return client


def test_only_drafts_says_what_is_there_and_what_is_missing(client):
    study = make_study()
    for _ in range(3):
        make_text(study=study, status=AnonymizedText.Status.DRAFT)
    page = _client_for(client, study).get(reverse("analysis-study", args=[study.slug]))
    assert page.status_code == 200
    body = page.content.decode()
    assert "3 description(s) and 3 anonymized text(s): 3 draft(s), 0 withdrawn, 0 released" in body
    assert "Release texts on the review page" in body


def test_study_without_descriptions_is_pointed_at_import_or_a_collection(client):
    study = make_study()
    body = _client_for(client, study).get(reverse("analysis-study", args=[study.slug])).content
    assert "no descriptions yet" in body.decode()


def test_viewer_cannot_start_a_construct_loss_job(client):
    study = make_study()
    viewer = make_member(study=study)
    client.force_login(viewer)
    response = client.post(reverse("analysis-construct-loss", args=[study.slug]))
    assert response.status_code == 403
    assert not Job.objects.exists()


def test_starting_twice_queues_one_job(client):
    study = make_study()
    _client_for(client, study)
    for _ in range(2):
        client.post(reverse("analysis-construct-loss", args=[study.slug]))
    assert Job.objects.filter(kind="construct_loss", study=study).count() == 1


def test_queued_job_without_a_worker_says_so():
    job = make_job(study=make_study())
    assert job_status(job)["waiting_note"] == ""  # just queued: a worker may be about to claim
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=3))
    job.refresh_from_db()
    assert "No worker has picked this job up" in job_status(job)["waiting_note"]
    assert "manage.py run_worker" in job_status(job)["waiting_note"]


def test_queued_job_behind_a_busy_worker_says_it_waits():
    study = make_study()
    make_job(study=study, status=Job.Status.RUNNING, heartbeat_at=timezone.now())
    job = make_job(study=study, kind="construct_loss")  # one active job per study and kind
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=3))
    job.refresh_from_db()
    assert job_status(job)["waiting_note"] == "Waiting: the worker is busy with another job."


@pytest.mark.slow
def test_construct_loss_job_on_a_study_that_overflowed_pingouin(client):
    """400 texts whose every pronoun is masked: t far beyond pingouin's range (real spaCy)."""
    study = make_study()
    target = make_target(study=study, name="Ada Quill")
    for i in range(400):
        pronouns = " ".join(["He sails and he fishes."] * (4 + i % 2))
        description = make_description(
            study=study, target=target, text=f"Ada Quill keeps boats. {pronouns}"
        )
        make_text(
            study=study,
            description=description,
            text="PERSON_FIRSTNAME_1 keeps boats. "
            + " ".join(["PRONOUN sails and PRONOUN fishes."] * (4 + i % 2)),
        )
    _client_for(client, study).post(reverse("analysis-construct-loss", args=[study.slug]))
    job = Job.objects.get(kind="construct_loss", study=study)
    job = job_execute(job.pk, heartbeat_interval_s=None)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.progress_done == job.progress_total == 1200
    _, done, tables = construct_loss_latest(study)
    assert done is not None and done.result["n_texts"] == 400
    pron = tables["construct_loss"].set_index("pos").loc["PRON"]
    assert pron["n_texts"] == 400 and pron["t"] > 166.8
    assert pron["bf10"] == math.inf and pron["log10_bf10"] > 308
    page = client.get(reverse("analysis-study", args=[study.slug]))
    assert page.status_code == 200 and "log10_bf10" in page.content.decode()
    download = client.get(reverse("analysis-table", args=[study.slug, "construct_loss", "csv"]))
    assert download.status_code == 200 and b"PRON" in download.content
