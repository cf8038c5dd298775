"""Study settings have sane ranges in the form, the API and the database.

Issue: the form and the API accepted judgments_per_text=99999999999 and
time_limit_minutes=99999999999999 (and the form a time limit of 0); a huge time limit gave
participants a 500 and crashed the expiry sweep of every study.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from intruder.models import (
    MAX_JUDGMENTS_PER_TEXT,
    MAX_TIME_LIMIT_MINUTES,
    Assignment,
    Participant,
    Study,
)
from intruder.services.assignment import studies_release_expired
from tests.intruder.factories import (
    STUDY_FORM,
    make_assignment,
    make_participant,
    make_study,
    make_text,
    make_user,
)

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = [
    ("judgments_per_text", 99999999999),
    ("judgments_per_text", 0),
    ("judgments_per_text", MAX_JUDGMENTS_PER_TEXT + 1),
    ("time_limit_minutes", 99999999999999),
    ("time_limit_minutes", 0),
    ("time_limit_minutes", MAX_TIME_LIMIT_MINUTES + 1),
    ("items_per_participant", 100000),
    ("min_description_chars", 10**9),
    ("identification_threshold", 1.5),
]


@pytest.mark.parametrize(("field", "value"), OUT_OF_RANGE)
def test_the_form_refuses_out_of_range_settings(field: str, value: float) -> None:
    client = Client()
    client.force_login(make_user())
    response = client.post(reverse("researcher-study-create"), {**STUDY_FORM, field: value})
    assert response.status_code == 200
    assert field in response.context["form"].errors
    assert not Study.objects.exists()


@pytest.mark.parametrize(("field", "value"), OUT_OF_RANGE)
def test_the_api_refuses_out_of_range_settings(field: str, value: float) -> None:
    owner = make_user()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")
    body = {"slug": "bounded", "title": "Bounded", "kind": "intruder", field: value}
    created = api.post("/api/studies/create/", body, format="json")
    assert created.status_code == 400 and field in created.json()
    study = make_study(owner=owner)
    patched = api.patch(f"/api/studies/{study.pk}/update/", {field: value}, format="json")
    assert patched.status_code == 400 and field in patched.json()


def test_the_schema_states_the_ranges() -> None:
    api = APIClient()
    api.force_authenticate(make_user())
    schema = api.get("/api/schema/", {"format": "json"}).json()
    settings = schema["components"]["schemas"]["PatchedStudyUpdateInputRequest"]["properties"]
    assert settings["time_limit_minutes"]["maximum"] == MAX_TIME_LIMIT_MINUTES
    assert settings["judgments_per_text"]["maximum"] == MAX_JUDGMENTS_PER_TEXT


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("judgments_per_text", 5000),
        ("time_limit_minutes", 0),
        ("time_limit_minutes", 2_000_000),
        ("items_per_participant", 5000),
    ],
)
def test_the_database_refuses_out_of_range_settings(field: str, value: int) -> None:
    study = make_study()
    with pytest.raises(IntegrityError), transaction.atomic():
        Study.objects.filter(pk=study.pk).update(**{field: value})


def test_one_failing_study_does_not_stop_the_expiry_sweep_of_the_others(monkeypatch) -> None:
    broken, fine = make_study(slug="broken"), make_study(slug="fine")
    for study in (broken, fine):
        participant = make_participant(study=study, group="fictitious")
        make_assignment(participant=participant, text=make_text(study=study))
    Assignment.objects.update(assigned_at=timezone.now() - timedelta(hours=3))
    from intruder.services import assignment

    real = assignment.study_release_expired

    def fail_on_broken(*, study, now=None):
        if study.slug == "broken":
            raise OverflowError("date value out of range")  # what a 10^14-minute limit did
        return real(study=study, now=now)

    monkeypatch.setattr(assignment, "study_release_expired", fail_on_broken)
    sweep = studies_release_expired()
    assert sweep.released == 1
    assert Participant.objects.get(study=fine).status == Participant.Status.TIMED_OUT
    assert Participant.objects.get(study=broken).status == Participant.Status.STARTED


# The form takes its bounds and constraint names from the model (issue 27, item 6): these
# catch the drift that had happened (a form max of 1000 where the model allowed 200, and
# constraint names from before migration 0005).

NUMERIC_SETTINGS = [
    "items_per_participant",
    "judgments_per_text",
    "min_description_chars",
    "time_limit_minutes",
    "identification_threshold",
    "attention_checks",
]


@pytest.mark.parametrize("name", NUMERIC_SETTINGS)
def test_the_form_bounds_are_the_models(name: str) -> None:
    from intruder.views.researcher.forms import StudyForm
    from intruder.web.model_bounds import field_bounds

    model_bounds = field_bounds(Study._meta.get_field(name))
    field = StudyForm().fields[name]
    assert "max_value" in model_bounds
    assert (field.min_value, field.max_value) == (
        model_bounds.get("min_value", 0),
        model_bounds["max_value"],
    )


def test_the_form_allows_as_many_texts_per_intruder_as_the_model_and_no_more() -> None:
    from intruder.models import MAX_ITEMS_PER_PARTICIPANT
    from intruder.views.researcher.forms import StudyForm

    field = StudyForm().fields["items_per_participant"]
    assert field.max_value == MAX_ITEMS_PER_PARTICIPANT == 200
    assert field.widget.attrs["max"] == MAX_ITEMS_PER_PARTICIPANT
    over = StudyForm(data={**STUDY_FORM, "items_per_participant": MAX_ITEMS_PER_PARTICIPANT + 1})
    assert "items_per_participant" in over.errors
    at_max = StudyForm(data={**STUDY_FORM, "items_per_participant": MAX_ITEMS_PER_PARTICIPANT})
    assert at_max.is_valid(), at_max.errors
