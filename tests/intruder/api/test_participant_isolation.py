"""Participants have no way into the REST API.

Participants are not Django users: their session holds a participant token, which neither
session nor token authentication accepts. Whatever a participant's browser sends, the API
answers 401 and no data.
"""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from intruder.models import Participant
from tests.intruder import factories as f

pytestmark = pytest.mark.django_db

API_PATHS = [
    "/api/studies/",
    "/api/targets/",
    "/api/descriptions/",
    "/api/anonymized-texts/",
    "/api/participants/",
    "/api/judgments/",
    "/api/jobs/",
    "/api/schema/",
]


@pytest.fixture
def enrolled() -> tuple[Client, Participant]:
    """Return a browser-like client that enrolled and consented in an intruder study."""
    study = f.make_study(items_per_participant=2)
    for _ in range(3):
        f.make_text(study=study)
    client = Client()
    entry = client.get(f"/s/{study.slug}/", {"PROLIFIC_PID": "5f0c2b7e9a1d4c3b2a1f0e9d"})
    assert entry.status_code == 302
    participant = Participant.objects.get(prolific_pid="5f0c2b7e9a1d4c3b2a1f0e9d")
    client.post(f"/p/{participant.token}/consent/", {"decision": "agree"})
    participant.refresh_from_db()
    assert participant.consented_at is not None
    return client, participant


@pytest.mark.parametrize("path", API_PATHS)
def test_participant_browser_session_gets_no_api_access(enrolled, path: str) -> None:
    client, participant = enrolled

    response = client.get(path)

    assert response.status_code == 401
    assert participant.study.title not in response.content.decode()


@pytest.mark.parametrize("path", API_PATHS)
def test_participant_token_is_not_an_api_token(enrolled, path: str) -> None:
    _, participant = enrolled
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {participant.token}")

    response = client.get(path)

    assert response.status_code == 401


def test_participant_cannot_obtain_an_api_token_with_their_ids(enrolled) -> None:
    _, participant = enrolled

    response = APIClient().post(
        "/api/auth/token/",
        {"username": participant.prolific_pid, "password": participant.token},
    )

    assert response.status_code == 400
    assert "token" not in response.json()


def test_participant_pages_never_link_to_the_api(enrolled) -> None:
    client, participant = enrolled

    page = client.get(f"/p/{participant.token}/", follow=True).content.decode()

    assert "/api/" not in page
