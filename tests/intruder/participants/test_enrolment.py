"""Prolific entry: enrol, resume, refuse (closed, completed, missing PID), decline consent."""

from collections import Counter
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from intruder.enrolment import EnrolmentRefused
from intruder.models import Assignment, Participant, PersonGroup, Study
from intruder.selectors.participant import intruder_group_capacities
from intruder.services.participants import (
    least_claimed_group,
    participant_consent_give,
    participant_enroll,
)
from tests.intruder.factories import (
    make_assignment,
    make_judgment,
    make_participant,
    make_study,
    make_text,
    make_texts,
)

pytestmark = pytest.mark.django_db

PID = "5f1e2d3c4b5a69788796a5b4"


def entry_url(study, pid=PID, **extra):
    params = {"PROLIFIC_PID": pid, "STUDY_ID": "STUDY42", "SESSION_ID": "SESS42", **extra}
    query = "&".join(f"{k}={v}" for k, v in params.items() if v is not None)
    return f"{reverse('participant-entry', kwargs={'slug': study.slug})}?{query}"


@pytest.fixture
def intruder_study():
    study = make_study(kind=Study.Kind.INTRUDER)
    for _ in range(3):
        make_text(study=study)
    return study


def test_entry_enrols_the_participant_and_redirects_to_their_token_page(client, intruder_study):
    response = client.get(entry_url(intruder_study))
    participant = Participant.objects.get(study=intruder_study, prolific_pid=PID)
    assert response.status_code == 302
    assert response["Location"] == f"/p/{participant.token}/"
    assert participant.prolific_study_id == "STUDY42"
    assert participant.prolific_session_id == "SESS42"
    assert participant.status == Participant.Status.STARTED
    assert len(participant.token) >= 40


def test_same_pid_again_resumes_the_same_participant(client, intruder_study):
    first = client.get(entry_url(intruder_study))
    client.post(f"{first['Location']}consent/", {"decision": "agree"})
    second = client.get(entry_url(intruder_study))
    assert second["Location"] == first["Location"]
    assert Participant.objects.filter(study=intruder_study).count() == 1
    page = client.get(second["Location"])
    assert b"play an adversary" in page.content.lower()


def test_same_pid_from_another_browser_resumes_too(client, intruder_study):
    first = client.get(entry_url(intruder_study))
    other = Client().get(entry_url(intruder_study))
    assert other["Location"] == first["Location"]


def test_entry_without_pid_shows_a_clear_error_and_enrols_nobody(client, intruder_study):
    response = client.get(reverse("participant-entry", kwargs={"slug": intruder_study.slug}))
    assert response.status_code == 400
    assert b"Missing Prolific ID" in response.content
    assert not Participant.objects.exists()


def test_entry_without_pid_resumes_from_the_session_of_the_same_browser(client, intruder_study):
    first = client.get(entry_url(intruder_study))
    again = client.get(reverse("participant-entry", kwargs={"slug": intruder_study.slug}))
    assert again["Location"] == first["Location"]


@pytest.mark.parametrize("pid", ["<script>", "a b", "x" * 65])
def test_malformed_pid_is_refused(client, intruder_study, pid):
    response = client.get(entry_url(intruder_study, pid=pid.replace(" ", "%20")))
    assert response.status_code == 400
    assert b"<script>" not in response.content
    assert not Participant.objects.exists()


def test_closed_study_refuses_new_participants_with_a_clear_page(client, intruder_study):
    intruder_study.is_open = False
    intruder_study.save()
    response = client.get(entry_url(intruder_study))
    assert response.status_code == 403
    assert b"closed" in response.content
    assert not Participant.objects.exists()


def test_closed_study_still_lets_an_enrolled_participant_resume(client, intruder_study):
    first = client.get(entry_url(intruder_study))
    Study.objects.filter(pk=intruder_study.pk).update(is_open=False)
    assert client.get(entry_url(intruder_study))["Location"] == first["Location"]


def test_unknown_study_is_not_found(client):
    assert client.get("/s/no-such-study/?PROLIFIC_PID=abc").status_code == 404


def test_unknown_token_is_not_found(client):
    assert client.get("/p/not-a-token/").status_code == 404


def test_study_without_texts_is_not_ready(client):
    study = make_study(kind=Study.Kind.INTRUDER)
    response = client.get(entry_url(study))
    assert response.status_code == 503
    assert not Participant.objects.exists()


def test_completed_pid_cannot_start_again(client, intruder_study):
    participant = make_participant(
        study=intruder_study, prolific_pid=PID, status=Participant.Status.COMPLETED
    )
    response = client.get(entry_url(intruder_study), follow=True)
    assert b"already completed" in response.content
    assert b"cannot take part again" in response.content
    assert b"<form" not in response.content
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED
    assert Participant.objects.count() == 1


def test_declining_consent_returns_the_participant_without_a_code(client, intruder_study):
    home = client.get(entry_url(intruder_study))["Location"]
    response = client.post(f"{home}consent/", {"decision": "decline"}, follow=True)
    participant = Participant.objects.get()
    assert participant.status == Participant.Status.RETURNED
    assert participant.consented_at is None
    assert b"return the study on Prolific" in response.content
    assert intruder_study.completion_code.encode() not in response.content
    assert b"submissions/complete" not in response.content
    # Coming back later does not reopen the study for them.
    again = client.get(entry_url(intruder_study), follow=True)
    assert b"return the study on Prolific" in again.content
    assert client.post(f"{home}finish/").status_code == 302
    assert client.post(f"{home}finish/")["Location"] == home


def test_consent_page_shows_the_study_consent_text(client, intruder_study):
    home = client.get(entry_url(intruder_study))["Location"]
    page = client.get(home)
    assert intruder_study.consent_text.encode() in page.content
    assert b"csrfmiddlewaretoken" in page.content


def test_intruder_group_goes_where_most_judgments_are_missing():
    study = make_study(kind=Study.Kind.INTRUDER, judgments_per_text=2)
    famous = make_text(study=study, description=None)
    famous.description.target.group = PersonGroup.FAMOUS
    famous.description.target.save()
    for _ in range(2):
        make_text(study=study)  # fictitious by default
    assert least_claimed_group(intruder_group_capacities(study=study)) == PersonGroup.FICTITIOUS
    study.groups = [PersonGroup.FAMOUS]
    study.save()
    assert least_claimed_group(intruder_group_capacities(study=study)) == PersonGroup.FAMOUS


def test_full_study_refuses_new_intruders():
    study = make_study(kind=Study.Kind.INTRUDER, judgments_per_text=1)
    text = make_text(study=study)
    make_judgment(participant=make_participant(study=study), text=text)
    with pytest.raises(EnrolmentRefused) as refusal:
        participant_enroll(study=study, prolific_pid="NEWPID")
    assert refusal.value.code == EnrolmentRefused.FULL


def test_abandoned_slots_do_not_make_a_study_full():
    study = make_study(kind=Study.Kind.INTRUDER, judgments_per_text=1, time_limit_minutes=30)
    text = make_text(study=study)
    abandoned = make_participant(study=study, group=PersonGroup.FICTITIOUS)
    assignment = Assignment.objects.create(participant=abandoned, text=text, position=1, slot=1)
    Assignment.objects.filter(pk=assignment.pk).update(
        assigned_at=timezone.now() - timedelta(minutes=31)
    )
    enrolment = participant_enroll(study=study, prolific_pid="NEWPID")
    assert enrolment.created
    abandoned.refresh_from_db()
    assert abandoned.status == Participant.Status.TIMED_OUT


def enrolled_groups(study, count):
    """Enrol and consent `count` intruders; return how many each group got (at enrolment)."""
    groups = Counter()
    for i in range(count):
        participant = participant_enroll(study=study, prolific_pid=f"CROWD{i:04d}").participant
        assert participant.group  # the group claims the items at enrolment
        participant_consent_give(participant=participant)
        groups[participant.group] += 1
    return groups


def test_a_crowd_enrolling_before_any_assignment_spreads_over_the_groups():
    # Assignments are created one page at a time, so a crowd arriving at once has none yet:
    # counting assignments alone sent all of them to the first group (herding).
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=3)
    for group in PersonGroup.values:
        make_texts(study=study, count=4, group=group)
    groups = enrolled_groups(study, 18)
    assert groups == {group: 6 for group in PersonGroup.values}
    assert not Assignment.objects.exists()


def test_groups_fill_in_proportion_to_their_judgment_slots():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=2)
    make_texts(study=study, count=8, group=PersonGroup.FAMOUS)  # 16 slots
    make_texts(study=study, count=4, group=PersonGroup.FICTITIOUS)  # 8 slots
    groups = enrolled_groups(study, 12)  # 24 items: exactly the 24 slots
    assert groups == {PersonGroup.FAMOUS: 8, PersonGroup.FICTITIOUS: 4}


def test_finished_participants_owe_nothing_and_started_ones_owe_their_remaining_items():
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=2)
    famous = make_texts(study=study, count=2, group=PersonGroup.FAMOUS)
    make_texts(study=study, count=2, group=PersonGroup.FICTITIOUS)
    # Famous: one finished participant (2 judged), one started with 1 of 2 judged: 4 slots
    # minus 3 judged minus 1 owed leaves 0; fictitious has 4 unclaimed.
    done = make_participant(study=study, group=PersonGroup.FAMOUS, status="completed")
    make_judgment(participant=done, text=famous[0])
    make_judgment(participant=done, text=famous[1], position=2)
    halfway = make_participant(study=study, group=PersonGroup.FAMOUS)
    make_judgment(participant=halfway, text=famous[0], slot=2)
    make_participant(study=study, group=PersonGroup.FICTITIOUS, status="returned")
    capacities = {c.group: c for c in intruder_group_capacities(study=study)}
    assert (capacities["famous"].completed, capacities["famous"].owed) == (3, 1)
    assert capacities["famous"].unclaimed == 0
    assert capacities["fictitious"].unclaimed == 4
    assert least_claimed_group(intruder_group_capacities(study=study)) == PersonGroup.FICTITIOUS


def test_capacities_count_held_work_on_released_texts_only_and_what_started_people_are_owed():
    # The held and owed counts come from one UNION ALL query: each kind of row must count
    # what it did as two queries, neither more (join fan-out) nor less.
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=3, judgments_per_text=3)
    famous = make_texts(study=study, count=3, group=PersonGroup.FAMOUS)
    fictitious = make_texts(study=study, count=2, group=PersonGroup.FICTITIOUS)
    withdrawn = make_texts(study=study, count=1, group=PersonGroup.FAMOUS, status="withdrawn")
    first = make_participant(study=study, group=PersonGroup.FAMOUS)
    make_judgment(participant=first, text=famous[0])
    make_judgment(participant=first, text=famous[1], position=2)
    make_assignment(participant=first, text=famous[2], position=3)  # active: held
    second = make_participant(study=study, group=PersonGroup.FAMOUS)
    make_judgment(participant=second, text=famous[0], slot=2)
    make_assignment(  # released: neither held nor judged
        participant=second, text=famous[1], position=2, slot=2, status="released"
    )
    make_judgment(participant=second, text=withdrawn[0], position=3)  # not in the pool
    gone = make_participant(study=study, group=PersonGroup.FICTITIOUS, status="timed_out")
    make_judgment(participant=gone, text=fictitious[0])
    make_participant(study=study, group=PersonGroup.FICTITIOUS)  # enrolled, nothing judged

    capacities = {c.group: c for c in intruder_group_capacities(study=study)}

    famous_counts = capacities[PersonGroup.FAMOUS]
    assert (famous_counts.slots, famous_counts.held, famous_counts.completed) == (9, 4, 3)
    # Owed: 2 started x 3 items minus the 4 items they judged (the withdrawn text's included).
    assert famous_counts.owed == 2
    fictitious_counts = capacities[PersonGroup.FICTITIOUS]
    assert (fictitious_counts.slots, fictitious_counts.held, fictitious_counts.completed) == (
        6,
        1,
        1,
    )
    # Two texts: a fictitious participant can be given 2 items, and the timed-out one owes none.
    assert fictitious_counts.owed == 2
    assert capacities[PersonGroup.SEMIFAMOUS].held == 0
