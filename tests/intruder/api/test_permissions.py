"""Permission matrix of the REST API: every endpoint against every kind of caller.

Callers: anonymous, a researcher unrelated to the study (own token), members by role
(viewer, annotator, editor), the owner, and a superuser. The API grants what the researcher
pages grant: viewers read, editors and owners also write, PSI annotators get no researcher
access. Another study's rows never show up: lists leave them out, details are 404 (not 403,
which would confirm they exist).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from intruder.models import AnonymizedText, Job, Study, StudyMember
from tests.intruder import factories as f
from tests.intruder.api import RESOURCES

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "stranger", "viewer", "annotator", "editor", "owner", "superuser"]
READERS = {"viewer", "editor", "owner", "superuser"}
NO_ACCESS = {"stranger", "annotator"}


@dataclass
class World:
    """One study with a row of every kind, its people, and another researcher's study."""

    users: dict[str, Any]
    ids: dict[str, int]
    other_ids: dict[str, int]


def _populate(owner: Any) -> dict[str, int]:
    study = f.make_study(owner=owner)
    text = f.make_text(study=study, status=AnonymizedText.Status.DRAFT)
    participant = f.make_participant(study=study)
    judged = f.make_text(study=study)
    judgment = f.make_judgment(participant=participant, text=judged)
    job = f.make_job(study=study, created_by=owner, status=Job.Status.FAILED)
    return {
        "studies": study.pk,
        "targets": text.description.target_id,
        "descriptions": text.description_id,
        "anonymized-texts": text.pk,
        "participants": participant.pk,
        "judgments": judgment.pk,
        "jobs": job.pk,
    }


@pytest.fixture
def world() -> World:
    owner = f.make_user(username="owner")
    ids = _populate(owner)
    other_ids = _populate(f.make_user(username="other-owner"))
    study = Study.objects.get(pk=ids["studies"])
    users = {
        "anonymous": None,
        "stranger": f.make_user(username="stranger"),
        "owner": owner,
        "superuser": f.make_user(username="root", is_superuser=True, is_staff=True),
    }
    for role in (StudyMember.Role.VIEWER, StudyMember.Role.ANNOTATOR, StudyMember.Role.EDITOR):
        users[role] = f.make_member(study=study, user=f.make_user(username=role), role=role)
    return World(users=users, ids=ids, other_ids=other_ids)


def client_for(world: World, caller: str) -> APIClient:
    """Return an API client authenticated with the caller's token (none for anonymous)."""
    client = APIClient()
    user = world.users[caller]
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("resource", RESOURCES)
def test_list_shows_the_study_rows_only_to_owner_members_and_superuser(
    world: World, caller: str, resource: str
) -> None:
    response = client_for(world, caller).get(f"/api/{resource}/", {"page_size": 500})

    if caller == "anonymous":
        assert response.status_code == 401
        return
    assert response.status_code == 200
    listed = {row["id"] for row in response.json()["results"]}
    assert (world.ids[resource] in listed) == (caller in READERS)
    assert (world.other_ids[resource] in listed) == (caller == "superuser")


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("resource", RESOURCES)
def test_detail_is_200_for_readers_404_for_strangers_401_for_anonymous(
    world: World, caller: str, resource: str
) -> None:
    response = client_for(world, caller).get(f"/api/{resource}/{world.ids[resource]}/")

    expected = 401 if caller == "anonymous" else 404 if caller in NO_ACCESS else 200
    assert response.status_code == expected
    if expected == 200:
        assert response.json()["id"] == world.ids[resource]


WRITE_EXPECTED = {
    "anonymous": 401,
    "stranger": 404,
    "annotator": 404,
    "viewer": 403,
    "editor": 200,
    "owner": 200,
    "superuser": 200,
}


@pytest.mark.parametrize("caller", CALLERS)
def test_only_editors_and_owner_edit_spans(world: World, caller: str) -> None:
    text = AnonymizedText.objects.get(pk=world.ids["anonymized-texts"])

    response = client_for(world, caller).put(
        f"/api/anonymized-texts/{text.pk}/spans/",
        {"expected_revision": text.revision, "spans": []},
        format="json",
    )

    assert response.status_code == WRITE_EXPECTED[caller]
    text.refresh_from_db()
    assert (text.revision == 2) == (WRITE_EXPECTED[caller] == 200)


@pytest.mark.parametrize("caller", CALLERS)
def test_only_editors_and_owner_release_texts(world: World, caller: str) -> None:
    text_id = world.ids["anonymized-texts"]

    response = client_for(world, caller).post(
        f"/api/anonymized-texts/{text_id}/status/", {"status": "released"}, format="json"
    )

    assert response.status_code == WRITE_EXPECTED[caller]
    released = AnonymizedText.objects.get(pk=text_id).status == AnonymizedText.Status.RELEASED
    assert released == (WRITE_EXPECTED[caller] == 200)


@pytest.mark.parametrize("caller", CALLERS)
def test_only_editors_and_owner_retry_jobs(
    world: World, caller: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dispatched: list[int] = []
    monkeypatch.setattr("intruder.services.jobs._dispatch", lambda job: dispatched.append(job.pk))
    job_id = world.ids["jobs"]

    response = client_for(world, caller).post(f"/api/jobs/{job_id}/retry/")

    assert response.status_code == WRITE_EXPECTED[caller]
    requeued = Job.objects.get(pk=job_id).status == Job.Status.QUEUED
    assert requeued == (WRITE_EXPECTED[caller] == 200)
    assert dispatched == ([job_id] if requeued else [])


@pytest.mark.parametrize("caller", CALLERS)
def test_only_editors_and_owner_change_study_settings(world: World, caller: str) -> None:
    study_id = world.ids["studies"]

    response = client_for(world, caller).patch(
        f"/api/studies/{study_id}/update/", {"title": "Renamed"}, format="json"
    )

    assert response.status_code == WRITE_EXPECTED[caller]
    renamed = Study.objects.get(pk=study_id).title == "Renamed"
    assert renamed == (WRITE_EXPECTED[caller] == 200)


@pytest.mark.parametrize("caller", CALLERS)
def test_any_researcher_creates_a_study_they_then_own(world: World, caller: str) -> None:
    response = client_for(world, caller).post(
        "/api/studies/create/",
        {"slug": f"new-{caller}", "title": "New", "kind": "intruder"},
        format="json",
    )

    if caller == "anonymous":
        assert response.status_code == 401
        assert not Study.objects.filter(slug="new-anonymous").exists()
        return
    assert response.status_code == 201
    assert Study.objects.get(slug=f"new-{caller}").owner == world.users[caller]
    assert response.json()["role"] == "owner"


@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/", "/api/redoc/"])
def test_schema_and_docs_deny_anonymous_and_serve_researchers(world: World, path: str) -> None:
    assert client_for(world, "anonymous").get(path).status_code == 401
    assert client_for(world, "stranger").get(path).status_code == 200


def test_inactive_researcher_token_is_refused(world: World) -> None:
    client = client_for(world, "owner")
    world.users["owner"].is_active = False
    world.users["owner"].save()

    assert client.get("/api/studies/").status_code == 401
