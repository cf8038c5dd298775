"""Writers must not learn the targets intruders judge; withdrawn texts stop at once.

Issue: 8 made-up writer sign-ups revealed 11 of the intruder study's 14 target names, and a
withdrawn text kept being shown to intruders who held it, whose judgments were stored.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from intruder.enrolment import EnrolmentRefused
from intruder.models import AnonymizedText, Assignment, Judgment, PersonGroup, Study
from intruder.selectors.linked import studies_linked
from intruder.selectors.participant import Step
from intruder.services.judgments import JudgmentRejected, judgment_submit
from intruder.services.participants import participant_current_step, participant_enroll
from intruder.services.review import anonymized_text_set_status
from intruder.services.studies import study_update
from tests.intruder.factories import (
    make_participant,
    make_study,
    make_target,
    make_texts,
    make_user,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair():
    """A writer study and an intruder study over the same person (names differ in case)."""
    owner = make_user()
    writers = make_study(owner=owner, kind=Study.Kind.COLLECTION, is_open=False)
    make_target(study=writers, name="Ottilie Brandvold", group=PersonGroup.FICTITIOUS)
    intruders = make_study(owner=owner, kind=Study.Kind.INTRUDER)
    texts = make_texts(study=intruders, count=2)
    texts[0].description.target.name = "OTTILIE BRANDVOLD"
    texts[0].description.target.save()
    return writers, intruders


def test_studies_sharing_a_target_name_of_the_other_kind_are_linked(pair) -> None:
    writers, intruders = pair
    assert list(studies_linked(study=intruders)) == [writers]
    assert list(studies_linked(study=writers)) == [intruders]
    unrelated = make_study(kind=Study.Kind.COLLECTION)
    make_target(study=unrelated, name="Somebody Else")
    assert unrelated not in studies_linked(study=intruders)


def test_a_writer_study_cannot_be_opened_while_its_linked_intruder_study_is_open(pair) -> None:
    writers, intruders = pair
    with pytest.raises(ValidationError) as error:
        study_update(study=writers, is_open=True)
    assert "is_open" in error.value.message_dict
    writers.refresh_from_db()
    assert not writers.is_open
    study_update(study=intruders, is_open=False)
    study_update(study=writers, is_open=True)  # one at a time is fine


def test_the_demo_may_keep_both_open(pair, settings) -> None:
    settings.INTRUDER_DEMO = True
    writers, intruders = pair
    study_update(study=writers, is_open=True)
    writers.refresh_from_db()
    intruders.refresh_from_db()
    assert writers.is_open and intruders.is_open


def test_new_intruders_are_refused_while_a_linked_writer_study_is_open(pair) -> None:
    writers, intruders = pair
    Study.objects.filter(pk=writers.pk).update(is_open=True)  # e.g. opened in the admin
    with pytest.raises(EnrolmentRefused) as refusal:
        participant_enroll(study=intruders, prolific_pid="NEWINTRUDER1")
    assert refusal.value.code == EnrolmentRefused.CLOSED


def test_a_pid_from_a_linked_study_is_refused_in_both_directions(pair) -> None:
    writers, intruders = pair
    make_participant(study=writers, prolific_pid="WASAWRITER01")
    with pytest.raises(EnrolmentRefused) as refusal:
        participant_enroll(study=intruders, prolific_pid="WASAWRITER01")
    assert refusal.value.code == EnrolmentRefused.LINKED
    Study.objects.filter(pk=intruders.pk).update(is_open=False)
    Study.objects.filter(pk=writers.pk).update(is_open=True)
    make_participant(study=intruders, prolific_pid="WASINTRUDER1")
    with pytest.raises(EnrolmentRefused):
        participant_enroll(study=writers, prolific_pid="WASINTRUDER1")
    # A PID from an unrelated study is welcome.
    other = make_study(kind=Study.Kind.COLLECTION)
    make_participant(study=other, prolific_pid="UNRELATED001")
    Study.objects.filter(pk=writers.pk).update(is_open=False)
    Study.objects.filter(pk=intruders.pk).update(is_open=True)
    assert participant_enroll(study=intruders, prolific_pid="UNRELATED001").created


def test_linked_refusal_page_and_researcher_warning(pair) -> None:
    writers, intruders = pair
    make_participant(study=writers, prolific_pid="WASAWRITER01")
    url = reverse("participant-entry", kwargs={"slug": intruders.slug})
    response = Client().get(f"{url}?PROLIFIC_PID=WASAWRITER01&STUDY_ID=x&SESSION_ID=y")
    assert response.status_code == 403
    assert "related study" in response.content.decode()
    client = Client()
    client.force_login(intruders.owner)
    page = client.get(reverse("researcher-study", kwargs={"slug": intruders.slug}))
    assert 'data-testid="linked-warning"' in page.content.decode()
    assert writers.title in page.content.decode()


def test_a_stranger_sees_that_a_linked_study_exists_but_not_which(pair) -> None:
    writers, _ = pair
    stranger_study = make_study(kind=Study.Kind.INTRUDER, is_open=False)
    texts = make_texts(study=stranger_study, count=1)
    texts[0].description.target.name = "Ottilie Brandvold"
    texts[0].description.target.save()
    client = Client()
    client.force_login(stranger_study.owner)
    page = client.get(reverse("researcher-study", kwargs={"slug": stranger_study.slug}))
    body = page.content.decode()
    assert "1 study of other researchers" in body and writers.title not in body


@pytest.fixture
def holder():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2)
    make_texts(study=study, count=2)
    participant = make_participant(
        study=study,
        group=PersonGroup.FICTITIOUS,
        consented_at=timezone.now(),
        instructions_seen_at=timezone.now(),
    )
    current = participant_current_step(participant=participant)
    assert current.step == Step.JUDGE
    return participant, current.assignment


def test_withdrawing_a_text_releases_its_holders_and_gives_them_the_next_text(holder) -> None:
    participant, assignment = holder
    withdrawn = assignment.text
    anonymized_text_set_status(text=withdrawn, status=AnonymizedText.Status.WITHDRAWN, user=None)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.RELEASED
    participant.refresh_from_db()
    assert participant.status == "started"  # not timed out: it was not their fault
    current = participant_current_step(participant=participant)
    assert current.step == Step.JUDGE and current.assignment.text_id != withdrawn.pk
    assert current.assignment.position == 1


def test_a_judgment_of_a_withdrawn_text_is_not_stored(holder) -> None:
    participant, assignment = holder
    AnonymizedText.objects.filter(pk=assignment.text_id).update(status="withdrawn")
    with pytest.raises(JudgmentRejected) as rejected:
        judgment_submit(
            participant=participant,
            assignment_id=assignment.pk,
            self_identified=False,
            other_knowledge="A sailor.",
        )
    assert rejected.value.code == JudgmentRejected.WITHDRAWN
    assert not Judgment.objects.exists()


def test_a_claim_that_raced_the_withdrawal_is_given_back_on_the_next_page(holder) -> None:
    participant, assignment = holder
    # Withdrawn by a path that did not release (e.g. an update racing the claim).
    AnonymizedText.objects.filter(pk=assignment.text_id).update(status="withdrawn")
    current = participant_current_step(participant=participant)
    assert current.assignment.text_id != assignment.text_id
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.RELEASED


def test_the_participant_page_shows_the_next_text_after_a_withdrawal(holder) -> None:
    participant, assignment = holder
    client = Client()
    home = reverse("participant-home", kwargs={"token": participant.token})
    first = client.get(home).content.decode()
    anonymized_text_set_status(
        text=assignment.text, status=AnonymizedText.Status.WITHDRAWN, user=None
    )
    post = client.post(
        reverse("participant-judge", kwargs={"token": participant.token}),
        {"assignment_id": assignment.pk, "self_identified": "no", "other_knowledge": "x"},
    )
    assert post.status_code == 302 and not Judgment.objects.exists()
    second = client.get(home).content.decode()
    assert second != first and "judge-form" in second
