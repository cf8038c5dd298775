"""The review page's actions are small forms: a malformed post names its field, saves nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from intruder.views.researcher.review_actions import ACTIONS, REVISION_MISSING
from tests.intruder.factories import make_study, make_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def text():
    study = make_study()
    return make_text(study=study)


def _post(text, data):
    client = Client()
    client.force_login(text.description.study.owner)
    url = reverse("researcher-review-text", args=[text.description.study.slug, text.pk])
    return client.post(url, data, follow=True)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"action": "remove_span", "index": "0"}, REVISION_MISSING),
        ({"action": "remove_span", "index": "0", "revision": "two"}, REVISION_MISSING),
        (
            {"action": "set_bounds", "index": "0", "start": "x", "end": "3", "revision": "1"},
            "start:",
        ),
        ({"action": "remove_span", "index": "-1", "revision": "1"}, "index:"),
        ({"action": "explode", "revision": "1"}, "Unknown action"),
    ],
)
def test_a_malformed_action_is_refused_with_its_field_and_changes_nothing(text, data, words):
    before = (text.revision, list(text.spans), text.text, text.status)
    response = _post(text, data)
    assert response.status_code == 200
    assert words in response.content.decode()
    text.refresh_from_db()
    assert (text.revision, list(text.spans), text.text, text.status) == before


def test_every_button_of_the_page_has_its_form() -> None:
    repo = Path(__file__).resolve().parents[3]
    template = (repo / "intruder/templates/researcher/review_text.html").read_text()
    buttons = set(re.findall(r'name="action" value="([a-z_]+)"', template))
    assert buttons and buttons <= set(ACTIONS)
