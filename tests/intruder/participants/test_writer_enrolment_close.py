"""Writer enrolments do not outlive the close (issue 22, finding 11).

Consent is what shows a writer their target persons. An ID enrolled while the writer study
was open must not consent after it closed (when the intruder study over the same persons
may be open) and so learn the names the intruders are asked to find.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from intruder.enrolment import EnrolmentRefused
from intruder.models import Participant, PersonGroup, Study
from intruder.services.participants import participant_consent_give
from intruder.services.studies import study_update
from tests.intruder.factories import make_study, make_target, make_texts

pytestmark = pytest.mark.django_db


@pytest.fixture
def linked_pair():
    writers = make_study(kind=Study.Kind.COLLECTION)
    intruders = make_study(is_open=False)
    for group in (PersonGroup.FICTITIOUS, PersonGroup.SEMIFAMOUS, PersonGroup.FAMOUS):
        target = make_target(study=writers, group=group)
        make_target(study=intruders, group=group, name=target.name, key=f"i-{target.pk}")
    make_texts(study=intruders, count=2)
    return writers, intruders


def test_an_early_writer_cannot_consent_after_the_close_and_sees_no_target(linked_pair):
    writers, intruders = linked_pair
    client = Client()
    entry = reverse("participant-entry", kwargs={"slug": writers.slug})
    home = client.get(entry + "?PROLIFIC_PID=EARLYWRITER1")["Location"]
    token = home.rstrip("/").rsplit("/", 1)[-1]
    study_update(study=writers, is_open=False)
    study_update(study=intruders, is_open=True)
    consent = client.post(
        reverse("participant-consent", kwargs={"token": token}), {"decision": "agree"}
    )
    page = client.get(home)
    assert consent.status_code == 403 and page.status_code == 403
    participant = Participant.objects.get(token=token)
    assert participant.consented_at is None and not participant.writing_tasks.exists()
    body = consent.content.decode() + page.content.decode()
    for name in writers.targets.values_list("name", flat=True):
        assert name not in body


def test_the_service_refuses_consent_for_a_closed_writer_study(linked_pair):
    writers, _ = linked_pair
    participant = Participant.objects.create(study=writers, prolific_pid="LATECONSENT1")
    on_time = Participant.objects.create(study=writers, prolific_pid="ONTIMECONSNT")
    participant_consent_give(participant=on_time)  # the same consent while the study is open
    assert on_time.writing_tasks.exists()
    Study.objects.filter(pk=writers.pk).update(is_open=False)
    participant.refresh_from_db()
    with pytest.raises(EnrolmentRefused) as refusal:
        participant_consent_give(participant=participant)
    assert refusal.value.code == EnrolmentRefused.CLOSED
    participant.refresh_from_db()
    assert participant.consented_at is None and not participant.writing_tasks.exists()


def test_a_writer_who_consented_before_the_close_keeps_writing(linked_pair):
    writers, _ = linked_pair
    participant = Participant.objects.create(study=writers, prolific_pid="ONTIMEWRITER")
    participant_consent_give(participant=participant)
    study_update(study=writers, is_open=False)
    page = Client().get(reverse("participant-home", kwargs={"token": participant.token}))
    assert page.status_code == 200
