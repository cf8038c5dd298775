"""Balanced assignment: fewest judgments first, never twice, releases, DB-enforced limits."""

import random
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from intruder.models import Assignment, Judgment, Participant, PersonGroup, Study
from intruder.services import assignment as assignment_service
from intruder.services.assignment import (
    assignment_candidates,
    assignment_next,
    assignments_release_expired,
)
from intruder.services.judgments import JudgmentRejected, judgment_submit
from tests.intruder.factories import (
    make_assignment,
    make_judgment,
    make_participant,
    make_study,
    make_text,
    make_texts,
)

pytestmark = pytest.mark.django_db


def judge(participant, assignment):
    return judgment_submit(
        participant=participant,
        assignment_id=assignment.pk,
        self_identified=False,
        other_knowledge="nothing",
    )


@pytest.fixture
def study():
    return make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=3)


def test_text_with_fewest_judgments_goes_first(study):
    texts = make_texts(study=study, count=3)
    for text in texts[:2]:
        make_judgment(participant=make_participant(study=study), text=text)
    assignment = assignment_next(participant=make_participant(study=study), rng=random.Random(0))
    assert assignment.text_id == texts[2].pk


def test_assignments_in_progress_count_as_held(study):
    texts = make_texts(study=study, count=2)
    make_assignment(participant=make_participant(study=study), text=texts[0])
    assignment = assignment_next(participant=make_participant(study=study), rng=random.Random(0))
    assert assignment.text_id == texts[1].pk


def test_released_assignments_do_not_count(study):
    texts = make_texts(study=study, count=2)
    make_assignment(
        participant=make_participant(study=study, status=Participant.Status.TIMED_OUT),
        text=texts[0],
        status=Assignment.Status.RELEASED,
    )
    make_judgment(participant=make_participant(study=study), text=texts[1])
    assignment = assignment_next(participant=make_participant(study=study), rng=random.Random(0))
    assert assignment.text_id == texts[0].pk
    assert assignment.slot == 1  # the released slot is free again


def test_many_participants_spread_evenly_over_the_pool(study):
    study.items_per_participant = 3
    study.save()
    texts = make_texts(study=study, count=6)
    rng = random.Random(4)
    for _ in range(4):  # 4 x 3 = 12 judgments over 6 texts: 2 each
        participant = make_participant(study=study)
        while (assignment := assignment_next(participant=participant, rng=rng)) is not None:
            judge(participant, assignment)
    counts = sorted(Judgment.objects.filter(text__in=texts).values_list("text_id", flat=True))
    per_text = [counts.count(t.pk) for t in texts]
    assert per_text == [2] * 6


def test_no_participant_sees_the_same_text_or_description_twice(study):
    study.items_per_participant = 10
    study.save()
    texts = make_texts(study=study, count=3)
    # A second method's anonymization of the first description.
    make_text(study=study, description=texts[0].description, method="other-method")
    participant = make_participant(study=study)
    seen = []
    while (
        assignment := assignment_next(participant=participant, rng=random.Random(1))
    ) is not None:
        seen.append(assignment.text.description_id)
        judge(participant, assignment)
    assert len(seen) == 3 and len(set(seen)) == 3


def test_texts_with_all_slots_held_are_not_assigned(study):
    study.judgments_per_text = 1
    study.save()
    (text,) = make_texts(study=study, count=1)
    make_judgment(participant=make_participant(study=study), text=text)
    assert assignment_next(participant=make_participant(study=study)) is None


def test_only_released_texts_of_the_participants_group_are_served(study):
    make_texts(study=study, count=2, group=PersonGroup.FAMOUS)
    (semifamous,) = make_texts(study=study, count=1, group=PersonGroup.SEMIFAMOUS)
    make_text(study=study, status="draft")
    make_text(study=study, status="withdrawn")
    participant = make_participant(study=study, group=PersonGroup.SEMIFAMOUS)
    study.items_per_participant = 10
    study.save()
    first = assignment_next(participant=participant)
    assert first.text_id == semifamous.pk
    judge(participant, first)
    assert assignment_next(participant=participant) is None


def test_other_studies_texts_are_never_served(study):
    other = make_study(kind=Study.Kind.INTRUDER)
    make_texts(study=other, count=3)
    assert assignment_next(participant=make_participant(study=study)) is None


def test_participant_gets_no_more_than_n_texts(study):
    make_texts(study=study, count=5)
    participant = make_participant(study=study)
    judged = 0
    while (assignment := assignment_next(participant=participant)) is not None:
        judge(participant, assignment)
        judged += 1
    assert judged == study.items_per_participant


def test_expired_assignment_is_released_and_its_participant_timed_out(study):
    make_texts(study=study, count=1)
    late = make_participant(study=study)
    assignment = assignment_next(participant=late)
    now = timezone.now() + timedelta(minutes=study.time_limit_minutes + 1)
    assert assignments_release_expired(study=study, now=now).released == 1
    assignment.refresh_from_db()
    late.refresh_from_db()
    assert assignment.status == Assignment.Status.RELEASED
    assert late.status == Participant.Status.TIMED_OUT
    assert assignment_next(participant=late, now=now) is None


def test_recent_and_completed_assignments_are_not_released(study):
    texts = make_texts(study=study, count=2)
    finished = make_participant(study=study)
    done = assignment_next(participant=finished)
    judge(finished, done)
    working = make_participant(study=study)
    assignment_next(participant=working)
    assert assignments_release_expired(study=study).released == 0
    later = timezone.now() + timedelta(minutes=study.time_limit_minutes + 1)
    assignments_release_expired(study=study, now=later)
    done.refresh_from_db()
    finished.refresh_from_db()
    assert done.status == Assignment.Status.COMPLETED
    assert finished.status == Participant.Status.STARTED  # their judgment is kept
    assert Judgment.objects.filter(text__in=texts).count() == 1


def test_released_slot_goes_to_the_next_participant(study):
    study.judgments_per_text = 1
    study.save()
    (text,) = make_texts(study=study, count=1)
    abandoned = assignment_next(participant=make_participant(study=study))
    later = timezone.now() + timedelta(minutes=study.time_limit_minutes + 1)
    fresh = assignment_next(participant=make_participant(study=study), now=later)
    assert fresh.text_id == text.pk and fresh.slot == abandoned.slot


def test_database_rejects_a_second_holder_of_the_same_slot(study):
    (text,) = make_texts(study=study, count=1)
    make_assignment(participant=make_participant(study=study), text=text, slot=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        make_assignment(participant=make_participant(study=study), text=text, slot=1)


def test_database_rejects_the_same_text_twice_for_one_participant(study):
    (text,) = make_texts(study=study, count=1)
    participant = make_participant(study=study)
    make_assignment(participant=participant, text=text, slot=1, position=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        make_assignment(participant=participant, text=text, slot=2, position=2)


def test_database_rejects_a_second_judgment_of_one_assignment(study):
    (text,) = make_texts(study=study, count=1)
    participant = make_participant(study=study)
    judgment = make_judgment(participant=participant, text=text)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(
            assignment=judgment.assignment,
            participant=participant,
            text=text,
            self_identified=True,
        )


def test_a_slot_taken_between_read_and_insert_is_retried_elsewhere(study, monkeypatch):
    """Simulate the race: the pool snapshot says slot 1 is free, but it was just taken."""
    study.judgments_per_text = 1
    study.save()
    raced, other = make_texts(study=study, count=2)
    rival = make_participant(study=study)
    real_candidates = assignment_service.assignment_candidates
    calls = []

    def stale_then_real(*, participant, rng, catch=False):
        calls.append(1)
        if len(calls) == 1:
            make_assignment(participant=rival, text=raced, slot=1)  # rival wins the slot
            return [
                (raced.pk, set(), raced.description.target_id),
                (other.pk, set(), other.description.target_id),
            ]
        return real_candidates(participant=participant, rng=rng, catch=catch)

    monkeypatch.setattr(assignment_service, "assignment_candidates", stale_then_real)
    assignment = assignment_next(participant=make_participant(study=study))
    assert assignment.text_id == other.pk
    assert len(calls) == 2
    assert Assignment.objects.filter(text=raced).count() == 1


def test_second_tab_racing_for_a_text_gets_the_same_assignment(study, monkeypatch):
    texts = make_texts(study=study, count=2)
    participant = make_participant(study=study)
    real_candidates = assignment_service.assignment_candidates
    other_tab = []

    def other_tab_claims_first(*, participant, rng, catch=False):
        if not other_tab:
            other_tab.append(make_assignment(participant=participant, text=texts[0], slot=1))
        return real_candidates(participant=participant, rng=rng, catch=catch)

    monkeypatch.setattr(assignment_service, "assignment_candidates", other_tab_claims_first)
    # This call checked for an active assignment before the other tab inserted one.
    assignment = assignment_next(participant=participant)
    assert assignment.pk == other_tab[0].pk
    assert Assignment.objects.filter(participant=participant).count() == 1


def test_judgment_on_a_released_assignment_whose_slot_was_taken_is_refused(study):
    make_texts(study=study, count=1)
    participant = make_participant(study=study)
    assignment = assignment_next(participant=participant)
    later = timezone.now() + timedelta(minutes=study.time_limit_minutes + 1)
    assignments_release_expired(study=study, now=later)
    # Someone else gets the freed slot before the late answer arrives.
    make_assignment(participant=make_participant(study=study), text=assignment.text, slot=1)
    with pytest.raises(JudgmentRejected):
        judge(participant, assignment)
    assert not Judgment.objects.exists()


def test_late_judgment_on_a_released_assignment_with_its_slot_free_is_kept(study):
    make_texts(study=study, count=1)
    participant = make_participant(study=study)
    assignment = assignment_next(participant=participant)
    later = timezone.now() + timedelta(minutes=study.time_limit_minutes + 1)
    assignments_release_expired(study=study, now=later)
    judge(participant, assignment)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.COMPLETED and assignment.slot == 1
    participant.refresh_from_db()
    assert participant.status == Participant.Status.STARTED


def test_candidates_break_ties_with_the_injected_rng(study):
    make_texts(study=study, count=5)
    participant = make_participant(study=study)
    first = [t for t, *_ in assignment_candidates(participant=participant, rng=random.Random(3))]
    again = [t for t, *_ in assignment_candidates(participant=participant, rng=random.Random(3))]
    other = [t for t, *_ in assignment_candidates(participant=participant, rng=random.Random(4))]
    assert first == again
    assert sorted(first) == sorted(other)
