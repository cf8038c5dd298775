"""A fake Prolific (intruder.prolific.fake_server) on loopback, and settings pointing at it."""

from __future__ import annotations

import re

import pytest

from intruder.models import PersonGroup, Study
from intruder.prolific.client import ProlificClient
from intruder.prolific.fake_server import FakeProlific
from intruder.prolific.services import study_draft_create, study_transition
from tests.intruder.factories import make_study, make_texts


@pytest.fixture
def fake_prolific():
    fake = FakeProlific()
    fake.serve()
    yield fake
    fake.stop()


@pytest.fixture
def prolific_settings(settings, fake_prolific):
    """Configure the platform for the fake: token, API URL, workspace and webhook secret."""
    fake_prolific._secret_create({})
    settings.PROLIFIC_API_TOKEN = fake_prolific.token
    settings.PROLIFIC_API_URL = fake_prolific.base_url
    settings.PROLIFIC_WORKSPACE_ID = fake_prolific.workspace_id
    settings.PROLIFIC_WEBHOOK_SECRET = fake_prolific.webhook_secret
    return settings


@pytest.fixture
def client_for(fake_prolific):
    def make(**kwargs) -> ProlificClient:
        kwargs = {"token": fake_prolific.token, "backoff": 0.0, "sleep": lambda s: None, **kwargs}
        return ProlificClient(base_url=fake_prolific.base_url, **kwargs)

    return make


@pytest.fixture
def confirmed():
    """Post an action, read the digest off its preview, and confirm it (as a researcher)."""

    def send(client, url: str, data: dict):
        preview = client.post(url, data)
        assert preview.status_code == 200, preview
        digest = re.search(r'name="confirm" value="([0-9a-f]{64})"', preview.content.decode())
        assert digest, "no preview to confirm"
        return client.post(url, {**data, "confirm": digest[1]})

    return send


@pytest.fixture
def published(prolific_settings, client_for):
    """An intruder study (3 famous texts) with its Prolific draft created and published."""
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=3)
    make_texts(study=study, count=3, group=PersonGroup.FAMOUS)
    client = client_for()
    study_draft_create(
        study=study,
        client=client,
        entry_url="https://study.example.org/s/winter/",
        places=10,
        reward_minor=150,
        estimated_minutes=12,
    )
    study_transition(study=study, client=client, action="publish")
    return study, client
