"""With a token and the study's Prolific ID, a participant Prolific does not know holds nothing."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from intruder.models import Participant, PersonGroup, Study
from tests.intruder.factories import make_study, make_texts

pytestmark = pytest.mark.django_db

PROLIFIC_STUDY = "64f0c0ffee0000000000beef"


@pytest.fixture
def study(prolific_settings, fake_prolific) -> Study:
    study = make_study(
        kind=Study.Kind.INTRUDER,
        items_per_participant=1,
        judgments_per_text=1,
        prolific_study_id=PROLIFIC_STUDY,
    )
    make_texts(study=study, count=3, group=PersonGroup.FAMOUS)
    fake_prolific.studies[PROLIFIC_STUDY] = {"id": PROLIFIC_STUDY, "status": "ACTIVE"}
    return study


def enter(study: Study, pid: str, session: str):
    url = reverse("participant-entry", kwargs={"slug": study.slug})
    return Client().get(f"{url}?PROLIFIC_PID={pid}&STUDY_ID={PROLIFIC_STUDY}&SESSION_ID={session}")


def test_a_made_up_pid_without_a_submission_is_refused_and_holds_nothing(study):
    response = enter(study, "MADEUP01", "000000000000000000000000")
    assert response.status_code == 403
    assert "Prolific does not know" in response.content.decode()
    assert not Participant.objects.exists()


def test_a_session_of_another_participant_is_refused(study, fake_prolific):
    session = fake_prolific.submission_start(PROLIFIC_STUDY, "REALPID1")
    assert enter(study, "IMPOSTOR", session).status_code == 403
    assert enter(study, "REALPID1", session).status_code == 302
    assert Participant.objects.get().group == PersonGroup.FAMOUS


def test_a_returned_submission_cannot_enrol(study, fake_prolific):
    session = fake_prolific.submission_start(PROLIFIC_STUDY, "GONE0001")
    fake_prolific.submission_set_status(session, "RETURNED")
    assert enter(study, "GONE0001", session).status_code == 403
    assert not Participant.objects.exists()


def test_when_prolific_cannot_be_reached_new_participants_wait(study, fake_prolific, settings):
    session = fake_prolific.submission_start(PROLIFIC_STUDY, "WAITING1")
    settings.PROLIFIC_API_URL = "http://127.0.0.1:9/api/v1/"
    settings.PROLIFIC_TIMEOUT_SECONDS = 0.2
    response = enter(study, "WAITING1", session)
    assert response.status_code == 403
    assert "could not be checked just now" in response.content.decode()


def test_without_a_token_the_study_works_as_before(settings):
    settings.PROLIFIC_API_TOKEN = ""
    study = make_study(kind=Study.Kind.INTRUDER, prolific_study_id=PROLIFIC_STUDY)
    make_texts(study=study, count=3, group=PersonGroup.FAMOUS)
    assert enter(study, "ANYONE01", "whatever").status_code == 302
