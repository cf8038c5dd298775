"""Expiry: the worker's sweep and `release_expired` free abandoned slots and time people out."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from intruder.models import Assignment, Participant, PersonGroup, Study
from intruder.selectors.participant import intruder_group_capacities
from intruder.services import jobs
from intruder.services.assignment import assignment_next, studies_release_expired
from tests.intruder.factories import (
    make_assignment,
    make_judgment,
    make_participant,
    make_study,
    make_target,
    make_texts,
)

pytestmark = pytest.mark.django_db


def minutes_ago(minutes: float):
    return timezone.now() - timedelta(minutes=minutes)


def abandoned_assignment(study, text, minutes):
    participant = make_participant(study=study, group=PersonGroup.FICTITIOUS)
    assignment = make_assignment(participant=participant, text=text)
    Assignment.objects.filter(pk=assignment.pk).update(assigned_at=minutes_ago(minutes))
    return participant, assignment


def idle_participant(study, minutes, **fields):
    participant = make_participant(study=study, group=PersonGroup.FICTITIOUS, **fields)
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=minutes_ago(minutes))
    return participant


@pytest.fixture
def study():
    study = make_study(kind=Study.Kind.INTRUDER, time_limit_minutes=30, judgments_per_text=1)
    make_texts(study=study, count=3)
    return study


def status_of(*objects):
    return [type(o).objects.get(pk=o.pk).status for o in objects]


def test_sweep_releases_each_studys_assignments_past_its_own_time_limit(study):
    texts = [d.anonymizations.get() for d in study.descriptions.all()]
    strict = make_study(kind=Study.Kind.INTRUDER, time_limit_minutes=10)
    (strict_text,) = make_texts(study=strict, count=1)
    late, late_assignment = abandoned_assignment(study, texts[0], 31)
    within, within_assignment = abandoned_assignment(study, texts[1], 20)
    strict_late, strict_assignment = abandoned_assignment(strict, strict_text, 20)

    sweep = studies_release_expired()

    assert (sweep.released, sweep.timed_out) == (2, 2)
    assert status_of(late_assignment, within_assignment, strict_assignment) == [
        "released",
        "active",
        "released",
    ]
    assert status_of(late, within, strict_late) == ["timed_out", "started", "timed_out"]


def test_released_slot_is_free_for_the_next_participant(study):
    text = study.descriptions.first().anonymizations.get()
    abandoned_assignment(study, text, 31)
    studies_release_expired()
    capacity = {c.group: c for c in intruder_group_capacities(study=study)}["fictitious"]
    assert capacity.free_slots == 3


def test_intruder_idle_before_any_text_is_timed_out_and_stops_reserving_items(study):
    idle = idle_participant(study, 31)
    recent = idle_participant(study, 5)
    owed_before = intruder_group_capacities(study=study)[-1].owed

    assert studies_release_expired().timed_out == 1

    assert status_of(idle, recent) == ["timed_out", "started"]
    # Two alike participants owed the same; only the recent one's claim is left.
    assert intruder_group_capacities(study=study)[-1].owed == owed_before // 2 > 0


def test_intruder_who_judged_texts_keeps_their_debrief_however_long_they_wait(study):
    text = study.descriptions.first().anonymizations.get()
    at_debrief = idle_participant(study, 600)
    make_judgment(participant=at_debrief, text=text)
    studies_release_expired()
    assert status_of(at_debrief) == ["started"]


def test_writers_are_never_timed_out_by_the_sweep():
    collection = make_study(kind=Study.Kind.COLLECTION, time_limit_minutes=30)
    make_target(study=collection)
    writer = idle_participant(collection, 600)
    assert studies_release_expired().timed_out == 0
    assert status_of(writer) == ["started"]


def test_timed_out_intruder_sees_the_time_limit_page_and_gets_no_text(client, study):
    idle = idle_participant(study, 31, consented_at=minutes_ago(40))
    studies_release_expired()
    page = client.get(reverse("participant-home", kwargs={"token": idle.token}))
    assert b"Time limit reached" in page.content
    assert assignment_next(participant=Participant.objects.get(pk=idle.pk)) is None


def test_release_expired_command_sweeps_and_reports(study, capsys):
    text = study.descriptions.first().anonymizations.get()
    participant, assignment = abandoned_assignment(study, text, 31)
    call_command("release_expired")
    assert "released 1 expired assignment(s), 1 participant(s) timed out" in capsys.readouterr().out
    assert status_of(assignment, participant) == ["released", "timed_out"]


def test_release_expired_command_can_sweep_one_study(study, capsys):
    other = make_study(kind=Study.Kind.INTRUDER, time_limit_minutes=1)
    (other_text,) = make_texts(study=other, count=1)
    _, untouched = abandoned_assignment(other, other_text, 5)
    call_command("release_expired", "--study", study.slug)
    assert status_of(untouched) == ["active"]


def test_release_expired_command_names_an_unknown_study():
    with pytest.raises(Exception, match="no study with slug 'nope'"):
        call_command("release_expired", "--study", "nope")


def test_run_worker_sweeps_expired_assignments(study, capsys):
    text = study.descriptions.first().anonymizations.get()
    _, assignment = abandoned_assignment(study, text, 31)
    call_command("run_worker", "--once")
    assert status_of(assignment) == ["released"]
    assert "released 1 expired assignment(s)" in capsys.readouterr().out


def test_worker_runs_the_periodic_task_again_only_after_its_interval():
    now = {"t": 0.0}
    calls = []
    rounds = iter(range(6))

    def stop_after_six_rounds() -> bool:
        now["t"] += 25.0  # each idle round advances the fake clock by 25 s
        return next(rounds, None) is None

    jobs.run_db_worker(
        poll_interval_s=0,
        should_stop=stop_after_six_rounds,
        periodic=lambda: calls.append(now["t"]),
        periodic_interval_s=60,
        clock=lambda: now["t"],
    )
    assert calls == [25.0, 100.0]


def test_a_failing_periodic_task_does_not_stop_the_worker(monkeypatch):
    ran = []
    monkeypatch.setitem(jobs.TASKS, "noop", lambda job, progress: ran.append(job.pk) or {})

    def broken() -> None:
        raise RuntimeError("database away")

    job = jobs.job_enqueue(kind="noop")
    assert jobs.run_db_worker(once=True, heartbeat_interval_s=0, periodic=broken) == 1
    assert ran == [job.pk]


def test_sweep_frees_the_text_of_a_participant_who_stopped_while_holding_it(study):
    # E.g. timed out by the idle sweep at the moment they claimed a text: the claim is
    # released at once, not after the time limit, even with no one else started.
    text = study.descriptions.first().anonymizations.get()
    stopped = make_participant(study=study, group=PersonGroup.FICTITIOUS, status="timed_out")
    assignment = make_assignment(participant=stopped, text=text)
    assert studies_release_expired().released == 1
    assert status_of(assignment) == ["released"]
