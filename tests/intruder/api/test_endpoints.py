"""Behaviour of the REST API endpoints for a researcher: filters, paging, edits, tokens."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from intruder.models import AnonymizedText, Job, Participant, PersonGroup, Study
from tests.intruder import factories as f
from tests.intruder.api import RESOURCES

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return f.make_user(username="owner", password="s3cret-pass-1")


@pytest.fixture
def api(owner) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")
    return client


@pytest.fixture
def study(owner) -> Study:
    return f.make_study(owner=owner)


def ids(response) -> set[int]:
    assert response.status_code == 200, response.content
    return {row["id"] for row in response.json()["results"]}


def test_targets_filter_by_study_and_group(api: APIClient, study: Study, owner) -> None:
    famous = f.make_target(study=study, group=PersonGroup.FAMOUS)
    fictitious = f.make_target(study=study, group=PersonGroup.FICTITIOUS)
    elsewhere = f.make_target(study=f.make_study(owner=owner), group=PersonGroup.FAMOUS)

    assert ids(api.get("/api/targets/", {"group": "famous"})) == {famous.pk, elsewhere.pk}
    assert ids(api.get("/api/targets/", {"study": study.pk})) == {famous.pk, fictitious.pk}
    assert ids(api.get("/api/targets/", {"study": study.pk, "group": "famous"})) == {famous.pk}


def test_filter_with_an_unknown_choice_is_a_400_naming_the_filter(api: APIClient) -> None:
    response = api.get("/api/targets/", {"group": "royal"})

    assert response.status_code == 400
    assert "group" in response.json()


def test_anonymized_texts_filter_by_status_and_target_group(api: APIClient, study: Study) -> None:
    draft = f.make_text(study=study, status=AnonymizedText.Status.DRAFT)
    released = f.make_text(study=study)
    famous = f.make_text(
        study=study,
        description=f.make_description(
            study=study, target=f.make_target(study=study, group=PersonGroup.FAMOUS)
        ),
    )

    assert ids(api.get("/api/anonymized-texts/", {"status": "draft"})) == {draft.pk}
    assert ids(api.get("/api/anonymized-texts/", {"status": "released"})) == {
        released.pk,
        famous.pk,
    }
    assert ids(api.get("/api/anonymized-texts/", {"group": "famous"})) == {famous.pk}


def test_participants_and_judgments_filter_by_status_and_identification(
    api: APIClient, study: Study
) -> None:
    done = f.make_participant(study=study, status=Participant.Status.COMPLETED)
    started = f.make_participant(study=study)
    text = f.make_text(study=study)
    hit = f.make_judgment(participant=done, text=text, self_identified=True, identified=True)
    miss = f.make_judgment(participant=started, text=text, slot=2, identified=False)

    assert ids(api.get("/api/participants/", {"status": "completed"})) == {done.pk}
    assert ids(api.get("/api/judgments/", {"identified": "true"})) == {hit.pk}
    assert ids(api.get("/api/judgments/", {"participant": started.pk})) == {miss.pk}


def test_participant_session_token_is_never_in_api_output(api: APIClient, study: Study) -> None:
    participant = f.make_participant(study=study)

    listed = api.get("/api/participants/").content.decode()
    detail = api.get(f"/api/participants/{participant.pk}/").content.decode()

    assert participant.token not in listed
    assert participant.token not in detail
    assert "token" not in api.get(f"/api/participants/{participant.pk}/").json()


def test_lists_are_paged_with_count_and_next_link(api: APIClient, study: Study) -> None:
    for _ in range(5):
        f.make_target(study=study)

    first = api.get("/api/targets/", {"page_size": 2}).json()
    last = api.get("/api/targets/", {"page_size": 2, "page": 3}).json()

    assert first["count"] == 5
    assert len(first["results"]) == 2
    assert "page=2" in first["next"]
    assert len(last["results"]) == 1
    assert last["next"] is None


def test_lists_order_by_a_requested_field(api: APIClient, study: Study) -> None:
    made = [f.make_target(study=study, key=key) for key in ("b", "c", "a")]

    rows = api.get("/api/targets/", {"ordering": "-key"}).json()["results"]

    assert [row["key"] for row in rows] == ["c", "b", "a"]
    assert {row["id"] for row in rows} == {t.pk for t in made}


def test_study_detail_reports_progress_against_the_target(api: APIClient, study: Study) -> None:
    text = f.make_text(study=study)
    f.make_text(study=study)
    f.make_judgment(participant=f.make_participant(study=study), text=text)

    progress = api.get(f"/api/studies/{study.pk}/").json()["progress"]

    assert progress["descriptions"] == 2
    assert progress["judgments_per_text"]["texts"] == 2
    assert progress["judgments_per_text"]["min"] == 0
    assert progress["judgments_per_text"]["target"] == study.judgments_per_text
    assert progress["participants"]["started"] == 1


def test_span_edit_rerenders_the_text_and_bumps_the_revision(api: APIClient, study: Study) -> None:
    description = f.make_description(
        study=study, text="Ada Quill sails from Reykjavik every spring."
    )
    text = f.make_text(
        study=study, description=description, status=AnonymizedText.Status.DRAFT, spans=[]
    )
    spans = [
        {"start": 0, "end": 3, "category": "PERSON_FIRSTNAME"},
        {"start": 21, "end": 30, "category": "LOCATION"},
    ]

    response = api.put(
        f"/api/anonymized-texts/{text.pk}/spans/",
        {"expected_revision": 1, "spans": spans},
        format="json",
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["revision"] == 2
    assert "Reykjavik" not in body["text"]
    assert "Ada" not in body["text"]
    assert [s["text"] for s in body["spans"]] == ["Ada", "Reykjavik"]


def test_stale_span_edit_is_409_and_changes_nothing(api: APIClient, study: Study) -> None:
    text = f.make_text(study=study, status=AnonymizedText.Status.DRAFT, revision=3)
    before = (text.text, text.spans)

    response = api.put(
        f"/api/anonymized-texts/{text.pk}/spans/",
        {"expected_revision": 2, "spans": []},
        format="json",
    )

    assert response.status_code == 409
    assert "expected_revision" in response.json()
    text.refresh_from_db()
    assert (text.text, text.spans, text.revision) == (*before, 3)


@pytest.mark.parametrize(
    ("span", "message"),
    [
        ({"start": 5, "end": 10_000, "category": "LOCATION"}, "outside"),
        ({"start": 0, "end": 3, "category": "HAIR_COLOUR"}, "unknown category"),
    ],
)
def test_invalid_span_is_a_400_that_says_why(
    api: APIClient, study: Study, span: dict, message: str
) -> None:
    text = f.make_text(study=study, status=AnonymizedText.Status.DRAFT)

    response = api.put(
        f"/api/anonymized-texts/{text.pk}/spans/",
        {"expected_revision": 1, "spans": [span]},
        format="json",
    )

    assert response.status_code == 400
    assert message in response.json()["spans"][0]


def test_released_text_cannot_be_edited_until_withdrawn(api: APIClient, study: Study) -> None:
    text = f.make_text(study=study)
    edit = {"expected_revision": 1, "spans": []}

    refused = api.put(f"/api/anonymized-texts/{text.pk}/spans/", edit, format="json")
    withdrawn = api.post(
        f"/api/anonymized-texts/{text.pk}/status/", {"status": "withdrawn"}, format="json"
    )
    accepted = api.put(f"/api/anonymized-texts/{text.pk}/spans/", edit, format="json")

    assert refused.status_code == 400
    assert withdrawn.json()["status"] == "withdrawn"
    assert accepted.status_code == 200


def test_status_change_the_text_does_not_allow_is_a_400(api: APIClient, study: Study) -> None:
    text = f.make_text(study=study)

    response = api.post(
        f"/api/anonymized-texts/{text.pk}/status/", {"status": "released"}, format="json"
    )

    assert response.status_code == 400
    assert "status" in response.json()


def test_job_detail_reports_progress_and_failed_job_can_be_retried(
    api: APIClient, study: Study, owner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("intruder.services.jobs._dispatch", lambda job: None)
    job = f.make_job(study=study, created_by=owner, status=Job.Status.FAILED)
    job.progress_done, job.progress_total = 3, 4
    job.save()

    detail = api.get(f"/api/jobs/{job.pk}/").json()
    retried = api.post(f"/api/jobs/{job.pk}/retry/")
    again = api.post(f"/api/jobs/{job.pk}/retry/")

    assert detail["progress_pct"] == 75.0
    assert retried.json()["status"] == "queued"
    assert again.status_code == 400


def test_study_create_validates_and_refuses_a_taken_slug(api: APIClient, study: Study) -> None:
    taken = api.post(
        "/api/studies/create/",
        {"slug": study.slug, "title": "Copy", "kind": "intruder"},
        format="json",
    )
    bad_group = api.post(
        "/api/studies/create/",
        {"slug": "fresh", "title": "Fresh", "kind": "intruder", "groups": ["royal"]},
        format="json",
    )

    assert taken.status_code == 400
    assert "slug" in taken.json()
    assert bad_group.status_code == 400
    assert "groups" in bad_group.json()
    assert Study.objects.count() == 1


def test_study_update_changes_only_the_given_settings(api: APIClient, study: Study) -> None:
    response = api.patch(
        f"/api/studies/{study.pk}/update/",
        {"judgments_per_text": 5, "groups": ["famous", "fictitious"]},
        format="json",
    )

    assert response.status_code == 200, response.content
    study.refresh_from_db()
    assert (study.judgments_per_text, study.groups) == (5, ["famous", "fictitious"])
    assert study.title == response.json()["title"]


def test_token_endpoint_swaps_a_password_for_the_researchers_token(owner) -> None:
    client = APIClient()

    ok = client.post("/api/auth/token/", {"username": "owner", "password": "s3cret-pass-1"})
    wrong = client.post("/api/auth/token/", {"username": "owner", "password": "nope"})

    assert ok.status_code == 200
    assert ok.json()["token"] == Token.objects.get(user=owner).key
    assert wrong.status_code == 400


def test_drf_create_token_command_prints_a_working_token(owner) -> None:
    out = StringIO()
    call_command("drf_create_token", "owner", stdout=out)
    key = Token.objects.get(user=owner).key

    assert key in out.getvalue()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/studies/").status_code == 200


def test_openapi_schema_documents_every_resource(api: APIClient) -> None:
    response = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    assert response.status_code == 200
    paths = response.json()["paths"]
    for resource in RESOURCES:
        assert f"/api/{resource}/" in paths
        assert f"/api/{resource}/{{id}}/" in paths
    assert "group" in {p["name"] for p in paths["/api/targets/"]["get"]["parameters"]}


def test_a_new_study_starts_closed_and_cannot_open_without_consent(api: APIClient) -> None:
    closed = api.post(
        "/api/studies/create/", {"slug": "s-closed", "title": "C", "kind": "intruder"}, "json"
    )
    no_consent = api.post(
        "/api/studies/create/",
        {"slug": "s-open", "title": "O", "kind": "intruder", "is_open": True},
        format="json",
    )
    with_consent = api.post(
        "/api/studies/create/",
        {
            "slug": "s-open",
            "title": "O",
            "kind": "intruder",
            "is_open": True,
            "consent_text": "You agree to take part.",
        },
        format="json",
    )

    assert closed.status_code == 201, closed.json()
    assert Study.objects.get(slug="s-closed").is_open is False
    assert no_consent.status_code == 400
    assert "consent_text" in no_consent.json()
    assert with_consent.status_code == 201
    assert Study.objects.get(slug="s-open").is_open is True
