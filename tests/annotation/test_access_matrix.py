"""Access matrix of the annotation app and the job actions (issue 22).

Every identity the issue lists (study owner, editor, viewer, study PSI annotator, project
manager, project annotator, removed member, crowd annotator, anonymous) against every
annotation page and API endpoint, and the job cancel actions. Allowed: the page works (200,
or the redirect of a successful post). Refused: 404 for logged-in researchers (the project
does not exist for them), the login redirect or 401/403 for anonymous callers.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test import Client
from django.urls import reverse

from intruder.annotation import services
from intruder.annotation.models import ProjectMember
from intruder.models import Job, StudyMember
from tests.annotation.conftest import make_project
from tests.intruder.factories import (
    logged_in,
    make_job,
    make_member,
    make_study,
    make_texts,
    make_user,
)

pytestmark = pytest.mark.django_db

IDENTITIES = [
    "anonymous",
    "owner",
    "editor",
    "viewer",
    "psi_annotator",
    "manager",
    "annotator",
    "removed",
    "crowd",
]
READERS = {"owner", "manager", "annotator", "psi_annotator"}
MANAGERS = {"owner", "manager"}


@dataclass
class World:
    project: object
    study: object
    users: dict
    tasks: dict
    crowd_token: str
    crowd_task: int


@pytest.fixture
def world(fake_anonymizer) -> World:
    study = make_study()
    make_texts(study=study, count=4)
    users = {
        "owner": study.owner,
        "editor": make_member(study=study, role=StudyMember.Role.EDITOR),
        "viewer": make_member(study=study, role=StudyMember.Role.VIEWER),
        "psi_annotator": make_member(study=study, role=StudyMember.Role.ANNOTATOR),
        "manager": make_user(),
        "annotator": make_user(),
        "removed": make_user(),
    }
    project = make_project(owner=study.owner, texts={}, annotators_per_text=8)
    services.documents_add_from_study(project=project, study=study, what="anonymized")
    services.suggestions_compute(project=project)
    for name, role in (
        ("manager", "manager"),
        ("annotator", "annotator"),
        ("removed", "annotator"),
    ):
        services.project_member_set(project=project, user=users[name], role=role)
    tasks = {}
    for name in ("owner", "manager", "annotator", "psi_annotator", "removed"):
        seat = services.annotator_for_user(project=project, user=users[name])
        tasks[name] = services.task_next(annotator=seat).pk
    ProjectMember.objects.filter(project=project, user=users["removed"]).delete()
    crowd = services.annotator_enroll(project=project, prolific_pid="CROWDPIDMATRIX")
    services.annotator_instructions_confirm(annotator=crowd)
    crowd_task = services.task_next(annotator=crowd).pk
    return World(project, study, users, tasks, crowd.token, crowd_task)


def client_for(world: World, who: str) -> Client:
    if who in ("anonymous", "crowd"):
        return Client()
    return logged_in(world.users[who])


SLUG = object()  # stands for the project's slug in the URL arguments
LOGGED_IN = set(IDENTITIES) - {"anonymous", "crowd"}
PAGES = {
    # name: (method, URL name, arguments, query, who may)
    "project list": ("get", "annotation-projects", (), "", LOGGED_IN),
    "project page": ("get", "annotation-project", (SLUG,), "", READERS),
    "work": ("get", "annotation-work", (SLUG,), "", READERS),
    "agreement": ("get", "annotation-agreement", (SLUG,), "", MANAGERS),
    "agreement csv": ("get", "annotation-agreement", (SLUG,), "?format=csv", MANAGERS),
    "evaluate": ("get", "annotation-evaluate", (SLUG,), "", MANAGERS),
    "export csv": ("get", "annotation-export", (SLUG, "csv"), "", MANAGERS),
    "add texts": ("post", "annotation-add-texts", (SLUG,), "", MANAGERS),
    "import layers": ("post", "annotation-import", (SLUG,), "", MANAGERS),
    "open/close": ("post", "annotation-project-open", (SLUG,), "", MANAGERS),
    # Managers read the members list; changing it is the owner's (test_members_page.py).
    "members": ("get", "annotation-members", (SLUG,), "", MANAGERS),
}


@pytest.mark.parametrize("page", sorted(PAGES))
@pytest.mark.parametrize("who", IDENTITIES)
def test_annotation_pages_follow_the_matrix(world: World, who: str, page: str) -> None:
    method, name, arguments, query, allowed = PAGES[page]
    arguments = [world.project.slug if a is SLUG else a for a in arguments]
    response = getattr(client_for(world, who), method)(reverse(name, args=arguments) + query)
    if who in allowed:
        assert response.status_code in (200, 302), response.status_code
        if response.status_code == 302:
            assert "/accounts/login/" not in response["Location"]
    elif who in ("anonymous", "crowd"):
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    else:
        assert response.status_code == 404


@pytest.mark.parametrize(
    "owner_of_task", ["owner", "manager", "annotator", "psi_annotator", "removed"]
)
@pytest.mark.parametrize("who", IDENTITIES)
def test_the_tasks_api_serves_only_the_current_member_her_own_task(
    world: World, who: str, owner_of_task: str
) -> None:
    url = reverse("annotation-api", args=[world.tasks[owner_of_task]])
    response = client_for(world, who).get(url)
    if who == owner_of_task and who != "removed":
        assert response.status_code == 200
        page = client_for(world, who).get(
            reverse("annotation-task", args=[world.project.slug, world.tasks[who]])
        )
        assert page.status_code == 200
    elif who in ("anonymous", "crowd"):
        assert response.status_code in (401, 403)
    else:
        assert response.status_code == 404


@pytest.mark.parametrize("who", IDENTITIES)
def test_crowd_pages_open_only_with_the_crowd_annotators_own_token(world: World, who: str) -> None:
    token = world.crowd_token if who == "crowd" else "not-a-token"
    home = client_for(world, who).get(reverse("annotation-crowd-home", args=[token]))
    api = client_for(world, who).get(
        reverse("annotation-crowd-api", args=[token, world.crowd_task])
    )
    expected = 200 if who == "crowd" else 404
    assert (home.status_code, api.status_code) == (expected, expected)
    if who == "crowd":  # a researcher's task id through the crowd token: not hers
        other = Client().get(
            reverse("annotation-crowd-api", args=[token, world.tasks["annotator"]])
        )
        assert other.status_code == 404


@pytest.mark.parametrize("who", IDENTITIES)
def test_only_owners_and_editors_cancel_a_studys_job(world: World, who: str) -> None:
    job = make_job(study=world.study, kind="construct_loss")
    api = client_for(world, who).post(f"/api/jobs/{job.pk}/cancel/")
    job.refresh_from_db()
    if who in ("owner", "editor"):
        assert api.status_code == 200 and job.status == Job.Status.CANCELLED
        return
    assert job.status == Job.Status.QUEUED
    expected = {"anonymous": 401, "crowd": 401, "viewer": 403}.get(who, 404)
    assert api.status_code == expected
    page = client_for(world, who).post(reverse("researcher-job-cancel", args=[job.pk]))
    job.refresh_from_db()
    assert job.status == Job.Status.QUEUED and page.status_code in (302, 403, 404)
    if who in ("anonymous", "crowd"):
        assert "/accounts/login/" in page["Location"]
