"""Django admin: every model is registered and its pages render for a superuser."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from intruder.models import Job
from tests.intruder.factories import (
    make_job,
    make_judgment,
    make_participant,
    make_study,
    make_text,
    make_user,
)

pytestmark = pytest.mark.django_db

MODELS = list(apps.get_app_config("intruder").get_models())


def test_every_intruder_model_is_in_the_admin() -> None:
    assert [m.__name__ for m in MODELS if not admin.site.is_registered(m)] == []


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_admin_list_and_change_pages_render(model) -> None:
    study = make_study()
    text = make_text(study=study)
    make_judgment(participant=make_participant(study=study), text=text)
    make_job(study=study)
    client = Client()
    client.force_login(make_user(is_staff=True, is_superuser=True))
    meta = model._meta
    response = client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
    assert response.status_code == 200
    obj = model.objects.first()
    if obj is not None:
        url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
        assert client.get(url).status_code == 200


def test_admin_never_shows_participant_tokens() -> None:
    participant = make_participant(study=make_study())
    client = Client()
    client.force_login(make_user(is_staff=True, is_superuser=True))
    url = reverse("admin:intruder_participant_change", args=[participant.pk])
    assert participant.token not in client.get(url).content.decode()


def test_admin_retry_action_requeues_failed_jobs() -> None:
    failed = make_job(status=Job.Status.FAILED)
    done = make_job(status=Job.Status.SUCCEEDED)
    client = Client()
    client.force_login(make_user(is_staff=True, is_superuser=True))
    client.post(
        reverse("admin:intruder_job_changelist"),
        {"action": "retry_jobs", "_selected_action": [failed.pk, done.pk]},
    )
    failed.refresh_from_db()
    done.refresh_from_db()
    assert (failed.status, done.status) == ("queued", "succeeded")
