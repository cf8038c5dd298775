"""Permission matrix: every researcher page against every role."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test import Client
from django.urls import reverse

from intruder.models import Job, StudyMember
from tests.intruder.factories import (
    make_description,
    make_job,
    make_member,
    make_study,
    make_text,
    make_user,
)

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "other", "viewer", "editor", "owner", "superuser")


@dataclass(frozen=True)
class Page:
    name: str
    method: str
    writes: bool  # needs editor rights

    def url(self, world: dict) -> str:
        study, text, job = world["study"], world["text"], world["job"]
        by_name = {
            "study": ("researcher-study", {"slug": study.slug}),
            "edit": ("researcher-study-edit", {"slug": study.slug}),
            "edit-post": ("researcher-study-edit", {"slug": study.slug}),
            "import": ("researcher-study-import", {"slug": study.slug}),
            "anonymize": ("researcher-study-anonymize", {"slug": study.slug}),
            "review": ("researcher-review", {"slug": study.slug}),
            "review-text": ("researcher-review-text", {"slug": study.slug, "pk": text.pk}),
            "review-post": ("researcher-review-text", {"slug": study.slug, "pk": text.pk}),
            "release": ("researcher-release", {"slug": study.slug}),
            "export": (
                "researcher-export",
                {"slug": study.slug, "table": "judgments", "fmt": "csv"},
            ),
            "job-status": ("researcher-job-status", {"pk": job.pk}),
            "job-retry": ("researcher-job-retry", {"pk": job.pk}),
        }
        name, kwargs = by_name[self.name]
        return reverse(name, kwargs=kwargs)


STUDY_PAGES = [
    Page("study", "get", False),
    Page("edit", "get", True),
    Page("edit-post", "post", True),
    Page("import", "post", True),
    Page("anonymize", "post", True),
    Page("review", "get", False),
    Page("review-text", "get", False),
    Page("review-post", "post", True),
    Page("release", "post", True),
    Page("export", "get", False),
    Page("job-status", "get", False),
    Page("job-retry", "post", True),
]


@pytest.fixture
def world() -> dict:
    owner = make_user()
    study = make_study(owner=owner)
    description = make_description(study=study)
    text = make_text(study=study, description=description, status="draft")
    job = make_job(study=study, status=Job.Status.FAILED)
    users = {
        "owner": owner,
        "other": make_user(),
        "viewer": make_member(study=study, role=StudyMember.Role.VIEWER),
        "editor": make_member(study=study, role=StudyMember.Role.EDITOR),
        "superuser": make_user(is_superuser=True, is_staff=True),
    }
    return {"study": study, "text": text, "job": job, "users": users}


def expected_outcome(role: str, page: Page) -> str:
    if role == "anonymous":
        return "login"
    if role == "other":
        return "not_found"
    if role == "viewer" and page.writes:
        return "forbidden"
    return "allowed"


def client_for(world: dict, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(world["users"][role])
    return client


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("page", STUDY_PAGES, ids=lambda p: p.name)
def test_researcher_page_access_follows_role(world: dict, role: str, page: Page) -> None:
    client = client_for(world, role)
    url = page.url(world)
    data = {"action": "release", "revision": "1", "title": "x"} if page.method == "post" else {}
    response = getattr(client, page.method)(url, data)
    outcome = expected_outcome(role, page)
    if outcome == "login":
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    elif outcome == "not_found":
        assert response.status_code == 404
    elif outcome == "forbidden":
        assert response.status_code == 403
    else:
        assert response.status_code in (200, 302, 400), response.status_code
        if response.status_code == 302:
            assert not response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("role", ROLES)
def test_study_list_shows_only_studies_the_user_may_see(world: dict, role: str) -> None:
    client = client_for(world, role)
    hidden = make_study(title="Hidden study of someone else")
    response = client.get(reverse("researcher-studies"))
    if role == "anonymous":
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
        return
    body = response.content.decode()
    assert response.status_code == 200
    assert (world["study"].title in body) is (role != "other")
    assert (hidden.title in body) is (role == "superuser")


def test_progress_json_lists_only_visible_studies(world: dict) -> None:
    client = client_for(world, "other")
    make_study(owner=world["users"]["other"], slug="mine")
    data = client.get(reverse("researcher-progress")).json()
    assert [s["slug"] for s in data["studies"]] == ["mine"]


def test_anonymous_progress_json_redirects_to_login() -> None:
    response = Client().get(reverse("researcher-progress"))
    assert response.status_code == 302


def test_viewer_cannot_change_a_text_by_post(world: dict) -> None:
    client = client_for(world, "viewer")
    text = world["text"]
    client.post(
        reverse("researcher-review-text", kwargs={"slug": world["study"].slug, "pk": text.pk}),
        {"action": "release", "revision": text.revision},
    )
    text.refresh_from_db()
    assert text.status == "draft"


def test_annotator_role_gets_no_researcher_access(world: dict) -> None:
    annotator = make_member(study=world["study"], role=StudyMember.Role.ANNOTATOR)
    client = Client()
    client.force_login(annotator)
    response = client.get(reverse("researcher-study", kwargs={"slug": world["study"].slug}))
    assert response.status_code == 404


def test_login_page_renders_and_logs_in(world: dict) -> None:
    client = Client()
    assert client.get("/accounts/login/").status_code == 200
    response = client.post(
        "/accounts/login/",
        {"username": world["users"]["owner"].username, "password": "pw-for-tests-1", "next": "/r/"},
    )
    assert response.status_code == 302
    assert response["Location"] == "/r/"
    assert client.get("/r/").status_code == 200


def test_site_root_leads_to_the_researcher_pages_behind_login() -> None:
    client = Client()
    response = client.get("/", follow=True)
    assert response.redirect_chain[0] == (reverse("researcher-studies"), 302)
    assert response.request["PATH_INFO"] == reverse("login")
