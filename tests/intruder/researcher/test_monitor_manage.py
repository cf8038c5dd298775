"""Monitoring shows steps, times, plots and the full alert; study management (members, clone,
archive) works without the admin. (The preview has its own tests: researcher/test_preview.py.)"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from intruder.models import Study, StudyMember
from intruder.selectors.monitoring import participant_rows, study_is_full, study_progress
from tests.intruder.factories import (
    make_assignment,
    make_judgment,
    make_member,
    make_participant,
    make_study,
    make_text,
    make_user,
)

pytestmark = pytest.mark.django_db

WRITES = re.compile(r"^\s*(INSERT|UPDATE|DELETE)", re.IGNORECASE)


def owner_client(study: Study) -> Client:
    client = Client()
    client.force_login(study.owner)
    return client


def test_participants_page_shows_step_and_debrief_apart_from_started():
    study = make_study(items_per_participant=1, judgments_per_text=1)
    text = make_text(study=study)
    done = make_participant(
        study=study, consented_at=timezone.now(), instructions_seen_at=timezone.now()
    )
    make_judgment(participant=done, text=text)
    make_participant(study=study)  # on the consent page
    rows = {r.step for r in participant_rows(study)}
    assert rows == {"debrief", "consent"}
    progress = study_progress(study)["participants"]
    assert (progress["started"], progress["at_debrief"]) == (1, 1)
    page = owner_client(study).get(reverse("researcher-participants", args=[study.slug]))
    body = page.content.decode()
    assert page.status_code == 200
    assert "Recruitment over time" in body and "Judgments per text" in body
    assert 'role="img" aria-label="Judgments per text: 1 text(s) with 1' in body
    assert "Study full" in body  # the only text has its one judgment
    assert study_is_full(study)


def test_an_active_assignment_holds_a_slot_for_the_full_alert():
    study = make_study(judgments_per_text=1)
    text = make_text(study=study)
    assert not study_is_full(study)
    make_assignment(participant=make_participant(study=study), text=text)
    assert study_is_full(study)


def test_owner_adds_and_removes_a_member_with_a_role():
    study = make_study()
    colleague = make_user(username="colleague")
    client = owner_client(study)
    client.post(
        reverse("researcher-member-add", args=[study.slug]),
        {"username": "colleague", "role": "editor"},
    )
    assert StudyMember.objects.get(study=study, user=colleague).role == "editor"
    client.post(reverse("researcher-member-remove", args=[study.slug, colleague.pk]))
    assert not StudyMember.objects.filter(study=study).exists()


def test_unknown_username_is_reported_next_to_the_field():
    study = make_study()
    response = owner_client(study).post(
        reverse("researcher-member-add", args=[study.slug]),
        {"username": "nobody", "role": "viewer"},
    )
    assert "No account is called “nobody”." in response.content.decode()


def test_editors_cannot_manage_members():
    study = make_study()
    editor = make_member(study=study, role="editor")
    client = Client()
    client.force_login(editor)
    assert client.get(reverse("researcher-manage", args=[study.slug])).status_code == 403


def test_clone_copies_settings_sources_and_targets_but_no_participants():
    source = make_study(kind=Study.Kind.COLLECTION)
    study = make_study(items_per_participant=7, public_title="Reading")
    study.source_studies.set([source])
    make_text(study=study)
    make_participant(study=study)
    owner_client(study).post(
        reverse("researcher-clone", args=[study.slug]), {"slug": "wave-2", "title": "Wave 2"}
    )
    clone = Study.objects.get(slug="wave-2")
    assert (clone.items_per_participant, clone.public_title, clone.is_open) == (7, "Reading", False)
    assert list(clone.source_studies.all()) == [source]
    assert clone.targets.count() == 1
    assert not clone.participants.exists() and not clone.descriptions.exists()
    assert clone.completion_code != study.completion_code


def test_archive_closes_and_lists_apart():
    study = make_study(title="Old wave")
    client = owner_client(study)
    client.post(reverse("researcher-archive", args=[study.slug]), {"archived": "1"})
    study.refresh_from_db()
    assert study.archived_at is not None and not study.is_open
    page = client.get(reverse("researcher-studies"))
    assert page.context["rows"] == [] and page.context["archived"] == [study]
