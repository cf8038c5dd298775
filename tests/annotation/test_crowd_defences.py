"""Crowd annotation keeps the study side's defences (issue 22, findings 1, 2, 3 and 6).

A project holding a study's original descriptions counts as linked to every intruder study
over the same targets: the two are never open together, the PIDs of one are refused by the
other, and crowd entry gets the Prolific study-ID check and the enrolment rate limit.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from intruder.annotation import services
from intruder.annotation.models import Annotator, Project, ProjectMember, Task
from intruder.enrolment import EnrolmentRefused, entry_link
from intruder.models import Study, StudyMember
from intruder.services.participants import participant_enroll
from intruder.services.studies import study_update
from tests.annotation.conftest import make_project, mention
from tests.intruder.factories import (
    logged_in,
    make_description,
    make_member,
    make_participant,
    make_study,
    make_target,
    make_texts,
    make_user,
)

pytestmark = pytest.mark.django_db
STUDY_ID = "64f0c0ffee0000000000beef"


@pytest.fixture(autouse=True)
def _fresh_throttle_history():
    cache.clear()
    yield
    cache.clear()


def originals_project(*, is_open: bool = False):
    """A writer study's descriptions in a crowd project, and an intruder study on its targets."""
    writers = make_study(kind=Study.Kind.COLLECTION, is_open=False)
    intruders = make_study(owner=writers.owner, is_open=False)
    for _ in range(3):
        target = make_target(study=writers)
        make_description(study=writers, target=target, text=f"{target.name} keeps bees.")
        make_target(study=intruders, name=target.name, key=f"k-{target.pk}")
    make_texts(study=intruders, count=2)
    project = make_project(owner=writers.owner, texts={}, suggest=False, is_open=False)
    services.documents_add_from_study(project=project, study=writers, what="descriptions")
    if is_open:
        services.project_open_set(project=project, is_open=True)
    return project, writers, intruders


def test_projects_start_closed():
    project = services.project_create(
        owner=make_user(), slug="fresh", title="Fresh", scheme="textwash"
    )
    assert project.is_open is False
    assert Project._meta.get_field("is_open").default is False


def test_a_project_of_originals_and_its_intruder_study_are_never_open_together():
    project, _, intruders = originals_project(is_open=True)
    with pytest.raises(ValidationError):
        study_update(study=intruders, is_open=True)
    services.project_open_set(project=project, is_open=False)
    study_update(study=intruders, is_open=True)
    with pytest.raises(ValidationError):
        services.project_open_set(project=project, is_open=True)


def test_crowd_entry_is_closed_while_the_linked_intruder_study_is_open():
    project, _, intruders = originals_project(is_open=True)
    Project.objects.filter(pk=project.pk).update(is_open=True)
    Study.objects.filter(pk=intruders.pk).update(is_open=True)  # opened past the checks
    entry = reverse("annotation-crowd-entry", kwargs={"slug": project.slug})
    response = Client().get(entry + "?PROLIFIC_PID=NEWPID1")
    assert response.status_code == 403
    assert not Annotator.objects.filter(prolific_pid="NEWPID1").exists()


def test_an_enrolled_annotator_sees_no_original_while_the_linked_study_is_open(fake_anonymizer):
    project, _, intruders = originals_project(is_open=True)
    annotator = services.annotator_enroll(project=project, prolific_pid="EARLYPID")
    services.annotator_instructions_confirm(annotator=annotator)
    task = services.task_next(annotator=annotator)
    services.project_open_set(project=project, is_open=False)
    study_update(study=intruders, is_open=True)
    client = Client()
    home = client.get(reverse("annotation-crowd-home", kwargs={"token": annotator.token}))
    api = client.get(
        reverse("annotation-crowd-api", kwargs={"token": annotator.token, "pk": task.pk})
    )
    assert home.status_code == 503 and api.status_code == 404
    for name in intruders.targets.values_list("name", flat=True):
        assert name not in home.content.decode() + api.content.decode()


def test_an_intruder_pid_is_refused_by_the_linked_project():
    project, _, intruders = originals_project(is_open=True)
    make_participant(study=intruders, prolific_pid="JUDGEPID")
    with pytest.raises(EnrolmentRefused) as refused:
        services.annotator_enroll(project=project, prolific_pid="JUDGEPID")
    assert refused.value.code == EnrolmentRefused.LINKED


def test_a_crowd_annotator_pid_is_refused_by_the_linked_intruder_study():
    project, _, intruders = originals_project(is_open=True)
    services.annotator_enroll(project=project, prolific_pid="CROWDPID")
    services.project_open_set(project=project, is_open=False)
    study_update(study=intruders, is_open=True)
    with pytest.raises(EnrolmentRefused) as refused:
        participant_enroll(study=intruders, prolific_pid="CROWDPID")
    assert refused.value.code == EnrolmentRefused.LINKED
    assert participant_enroll(study=intruders, prolific_pid="OTHERPID").created


def test_an_intruder_study_is_linked_to_a_project_of_its_own_descriptions():
    intruders = make_study(is_open=False)
    make_texts(study=intruders, count=2)
    project = make_project(owner=intruders.owner, texts={}, suggest=False, is_open=False)
    services.documents_add_from_study(project=project, study=intruders, what="descriptions")
    services.project_open_set(project=project, is_open=True)
    with pytest.raises(ValidationError):
        study_update(study=intruders, is_open=True)


def test_crowd_entry_checks_the_prolific_study_id():
    project, _, _ = originals_project(is_open=True)
    Project.objects.filter(pk=project.pk).update(prolific_study_id=STUDY_ID)
    entry = reverse("annotation-crowd-entry", kwargs={"slug": project.slug})
    wrong = Client().get(entry + "?PROLIFIC_PID=PIDA&STUDY_ID=somethingelse")
    right = Client().get(entry + f"?PROLIFIC_PID=PIDB&STUDY_ID={STUDY_ID}")
    assert wrong.status_code == 403 and right.status_code == 302
    assert list(project.annotators.values_list("prolific_pid", flat=True)) == ["PIDB"]


@override_settings(INTRUDER_ENROLMENT_RATE="3/hour")
def test_crowd_entry_is_rate_limited_per_client_but_resuming_is_not():
    project, _, _ = originals_project(is_open=True)
    entry = reverse("annotation-crowd-entry", kwargs={"slug": project.slug})
    client = Client(REMOTE_ADDR="203.0.113.9")
    statuses = [client.get(entry + f"?PROLIFIC_PID=MADEUP{i}").status_code for i in range(6)]
    assert statuses == [302, 302, 302, 429, 429, 429]
    assert client.get(entry + "?PROLIFIC_PID=MADEUP0").status_code == 302  # resume
    assert project.annotators.count() == 3


# Finding 2: only owners, editors and viewers pull a study's texts ---------------------------


def test_crowd_entry_without_pid_resumes_the_same_browser_only():
    project, _, _ = originals_project(is_open=True)
    entry = reverse("annotation-crowd-entry", kwargs={"slug": project.slug})
    browser = Client()
    first = browser.get(entry + "?PROLIFIC_PID=PIDA")
    again = browser.get(entry)
    assert again.status_code == 302 and again["Location"] == first["Location"]
    stranger = Client().get(entry)
    assert stranger.status_code == 400 and b"Missing Prolific ID" in stranger.content
    assert project.annotators.count() == 1


def test_a_studys_psi_annotator_cannot_copy_its_texts_into_her_own_project():
    study = make_study()
    make_texts(study=study, count=2)
    annotator = make_member(study=study, role=StudyMember.Role.ANNOTATOR)
    own = make_project(owner=annotator, texts={}, suggest=False, slug="own")
    client = logged_in(annotator)
    form = client.get(reverse("annotation-project", kwargs={"slug": own.slug}))
    assert study.title not in form.content.decode()
    client.post(
        reverse("annotation-add-texts", kwargs={"slug": own.slug}),
        {"study": study.pk, "what": "descriptions"},
    )
    client.post(
        reverse("annotation-add-texts", kwargs={"slug": own.slug}),
        {"study": study.pk, "what": "anonymized"},
    )
    assert own.documents.count() == 0
    with pytest.raises(ValidationError):
        services.documents_add_from_study(
            project=own, study=study, what="descriptions", user=annotator
        )


def test_psi_annotator_access_comes_only_from_projects_of_the_studys_researchers():
    study = make_study()
    make_texts(study=study, count=2)
    annotator = make_member(study=study, role=StudyMember.Role.ANNOTATOR)
    outsider_project = make_project(owner=make_user(), texts={}, suggest=False, slug="outside")
    services.documents_add_from_study(project=outsider_project, study=study, what="descriptions")
    page = reverse("annotation-project", kwargs={"slug": outsider_project.slug})
    assert logged_in(annotator).get(page).status_code == 404
    editor = make_member(study=study, role=StudyMember.Role.EDITOR)
    editors_project = make_project(owner=editor, texts={}, suggest=False, slug="editors")
    services.documents_add_from_study(project=editors_project, study=study, what="descriptions")
    page = reverse("annotation-project", kwargs={"slug": editors_project.slug})
    assert logged_in(annotator).get(page).status_code == 200


def test_viewers_may_copy_a_studys_texts_but_withdrawn_texts_never_travel():
    from intruder.models import AnonymizedText

    study = make_study()
    texts = make_texts(study=study, count=3)
    AnonymizedText.objects.filter(pk=texts[0].pk).update(status="withdrawn")
    viewer = make_member(study=study, role=StudyMember.Role.VIEWER)
    project = make_project(owner=viewer, texts={}, suggest=False, slug="viewer")
    counts = services.documents_add_from_study(
        project=project, study=study, what="anonymized", user=viewer
    )
    assert counts["created"] == 2


# Finding 3: the tasks API checks the current project role ----------------------------------


def test_a_removed_member_loses_her_task_through_the_api(fake_anonymizer):
    project = make_project()
    member = make_user()
    services.project_member_set(project=project, user=member, role=ProjectMember.Role.ANNOTATOR)
    seat = services.annotator_for_user(project=project, user=member)
    task = services.task_next(annotator=seat)
    url = reverse("annotation-api", kwargs={"pk": task.pk})
    client = logged_in(member)
    assert client.get(url).status_code == 200
    ProjectMember.objects.filter(project=project, user=member).delete()
    assert client.get(url).status_code == 404
    text = task.document.text
    put = client.put(
        url,
        json.dumps({"revision": 0, "mentions": [mention(text, text.split()[0])]}),
        content_type="application/json",
    )
    assert put.status_code == 404
    task.refresh_from_db()
    assert task.revision == 0 and not task.mentions.exists()


# Finding 6: the completion code only after the work, and abandoned tasks expire ------------


def crowd_client(project, pid: str):
    client = Client()
    entry = client.get(
        reverse("annotation-crowd-entry", kwargs={"slug": project.slug}) + f"?PROLIFIC_PID={pid}"
    )
    token = entry["Location"].rstrip("/").rsplit("/", 1)[-1]
    client.post(reverse("annotation-crowd-start", kwargs={"token": token}))
    return client, token


def test_no_completion_code_without_submitted_work(fake_anonymizer):
    project = make_project(texts={}, suggest=False)
    client, token = crowd_client(project, "IDLEPID")
    page = client.get(reverse("annotation-crowd-home", kwargs={"token": token}))
    assert project.completion_code not in page.content.decode()
    assert Annotator.objects.get(token=token).status == Annotator.Status.STARTED


def test_the_completion_code_comes_after_the_quota(fake_anonymizer):
    project = make_project(texts_per_annotator=1, annotators_per_text=1)
    client, token = crowd_client(project, "WORKPID")
    home = reverse("annotation-crowd-home", kwargs={"token": token})
    assert project.completion_code not in client.get(home).content.decode()
    task = Annotator.objects.get(token=token).tasks.get()
    # A post for another task id changes nothing, and gives no code.
    client.post(reverse("annotation-crowd-submit", kwargs={"token": token}), {"task": "0"})
    assert project.completion_code not in client.get(home).content.decode()
    client.post(reverse("annotation-crowd-submit", kwargs={"token": token}), {"task": task.pk})
    assert project.completion_code in client.get(home).content.decode()


def test_an_abandoned_crowd_task_expires_and_frees_its_slot(fake_anonymizer):
    project = make_project(annotators_per_text=1, texts_per_annotator=3, task_time_limit_minutes=30)
    first = services.annotator_enroll(project=project, prolific_pid="SLOWPID")
    held = services.task_next(annotator=first)
    Task.objects.filter(pk=held.pk).update(updated_at=timezone.now() - timedelta(minutes=31))
    second = services.annotator_enroll(project=project, prolific_pid="NEXTPID")
    claimed = [services.task_next(annotator=second)]
    for _ in range(2):
        services.task_submit(task=claimed[-1])
        claimed.append(services.task_next(annotator=second))
    assert held.document_id in {t.document_id for t in claimed}
    held.refresh_from_db()
    first.refresh_from_db()
    assert held.status == Task.Status.RELEASED
    assert first.status == Annotator.Status.TIMED_OUT
    client = Client()
    page = client.get(reverse("annotation-crowd-home", kwargs={"token": first.token}))
    assert "Time limit" in page.content.decode()
    assert project.completion_code not in page.content.decode()


# Finding 7: model work goes to the worker, and only managers start it ----------------------


def test_adding_texts_queues_one_suggestions_job_and_runs_no_model_in_the_request(monkeypatch):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from intruder.models import Job
    from intruder.services import anonymization

    def no_model_here():
        raise AssertionError("the anonymizer ran inside the request")

    monkeypatch.setattr(anonymization, "get_anonymizer", no_model_here)
    project = make_project(texts={}, suggest=False)
    client = logged_in(project.owner)
    url = reverse("annotation-add-texts", kwargs={"slug": project.slug})
    for n in range(2):
        content = f"id,text\nn{n},Orla Brennick met Bo in Oslo.\n".encode()
        client.post(url, {"file": SimpleUploadedFile("t.csv", content)})
    assert project.documents.count() == 2
    job = Job.objects.get(kind="annotation_suggestions")  # the second upload joined it
    assert job.params == {"project": project.pk} and job.created_by == project.owner
    page = client.get(reverse("annotation-project", kwargs={"slug": project.slug}))
    assert f"Suggestions job #{job.pk}" in page.content.decode()


def test_project_annotators_cannot_add_texts_or_start_model_work(fake_anonymizer):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from intruder.models import Job

    project = make_project(texts={}, suggest=False)
    member = make_user()
    services.project_member_set(project=project, user=member, role=ProjectMember.Role.ANNOTATOR)
    response = logged_in(member).post(
        reverse("annotation-add-texts", kwargs={"slug": project.slug}),
        {"file": SimpleUploadedFile("t.csv", b"id,text\nx,Orla met Bo.\n")},
    )
    assert response.status_code == 404
    assert not project.documents.exists() and not Job.objects.exists()


def test_crowd_and_study_pages_show_the_same_prolific_link_parameters():
    project, writers, _ = originals_project()
    client = logged_in(writers.owner)
    study_page = client.get(reverse("researcher-study", kwargs={"slug": writers.slug}))
    project_page = client.get(reverse("annotation-project", kwargs={"slug": project.slug}))
    for page, entry in (
        (study_page, reverse("participant-entry", kwargs={"slug": writers.slug})),
        (project_page, reverse("annotation-crowd-entry", kwargs={"slug": project.slug})),
    ):
        link = entry_link(f"http://testserver{entry}")
        assert link.endswith("&SESSION_ID={{%SESSION_ID%}}")
        assert escape(link) in page.content.decode()
