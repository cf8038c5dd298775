"""The agreement page after new annotations: the older result is shown labelled while one
job per project computes the current one; the downloads are of the current annotations."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from intruder.annotation import services
from intruder.annotation.models import Task
from intruder.annotation.pages import AGREEMENT_PAGE
from intruder.models import Job
from intruder.reports import refresh as report_refresh
from intruder.reports.models import ComputedReport
from intruder.services.jobs import job_execute
from tests.annotation.conftest import make_project, mention
from tests.intruder.factories import logged_in, make_user

pytestmark = pytest.mark.django_db

TEXTS = {"a": "Ann Lee sings in Leeds.", "b": "Ann Lee paints in York."}


def submit(project, annotator, doc_id: str, slot: int) -> None:
    document = project.documents.get(doc_id=doc_id)
    task = Task.objects.create(document=document, annotator=annotator, slot=slot)
    services.task_save(task=task, revision=0, mentions=[mention(document.text, "Ann Lee")])
    services.task_submit(task=task)


@pytest.fixture
def annotated(fake_anonymizer):
    project = make_project(texts=TEXTS, suggest=False)
    first = services.annotator_enroll(project=project, prolific_pid="AAA1")
    second = services.annotator_enroll(project=project, prolific_pid="BBB2")
    submit(project, first, "a", 1)
    submit(project, first, "b", 1)
    submit(project, second, "a", 2)
    return project, second


def test_agreement_shows_the_older_result_labelled_until_the_job_stored_the_current(annotated):
    project, second = annotated
    client = logged_in(project.owner)
    url = reverse("annotation-agreement", kwargs={"slug": project.slug})
    body = client.get(url).content.decode()
    assert "from 3 submitted annotations" in body and "Not yet updated" not in body
    assert ComputedReport.objects.filter(project=project, study__isnull=True).count() == 1

    submit(project, second, "b", 2)
    response = client.get(url)
    body = response.content.decode()
    assert "Not yet updated" in body and "1 new submitted annotation since" in body
    assert response.context["result"]["documents"] == 1  # the older result, not a blank page
    job = Job.objects.get(kind=Job.Kind.REFRESH_REPORTS)
    assert job.study is None and job.params == {"project": project.pk}
    assert reverse("researcher-job-status", args=[job.pk]) in body
    client.get(url)  # another view while it waits queues nothing new
    assert Job.objects.filter(kind=Job.Kind.REFRESH_REPORTS).count() == 1

    # The CSV/JSON download is of the current annotations meanwhile.
    current = json.loads(client.get(url + "?format=json").content)
    assert current["documents"] == 2

    job = job_execute(job.pk, heartbeat_interval_s=None)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.result["computed"] == [f"{AGREEMENT_PAGE}()"]
    response = client.get(url)
    assert "Not yet updated" not in response.content.decode()
    assert response.context["result"]["documents"] == 2


def test_another_manager_sees_the_label_without_a_job_they_cannot_poll(annotated):
    from intruder.annotation.models import ProjectMember

    project, second = annotated
    manager = make_user()
    ProjectMember.objects.create(project=project, user=manager, role=ProjectMember.Role.MANAGER)
    url = reverse("annotation-agreement", kwargs={"slug": project.slug})
    logged_in(project.owner).get(url)
    submit(project, second, "b", 2)
    logged_in(project.owner).get(url)  # the owner's view queued the job
    body = logged_in(manager).get(url).content.decode()
    assert "Not yet updated" in body and "reload this page in a moment" in body
    assert "researcher-job-status" not in body and "/jobs/" not in body


def test_a_projects_refresh_job_is_one_at_a_time(annotated):
    project, _ = annotated
    owner = report_refresh.ReportOwner(project=project)
    job, created = report_refresh.reports_refresh_start(owner=owner)
    again, created_again = report_refresh.reports_refresh_start(owner=owner)
    assert created and not created_again and again.pk == job.pk
