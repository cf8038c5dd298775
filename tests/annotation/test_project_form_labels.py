"""The new-project form speaks in words, not field names (issue 40)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.intruder.factories import logged_in, make_user

pytestmark = pytest.mark.django_db


def test_the_new_project_form_shows_no_raw_field_names():
    html = logged_in(make_user()).get(reverse("annotation-project-create")).content.decode()
    for raw in (
        "Pre annotate",
        "Is open",
        "Show others work",
        "Annotators per text:",
        "Task time limit minutes",
        "Slug",
    ):
        assert f">{raw}" not in html, raw
    for label in (
        "Suggest the anonymizer's spans",
        "Open for crowd annotators",
        "Time limit per text (minutes)",
        "Short name for links",
    ):
        assert label in html.replace("&#x27;", "'"), label
