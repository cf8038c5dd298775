"""The autosave API and the researcher pages: who may reach what, conflicts, bad input."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from intruder.annotation import services
from intruder.annotation.models import ProjectMember, Task
from intruder.models import Job
from tests.annotation.conftest import make_project, mention
from tests.intruder.factories import logged_in, make_user

pytestmark = pytest.mark.django_db


def put(client: Client, url: str, payload) -> object:
    return client.put(url, json.dumps(payload), content_type="application/json")


def own_task(project, user) -> Task:
    return services.task_next(annotator=services.annotator_for_user(project=project, user=user))


def test_researcher_saves_through_the_api_and_a_stale_revision_gets_409(fake_anonymizer):
    project = make_project()
    task = own_task(project, project.owner)
    client = logged_in(project.owner)
    url = reverse("annotation-api", kwargs={"pk": task.pk})
    text = client.get(url).json()["document"]["text"]
    first = put(client, url, {"revision": 0, "mentions": [mention(text, text.split()[0])]})
    assert first.status_code == 200 and first.json()["task"]["revision"] == 1
    stale = put(client, url, {"revision": 0, "mentions": []})
    assert stale.status_code == 409
    assert len(stale.json()["current"]["mentions"]) == 1


@pytest.mark.parametrize(
    "payload",
    [
        {
            "revision": 0,
            "mentions": [
                {
                    "start": 0,
                    "end": 9999,
                    "entity_type": "DATE",
                    "identifier_type": "QUASI",
                    "entity": "e",
                }
            ],
        },
        {"revision": 0, "mentions": "nope"},
        {"revision": -1, "mentions": []},
        {},
        [1, 2],
    ],
)
def test_bad_saves_are_400_never_500(fake_anonymizer, payload):
    project = make_project()
    task = own_task(project, project.owner)
    response = put(
        logged_in(project.owner), reverse("annotation-api", kwargs={"pk": task.pk}), payload
    )
    assert response.status_code == 400
    assert Task.objects.get(pk=task.pk).revision == 0


def test_nobody_reaches_another_annotators_task(fake_anonymizer):
    project = make_project()
    task = own_task(project, project.owner)
    url = reverse("annotation-api", kwargs={"pk": task.pk})
    stranger = logged_in(make_user())
    assert stranger.get(url).status_code == 404
    assert put(stranger, url, {"revision": 0, "mentions": []}).status_code == 404
    assert Client().get(url).status_code in (401, 403)
    crowd = services.annotator_enroll(project=project, prolific_pid="PIDX1")
    crowd_url = reverse("annotation-crowd-api", kwargs={"token": crowd.token, "pk": task.pk})
    assert Client().get(crowd_url).status_code == 404


@pytest.mark.parametrize(
    ("role", "page", "status"),
    [
        (None, "annotation-project", 404),
        (None, "annotation-agreement", 404),
        ("annotator", "annotation-project", 200),
        ("annotator", "annotation-agreement", 404),
        ("annotator", "annotation-evaluate", 404),
        ("manager", "annotation-agreement", 200),
        ("manager", "annotation-evaluate", 200),
    ],
)
def test_pages_by_role(fake_anonymizer, role, page, status):
    project = make_project()
    user = make_user()
    if role:
        services.project_member_set(project=project, user=user, role=role)
    response = logged_in(user).get(reverse(page, kwargs={"slug": project.slug}))
    assert response.status_code == status


def test_anonymous_researcher_pages_redirect_to_login(fake_anonymizer):
    project = make_project()
    response = Client().get(reverse("annotation-project", kwargs={"slug": project.slug}))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_export_download_needs_a_manager(fake_anonymizer):
    project = make_project()
    annotator = make_user()
    services.project_member_set(project=project, user=annotator, role=ProjectMember.Role.ANNOTATOR)
    url = reverse("annotation-export", kwargs={"slug": project.slug, "fmt": "tab"})
    assert logged_in(annotator).get(url).status_code == 404
    response = logged_in(project.owner).get(url)
    assert response.status_code == 200 and response.json() == []
    assert logged_in(project.owner).get(url.replace("/tab/", "/xml/")).status_code == 404


def test_project_is_created_and_texts_uploaded_in_the_browser_flow(fake_anonymizer):
    owner = make_user()
    client = logged_in(owner)
    response = client.post(
        reverse("annotation-project-create"),
        {
            "title": "T",
            "slug": "t-web",
            "scheme": "tab",
            "annotators_per_text": 2,
            "texts_per_annotator": 3,
            "pre_annotate": "on",
        },
    )
    assert response.status_code == 302
    upload = reverse("annotation-add-texts", kwargs={"slug": "t-web"})
    from django.core.files.uploadedfile import SimpleUploadedFile

    bad = SimpleUploadedFile("docs.csv", b"id,text\n1,Ann met Bo in Oslo\n2,\n")
    page = client.post(upload, {"file": bad}, follow=True)
    assert "line 3: field &#x27;text&#x27; is empty" in page.content.decode()
    good = SimpleUploadedFile("docs.csv", b"id,text\n1,Yesterday I met Orla in Oslo\n")
    page = client.post(upload, {"file": good}, follow=True)
    assert "1 added" in page.content.decode()
    document = owner.annotation_projects.get().documents.get()
    assert document.suggestions == []  # the model runs in the worker, not in the request
    assert "Suggestions job" in page.content.decode()
    from intruder.models import Job
    from intruder.services.jobs import job_execute

    job = Job.objects.get(kind="annotation_suggestions")
    assert job_execute(job.pk, heartbeat_interval_s=None).status == Job.Status.SUCCEEDED
    document.refresh_from_db()
    # TAB scheme: the model's PERSON_FIRSTNAME suggestion arrives as PERSON.
    assert {s["category"] for s in document.suggestions} == {"PERSON"}


def test_evaluate_page_scores_an_uploaded_system_file(fake_anonymizer):
    project = make_project()
    task = own_task(project, project.owner)
    text = task.document.text
    services.task_save(task=task, revision=0, mentions=[mention(text, text.split()[0])])
    services.task_submit(task=task)
    from django.core.files.uploadedfile import SimpleUploadedFile

    start = text.index(text.split()[0])
    system = json.dumps({task.document.doc_id: [[start, start + len(text.split()[0])]]})
    response = logged_in(project.owner).post(
        reverse("annotation-evaluate", kwargs={"slug": project.slug}),
        {"system": "file", "file": SimpleUploadedFile("sys.json", system.encode())},
    )
    assert response.status_code == 200
    assert response.context["metrics"]["token_recall"] == 1.0
    assert not Job.objects.filter(kind="annotation_evaluate").exists()  # no model: no job
    broken = logged_in(project.owner).post(
        reverse("annotation-evaluate", kwargs={"slug": project.slug}),
        {"system": "file", "file": SimpleUploadedFile("sys.json", b'{"x": [[0, 1]]}')},
    )
    assert "not in the project" in broken.content.decode()


def test_evaluating_the_model_runs_as_a_job_whose_progress_and_result_the_page_shows(
    fake_anonymizer,
):
    from intruder.services.jobs import job_execute

    project = make_project()
    task = own_task(project, project.owner)
    text = task.document.text
    services.task_save(task=task, revision=0, mentions=[mention(text, text.split()[0])])
    services.task_submit(task=task)
    client = logged_in(project.owner)
    url = reverse("annotation-evaluate", kwargs={"slug": project.slug})
    response = client.post(url, {"system": "model", "threshold": "0.5"})
    assert response.status_code == 302  # the model runs in the worker, not in the request
    job = Job.objects.get(kind="annotation_evaluate")
    assert job.status == Job.Status.QUEUED and job.params["threshold"] == 0.5
    page = client.get(url).content.decode()
    status_url = reverse("researcher-job-status", args=[job.pk])
    assert f'data-job-url="{status_url}"' in page and 'id="summary"' not in page
    # A second click while it waits queues nothing new.
    client.post(url, {"system": "model"})
    assert Job.objects.filter(kind="annotation_evaluate").count() == 1
    job = job_execute(job.pk, heartbeat_interval_s=None)
    assert job.status == Job.Status.SUCCEEDED
    assert job.progress_total > 0 and job.progress_done == job.progress_total
    response = client.get(url)
    assert response.context["metrics"]["system"].endswith("@ threshold 0.5")
    assert 'id="summary"' in response.content.decode()
    # Both per-category measures say how they read the category (issue 40).
    note = response.content.decode().split('id="per-category-note">', 1)[1].split("</p>")[0]
    assert "Per-category recall" in note and "whatever category the system gave it" in note
    assert "Per-category precision" in note and "same category" in note
    # The job status a progress bar polls is the starter's: another user gets a 404.
    assert logged_in(make_user()).get(status_url).status_code == 404


def test_evaluating_without_annotations_says_so_and_queues_nothing(fake_anonymizer):
    project = make_project()
    response = logged_in(project.owner).post(
        reverse("annotation-evaluate", kwargs={"slug": project.slug}), {"system": "spacy"}
    )
    assert response.status_code == 200
    assert "no submitted annotations yet" in response.content.decode()
    assert not Job.objects.filter(kind="annotation_evaluate").exists()


def test_a_studys_psi_annotators_annotate_projects_over_its_texts(fake_anonymizer):
    from intruder.models import StudyMember
    from tests.intruder.factories import make_description, make_member, make_study

    study = make_study()
    make_description(study=study, text="Orla Brennick grew up in Dunmore.")
    project = make_project(owner=study.owner, texts={})
    services.documents_add_from_study(project=project, study=study, what="descriptions")
    annotator, viewer = make_user(), make_user()
    make_member(study=study, user=annotator, role=StudyMember.Role.ANNOTATOR)
    make_member(study=study, user=viewer, role=StudyMember.Role.VIEWER)
    page = reverse("annotation-project", kwargs={"slug": project.slug})
    assert logged_in(annotator).get(page).status_code == 200
    assert logged_in(viewer).get(page).status_code == 404
    assert (
        logged_in(annotator)
        .get(reverse("annotation-agreement", kwargs={"slug": project.slug}))
        .status_code
        == 404
    )
    listed = logged_in(annotator).get(reverse("annotation-projects"))
    assert project.title in listed.content.decode()
    work = logged_in(annotator).get(reverse("annotation-work", kwargs={"slug": project.slug}))
    assert work.status_code == 302 and "/task/" in work["Location"]
