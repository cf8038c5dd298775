"""Open enrolment under abuse: made-up PIDs must not keep real participants out.

Issue: 8 made-up PIDs, 3 requests each and no answers, turned a real participant away with
"This study is full" for the whole time limit. Defences, each tested here: the study's
Prolific STUDY_ID, a per-client rate limit on new PIDs, no slot before consent, and first
texts held idle given back early when someone needs a slot.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from intruder.enrolment import EnrolmentRefused
from intruder.models import Assignment, Participant, PersonGroup, Study
from intruder.selectors.participant import Step
from intruder.services.participants import (
    participant_consent_give,
    participant_current_step,
    participant_enroll,
)
from tests.intruder.factories import make_judgment, make_participant, make_study, make_texts

pytestmark = pytest.mark.django_db

PROLIFIC_STUDY = "64f0c0ffee0000000000beef"


def small_study(**fields) -> Study:
    """An intruder study with 3 judgment slots (3 texts, 1 judgment each), 1 item each."""
    fields = {"items_per_participant": 1, "judgments_per_text": 1, **fields}
    study = make_study(kind=Study.Kind.INTRUDER, **fields)
    make_texts(study=study, count=3, group=PersonGroup.FAMOUS)
    return study


def entry(study: Study, pid: str, study_id: str = PROLIFIC_STUDY) -> str:
    url = reverse("participant-entry", kwargs={"slug": study.slug})
    return f"{url}?PROLIFIC_PID={pid}&STUDY_ID={study_id}&SESSION_ID=s1"


def walk_to_first_text(client: Client, study: Study, pid: str, study_id: str = PROLIFIC_STUDY):
    """Do what the attacker did: entry, consent, instructions (3 requests), then no answer.

    Return the final response (following redirects), or the refusal.
    """
    response = client.get(entry(study, pid, study_id))
    if response.status_code != 302:
        return response
    token = response.url.rstrip("/").rsplit("/", 1)[-1]
    client.post(reverse("participant-consent", kwargs={"token": token}), {"decision": "agree"})
    client.post(reverse("participant-instructions", kwargs={"token": token}))
    return client.get(reverse("participant-home", kwargs={"token": token}))


def real_participant_gets_a_text(study: Study) -> bool:
    response = walk_to_first_text(Client(REMOTE_ADDR="198.51.100.7"), study, "REALPERSON0001")
    return response.status_code == 200 and "judge-form" in response.content.decode()


def test_the_reported_attack_no_longer_keeps_a_real_participant_out(settings) -> None:
    # The attack, one client, with the shipped defences: the study has its
    # Prolific ID and the per-client limit (here 2 new PIDs per hour for a 3-slot study).
    settings.INTRUDER_ENROLMENT_RATE = "2/hour"
    study = small_study(prolific_study_id=PROLIFIC_STUDY)
    attacker = Client(REMOTE_ADDR="203.0.113.66")
    answers = [walk_to_first_text(attacker, study, f"FAKE{i:04d}").status_code for i in range(8)]
    assert answers.count(200) == 2 and answers.count(429) == 6
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 2
    assert real_participant_gets_a_text(study)


@pytest.mark.parametrize("n_fake", [8, 30])
def test_n_made_up_pids_from_many_addresses_block_at_most_the_idle_window(settings, n_fake):
    # Worst case: every made-up PID from its own address and the right STUDY_ID, so neither
    # the rate limit nor the study ID stops them. They fill every slot, but only for
    # INTRUDER_IDLE_RELEASE_MINUTES (10), not the 60-minute time limit.
    settings.INTRUDER_ENROLMENT_RATE = "2/hour"
    study = small_study(prolific_study_id=PROLIFIC_STUDY, time_limit_minutes=60)
    for i in range(n_fake):
        walk_to_first_text(Client(REMOTE_ADDR=f"10.0.{i // 250}.{i % 250 + 1}"), study, f"F{i}")
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 3
    assert not real_participant_gets_a_text(study)  # within the idle window: full

    Assignment.objects.update(assigned_at=timezone.now() - timedelta(minutes=11))
    assert real_participant_gets_a_text(study)
    # The idle holders were timed out; a made-up PID cannot come back and hold again.
    assert Participant.objects.filter(status=Participant.Status.TIMED_OUT).count() >= 1
    again = walk_to_first_text(Client(REMOTE_ADDR="10.0.0.1"), study, "F0")
    assert "judge-form" not in again.content.decode()


def test_enrolments_that_never_consent_hold_their_claim_for_the_idle_window_only() -> None:
    study = small_study()  # room for 3
    admitted = refused = 0
    for i in range(50):
        try:
            participant_enroll(study=study, prolific_pid=f"NOCONSENT{i}")
            admitted += 1
        except EnrolmentRefused as refusal:
            assert refusal.code == EnrolmentRefused.FULL
            refused += 1
    assert (admitted, refused) == (3, 47)  # refused at the entry link, before consent
    assert not real_participant_gets_a_text(study)
    Participant.objects.update(last_seen_at=timezone.now() - timedelta(minutes=11))
    assert real_participant_gets_a_text(study)
    assert Participant.objects.filter(status=Participant.Status.TIMED_OUT).count() >= 1


def test_a_wrong_or_missing_study_id_is_refused_when_the_study_has_one() -> None:
    study = small_study(prolific_study_id=PROLIFIC_STUDY)
    client = Client()
    for study_id in ("", "someotherstudy", PROLIFIC_STUDY.upper()):
        response = client.get(entry(study, "ANYPID01", study_id))
        assert response.status_code == 403
        assert "not for this study" in response.content.decode()
    assert not Participant.objects.exists()
    assert client.get(entry(study, "ANYPID01")).status_code == 302


def test_a_study_without_a_prolific_id_accepts_any_study_id_and_says_so(client) -> None:
    study = small_study()
    assert client.get(entry(study, "PILOT01", "whatever")).status_code == 302
    owner = study.owner
    client.force_login(owner)
    page = client.get(reverse("researcher-study", kwargs={"slug": study.slug})).content.decode()
    assert "No Prolific study ID is set" in page


def test_the_rate_limit_counts_new_pids_only_and_resuming_is_never_limited(settings) -> None:
    settings.INTRUDER_ENROLMENT_RATE = "2/hour"
    study = small_study()
    client = Client(REMOTE_ADDR="192.0.2.10")
    assert client.get(entry(study, "FIRST01")).status_code == 302
    assert client.get(entry(study, "SECOND02")).status_code == 302
    third = client.get(entry(study, "THIRD03"))
    assert third.status_code == 429 and "Too many sign-ups" in third.content.decode()
    for _ in range(5):  # the known PIDs resume
        assert client.get(entry(study, "FIRST01")).status_code == 302
    # Another address has its own count.
    assert Client(REMOTE_ADDR="192.0.2.11").get(entry(study, "THIRD03")).status_code == 302


def test_behind_a_proxy_the_limit_counts_the_forwarded_client(settings) -> None:
    settings.INTRUDER_ENROLMENT_RATE = "1/hour"
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    study = small_study()
    proxy = {"REMOTE_ADDR": "10.9.9.9"}
    a = Client(**proxy, HTTP_X_FORWARDED_FOR="198.51.100.1")
    b = Client(**proxy, HTTP_X_FORWARDED_FOR="198.51.100.2")
    assert a.get(entry(study, "PROXIED1")).status_code == 302
    assert b.get(entry(study, "PROXIED2")).status_code == 302
    assert a.get(entry(study, "PROXIED3")).status_code == 429


def test_a_late_participant_is_refused_before_consent_then_gets_in_after_the_idle_window():
    study = small_study(time_limit_minutes=60)
    holders = []
    for i in range(3):
        p = participant_enroll(study=study, prolific_pid=f"HOLDER{i}").participant
        participant_consent_give(participant=p)
        holders.append(p)
    for p in holders:  # each claims a text: every slot held
        p.instructions_seen_at = timezone.now()
        p.save()
        assert participant_current_step(participant=p).step == Step.JUDGE
    with pytest.raises(EnrolmentRefused) as refusal:
        participant_enroll(study=study, prolific_pid="LATE0001")
    assert refusal.value.code == EnrolmentRefused.FULL
    assert not Participant.objects.filter(prolific_pid="LATE0001").exists()
    # One holder answers nothing for 11 minutes: the next enrolment reclaims the slot.
    Assignment.objects.filter(participant=holders[0]).update(
        assigned_at=timezone.now() - timedelta(minutes=11)
    )
    late = participant_enroll(study=study, prolific_pid="LATE0001").participant
    participant_consent_give(participant=late)
    late.instructions_seen_at = timezone.now()
    late.save()
    assert participant_current_step(participant=late).step == Step.JUDGE


def test_idle_release_applies_to_every_text_not_only_the_first() -> None:
    # The audit: a made-up PID that answers one text kept its next one for the full
    # 60-minute time limit. Now the second text goes back after the idle window too.
    study = small_study(items_per_participant=2, time_limit_minutes=60)
    texts = list(study.descriptions.all())
    worker = make_participant(study=study, group=PersonGroup.FAMOUS, consented_at=timezone.now())
    make_judgment(participant=worker, text=texts[0].anonymizations.get())
    second = Assignment.objects.create(
        participant=worker, text=texts[1].anonymizations.get(), position=2, slot=1
    )
    from intruder.services.assignment import study_reclaim_slots

    Assignment.objects.filter(pk=second.pk).update(
        assigned_at=timezone.now() - timedelta(minutes=9)
    )
    assert study_reclaim_slots(study=study).released == 0  # within the idle window
    Assignment.objects.filter(pk=second.pk).update(
        assigned_at=timezone.now() - timedelta(minutes=11)
    )
    assert study_reclaim_slots(study=study).released == 1
    second.refresh_from_db()
    worker.refresh_from_db()
    assert second.status == Assignment.Status.RELEASED
    assert worker.status == Participant.Status.TIMED_OUT
    assert worker.judgments.count() == 1  # the finished answer is kept


def test_four_made_up_pids_cannot_fill_a_study_with_junk_answers() -> None:
    # The audit's 20-slot study, 4 made-up IDs answering one text each and then idling on
    # the next: after the idle window their held texts go back to real participants.
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=5, judgments_per_text=4)
    make_texts(study=study, count=5, group=PersonGroup.FAMOUS)
    fakes = []
    for i in range(4):
        fake = participant_enroll(study=study, prolific_pid=f"JUNK{i}").participant
        participant_consent_give(participant=fake)
        fake.instructions_seen_at = timezone.now()
        fake.save()
        first = participant_current_step(participant=fake).assignment
        from intruder.services.judgments import judgment_submit

        judgment_submit(
            participant=fake, assignment_id=first.pk, self_identified=False, other_knowledge="x"
        )
        assert participant_current_step(participant=fake).step == Step.JUDGE  # holds text 2
        fakes.append(fake)
    with pytest.raises(EnrolmentRefused):  # 4 x 5 items claim all 20 slots
        participant_enroll(study=study, prolific_pid="REAL0001")
    Assignment.objects.filter(status=Assignment.Status.ACTIVE).update(
        assigned_at=timezone.now() - timedelta(minutes=11)
    )
    real = participant_enroll(study=study, prolific_pid="REAL0001").participant
    assert real.group == PersonGroup.FAMOUS
    assert Participant.objects.filter(status=Participant.Status.TIMED_OUT).count() == 4
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 0
    assert Assignment.objects.filter(status=Assignment.Status.COMPLETED).count() == 4


def test_refusal_codes_have_pages() -> None:
    from intruder.enrolment import REFUSAL_PAGES

    codes = {v for k, v in vars(EnrolmentRefused).items() if k.isupper()}
    assert codes <= set(REFUSAL_PAGES)


def test_a_burst_of_12_entry_links_on_room_for_4_refuses_8_at_the_entry_page() -> None:
    # The same burst through the pages (SQLite and PostgreSQL; the threaded version runs
    # on PostgreSQL in test_assignment_concurrency.py): nobody is admitted without room.
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=2, judgments_per_text=2)
    make_texts(study=study, count=4, group=PersonGroup.FAMOUS)
    statuses = [
        Client(REMOTE_ADDR=f"10.1.0.{i + 1}").get(entry(study, f"BURST{i}", "")).status_code
        for i in range(12)
    ]
    assert statuses.count(302) == 4 and statuses.count(403) == 8
    for participant in Participant.objects.all():
        participant_consent_give(participant=participant)
        participant.instructions_seen_at = timezone.now()
        participant.save()
        assert participant_current_step(participant=participant).step == Step.JUDGE
