"""Bonuses go only to those who earned them (issue 47).

Paid by default: submissions of this Prolific study, completed here, per identified judgment
the study's exclusion rules keep and no other bonus label paid. Everyone else is paid only
by the researcher's explicit choice with a reason; the sandbox, like Prolific, refuses a
bonus for a participant who is not a submission of the study.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse

from intruder.models import Judgment, Participant
from intruder.prolific.bonuses import bonus_candidates, bonus_select
from intruder.prolific.models import ProlificAction
from intruder.prolific.services import bonuses_pay, study_sync
from tests.intruder.factories import logged_in, make_judgment, make_participant
from tests.intruder.prolific.test_review_and_bonus import completed

pytestmark = pytest.mark.django_db

PER = Decimal("0.50")


def _pay(study, client, label, **choice):
    chosen = bonus_select(study=study, per_identified=PER, label=label, **choice)
    return chosen, bonuses_pay(
        study=study,
        client=client,
        amounts=chosen.amounts,
        label=label,
        judgments=chosen.judgments,
        overrides=chosen.overrides,
    )


def _tester(study) -> Participant:
    """Entered with STUDY_ID=local before the draft existed: not a submission of the study."""
    tester = make_participant(
        study=study, prolific_pid="PIDLOCAL", status=Participant.Status.COMPLETED
    )
    text = study.descriptions.first().anonymizations.get()
    make_judgment(participant=tester, text=text, slot=9, identified=True, guessed_name="X")
    return tester


def test_the_excluded_and_the_non_submission_are_not_paid(published, fake_prolific):
    study, client = published
    completed(study, fake_prolific, "PIDOK", identified=2)
    completed(study, fake_prolific, "PIDEXCL", identified=1)
    Judgment.objects.filter(participant__prolific_pid="PIDEXCL").update(flag_review="confirmed")
    _tester(study)
    study_sync(study=study, client=client)
    chosen, _ = _pay(study, client, "identification")
    assert chosen.amounts == {"PIDOK": Decimal("1.00")}
    why = {c.prolific_pid: c.why_not for c in chosen.candidates}
    assert why["PIDEXCL"].startswith("every identified answer is excluded")
    assert why["PIDLOCAL"] == "not a submission of this Prolific study"
    assert [(pid, amount) for _, pid, amount in fake_prolific.payments] == [("PIDOK", 1.0)]
    action = ProlificAction.objects.get(prolific_pid="PIDOK")
    assert sorted(action.judgment_ids) == sorted(
        Judgment.objects.filter(participant__prolific_pid="PIDOK", identified=True).values_list(
            "pk", flat=True
        )
    )


def test_judgments_already_paid_under_another_label_are_not_paid_again(published, fake_prolific):
    study, client = published
    completed(study, fake_prolific, "PIDTWICE", identified=2)
    study_sync(study=study, client=client)
    _pay(study, client, "identification")
    chosen, done = _pay(study, client, "Identification round 2")
    assert chosen.amounts == {} and done == []
    (candidate,) = chosen.candidates
    assert candidate.why_not == "already paid under another label"
    assert {j.earlier for j in candidate.judgments} == {"identification"}
    assert len(fake_prolific.payments) == 1
    # The same label again is the same bonus: nothing new either.
    _pay(study, client, "IDENTIFICATION ")
    assert len(fake_prolific.payments) == 1


def test_a_bonus_recorded_before_judgments_were_counts_as_paying_them(published, fake_prolific):
    study, client = published
    completed(study, fake_prolific, "PIDOLD", identified=1)
    study_sync(study=study, client=client)
    bonuses_pay(study=study, client=client, amounts={"PIDOLD": PER}, label="old")  # no ids
    chosen, _ = _pay(study, client, "new")
    assert chosen.amounts == {}


def test_paying_anyone_else_takes_a_ticked_choice_and_a_reason(published, fake_prolific):
    study, client = published
    completed(study, fake_prolific, "PIDEXCL", identified=1)
    Judgment.objects.filter(participant__prolific_pid="PIDEXCL").update(flag_review="confirmed")
    study_sync(study=study, client=client)
    with pytest.raises(ValueError, match="say why"):
        bonus_select(study=study, per_identified=PER, label="b", include=["PIDEXCL"])
    with pytest.raises(ValueError, match="No identified judgment"):
        bonus_select(
            study=study, per_identified=PER, label="b", include=["NOBODY"], include_reason="x" * 20
        )
    reason = "the flag was a false alarm, checked by hand"
    chosen, done = _pay(study, client, "b", include=["PIDEXCL"], include_reason=reason)
    assert chosen.amounts == {"PIDEXCL": PER}
    assert done[0].override == f"Included outside the rule: {reason}"
    assert [pid for _, pid, _ in fake_prolific.payments] == ["PIDEXCL"]


def test_the_sandbox_refuses_a_bonus_for_someone_not_a_submission(published, fake_prolific):
    """Included by choice, a tester with no submission is refused by the sandbox as by
    Prolific: recorded as failed with Prolific's words, nobody paid."""
    study, client = published
    _tester(study)
    chosen, done = _pay(
        study, client, "b", include=["PIDLOCAL"], include_reason="rehearsing the refusal"
    )
    assert chosen.amounts == {"PIDLOCAL": PER}
    assert done[0].status == ProlificAction.Status.FAILED
    assert "Not participants of this study: PIDLOCAL" in done[0].response["error"]
    assert fake_prolific.payments == []


def test_the_preview_lists_each_judgment_with_text_guess_score_exclusion_and_earlier_bonus(
    published, fake_prolific
):
    study, client = published
    completed(study, fake_prolific, "PIDOK", identified=1)
    completed(study, fake_prolific, "PIDEXCL", identified=1)
    Judgment.objects.filter(participant__prolific_pid__in=["PIDOK", "PIDEXCL"]).update(
        guessed_name="Ada Lovelace", cosine=0.91
    )
    Judgment.objects.filter(participant__prolific_pid="PIDEXCL").update(flag_review="confirmed")
    _tester(study)
    study_sync(study=study, client=client)
    _pay(study, client, "first")
    page = logged_in(study.owner).post(
        reverse("researcher-prolific-bonus", kwargs={"slug": study.slug}),
        {"per_identified": "0.50", "label": "second"},
    )
    html = page.content.decode()
    assert page.status_code == 200
    for words in (
        "Ada Lovelace",
        "0.91",
        "excluded",
        "judged unusable by the researcher",
        "already paid under “first”: not paid again",
        "not a submission of this Prolific study",
        "never a submission of this study",
        'name="include" value="PIDLOCAL"',
    ):
        assert words in html, words
    text = study.descriptions.first().anonymizations.get()
    assert f"#{text.pk}" in html


def test_candidates_read_identified_from_the_judgment_field_only(published, fake_prolific):
    """Whatever the scoring writes to `Judgment.identified` (issue 46's rescoring included)
    is what is paid for: a guess rescored as not identified drops out."""
    study, client = published
    completed(study, fake_prolific, "PIDR", identified=2)
    study_sync(study=study, client=client)
    first = Judgment.objects.filter(participant__prolific_pid="PIDR", identified=True).first()
    Judgment.objects.filter(pk=first.pk).update(identified=False)
    (candidate,) = bonus_candidates(study, label="x")
    assert [j.judgment_id for j in candidate.judgments] != [first.pk]
    assert len(candidate.judgments) == 1


def test_the_sandbox_refuses_approvals_for_someone_not_a_submission(published, fake_prolific):
    """As Prolific: a submission ID the study does not have is not found; and the platform
    sends no approval without a submission."""
    from intruder.prolific.client import ProlificError
    from intruder.prolific.services import ProlificActionRefused, submissions_review

    study, client = published
    sub = completed(study, fake_prolific, "PIDREAL", identified=0)
    with pytest.raises(ProlificError):
        client.submission_approve("0123456789abcdef01234567")
    _tester(study)
    with pytest.raises(ProlificActionRefused, match="no submission of PIDLOCAL"):
        submissions_review(
            study=study, client=client, pids=["PIDLOCAL"], kind="approve",
            override="a tester from before the draft",
        )  # fmt: skip
    # Neither refusal touched the study's one real submission.
    assert fake_prolific.submissions[sub]["status"] == "AWAITING REVIEW"
