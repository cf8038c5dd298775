"""Publish, review and bonus flows against the fake Prolific; never double-pays."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from intruder.models import Participant, PersonGroup, Study
from intruder.prolific.bonuses import bonus_select
from intruder.prolific.models import ProlificAction, ProlificStudyState
from intruder.prolific.services import (
    ProlificActionRefused,
    bonuses_pay,
    study_draft_create,
    study_sync,
    study_transition,
    submissions_review,
)
from tests.intruder.factories import make_judgment, make_participant, make_study

pytestmark = pytest.mark.django_db

ENTRY = "https://study.example.org/s/winter/"
REASON = "You finished all texts in under a minute without reading them, " * 3


def completed(study: Study, fake, pid: str, identified: int = 0) -> str:
    """A participant who finished here and on Prolific (AWAITING REVIEW); their submission."""
    participant = make_participant(
        study=study,
        prolific_pid=pid,
        group=PersonGroup.FAMOUS,
        status=Participant.Status.COMPLETED,
        completed_at=timezone.now(),
    )
    texts = [d.anonymizations.get() for d in study.descriptions.all()]
    for position, text in enumerate(texts[:2], start=1):
        make_judgment(
            participant=participant,
            text=text,
            position=position,
            slot=Participant.objects.filter(judgments__text=text).count() + 1,
            identified=position <= identified,
        )
    sub = fake.submission_start(study.prolific_study_id, pid)
    fake.submission_set_status(sub, "AWAITING REVIEW")
    return sub


def test_the_draft_has_the_entry_url_parameters_places_reward_and_code(published, fake_prolific):
    study, _ = published
    study.refresh_from_db()
    remote = fake_prolific.studies[study.prolific_study_id]
    assert remote["external_study_url"] == (
        f"{ENTRY}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
        "&SESSION_ID={{%SESSION_ID%}}"
    )
    assert remote["total_available_places"] == 10 and remote["reward"] == 150
    assert remote["completion_codes"][0]["code"] == study.completion_code
    assert ProlificStudyState.objects.get(study=study).status == "ACTIVE"


def test_a_second_draft_is_refused(published):
    study, client = published
    with pytest.raises(ProlificActionRefused, match="already has"):
        study_draft_create(
            study=study,
            client=client,
            entry_url=ENTRY,
            places=1,
            reward_minor=1,
            estimated_minutes=1,
        )


def test_pause_resume_and_sync_mirror_status_and_counts(published, fake_prolific):
    study, client = published
    completed(study, fake_prolific, "PIDA")
    assert study_transition(study=study, client=client, action="pause")["status"] == "PAUSED"
    study_transition(study=study, client=client, action="resume")
    state = study_sync(study=study, client=client)
    assert state.status == "ACTIVE"
    assert state.counts == {"AWAITING REVIEW": 1}


def test_approve_is_recorded_with_who_and_is_sent_once(published, fake_prolific):
    study, client = published
    completed(study, fake_prolific, "PIDA")
    study_sync(study=study, client=client)
    first = submissions_review(
        study=study, client=client, pids=["PIDA"], kind="approve", user=study.owner
    )
    calls = len(fake_prolific.calls)
    again = submissions_review(study=study, client=client, pids=["PIDA"], kind="approve")
    assert len(fake_prolific.calls) == calls  # already approved: nothing sent
    assert first[0].status == again[0].status == ProlificAction.Status.SUCCEEDED
    assert first[0].created_by == study.owner
    assert first[0].response["status"] == "APPROVED"


def test_a_rejection_needs_a_reason_prolific_accepts(published, fake_prolific):
    study, client = published
    completed(study, fake_prolific, "PIDR")
    study_sync(study=study, client=client)
    with pytest.raises(ProlificActionRefused, match="100 characters"):
        submissions_review(study=study, client=client, pids=["PIDR"], kind="reject", reason="no")
    done = submissions_review(
        study=study,
        client=client,
        pids=["PIDR"],
        kind="reject",
        reason=REASON,
        category="LOW_EFFORT",
    )
    assert done[0].status == ProlificAction.Status.SUCCEEDED and done[0].kind == "reject"


def test_a_failed_call_is_recorded_and_retried(published, fake_prolific):
    study, client = published
    completed(study, fake_prolific, "PIDF")
    study_sync(study=study, client=client)
    fake_prolific.fail_next(503, times=5)  # every try of one call
    failed = submissions_review(study=study, client=client, pids=["PIDF"], kind="approve")
    assert failed[0].status == ProlificAction.Status.FAILED
    assert "503" in failed[0].response["error"]
    retried = submissions_review(study=study, client=client, pids=["PIDF"], kind="approve")
    assert retried[0].status == ProlificAction.Status.SUCCEEDED
    assert ProlificAction.objects.count() == 1


def test_identification_bonuses_pay_once_however_often_retried(published, fake_prolific):
    study, client = published
    for pid, hits in (("PID1", 2), ("PID2", 1), ("PID3", 0)):
        completed(study, fake_prolific, pid, identified=hits)
    study_sync(study=study, client=client)  # their submissions, as Prolific lists them
    amounts = bonus_select(study=study, per_identified=Decimal("0.50"), label="id").amounts
    assert amounts == {"PID1": Decimal("1.00"), "PID2": Decimal("0.50")}
    fake_prolific.fail_next(503, times=5)  # the set-up fails: nothing paid, recorded failed
    failed = bonuses_pay(study=study, client=client, amounts=amounts, label="id")
    assert {a.status for a in failed} == {ProlificAction.Status.FAILED}
    for _ in range(3):
        bonuses_pay(study=study, client=client, amounts=amounts, label="id")
    assert sorted(fake_prolific.payments) == [
        (study.prolific_study_id, "PID1", 1.0),
        (study.prolific_study_id, "PID2", 0.5),
    ]
    assert set(ProlificAction.objects.values_list("status", flat=True)) == {"succeeded"}


def test_a_pay_whose_answer_was_lost_is_not_paid_again(published, fake_prolific):
    study, client = published
    completed(study, fake_prolific, "PIDL", identified=1)
    amounts = {"PIDL": Decimal("0.50")}
    real_pay = fake_prolific._bonus_pay

    def pay_then_fail(body, bonus_id):  # Prolific paid, but the answer never came back
        real_pay(body, bonus_id)
        return 502, {"error": "gateway"}, {}

    fake_prolific._bonus_pay = pay_then_fail
    import intruder.prolific.fake_server as fake_module

    routes = fake_module.ROUTES
    fake_module.ROUTES = [
        (p, m, (lambda s, b, *g: pay_then_fail(b, *g)) if h is real_pay.__func__ else h)
        for p, m, h in routes
    ]
    try:
        first = bonuses_pay(study=study, client=client, amounts=amounts, label="id")
    finally:
        fake_module.ROUTES = routes
    # Every answer was lost: recorded as failed, though Prolific paid.
    assert first[0].status == ProlificAction.Status.FAILED
    # The retry pays the same bonus; Prolific says it is paid already: succeeded, once.
    second = bonuses_pay(study=study, client=client, amounts=amounts, label="id")
    assert second[0].status == ProlificAction.Status.SUCCEEDED
    assert fake_prolific.payments == [(study.prolific_study_id, "PIDL", 0.5)]


def test_every_command_has_a_dry_run_that_prints_and_sends_nothing(
    prolific_settings, fake_prolific
):
    study = make_study(kind=Study.Kind.INTRUDER, prolific_study_id="64f0c0ffee0000000000beef")
    runs = [
        ["draft", "--entry-url", ENTRY, "--places", "5", "--reward", "100", "--minutes", "9"],
        ["publish"],
        ["pause"],
        ["resume"],
        ["stop"],
        ["sync"],
        ["approve", "PIDA", "--override", "a dry run to see the request"],
        ["reject", "PIDA", "--reason", REASON],
        ["bonus", "--per-identified", "0.5"],
    ]
    fresh = make_study(kind=Study.Kind.INTRUDER)
    for args in runs:
        out = StringIO()
        target = fresh if args[0] == "draft" else study
        call_command(
            "prolific", args[0], "--study", target.slug, "--dry-run", *args[1:], stdout=out
        )
        if args[0] != "bonus":  # no one to pay: nothing to print but the empty set-up
            assert "[dry-run]" in out.getvalue(), args
    out = StringIO()
    call_command("prolific", "subscribe", "--dry-run", "--target-url", "https://x/", stdout=out)
    assert out.getvalue().count("[dry-run] POST") == 5
    assert fake_prolific.calls == []
    assert not ProlificAction.objects.exists()
    fresh.refresh_from_db()
    assert fresh.prolific_study_id == ""
    assert fake_prolific.token not in out.getvalue()


def test_commands_without_a_token_say_so(settings):
    settings.PROLIFIC_API_TOKEN = ""
    study = make_study(kind=Study.Kind.INTRUDER)
    with pytest.raises(CommandError, match="PROLIFIC_API_TOKEN"):
        call_command("prolific", "sync", "--study", study.slug)
