"""Completion is what Prolific pays for (issue 37, finding 4).

An intruder who saw the completion code and closed the tab has completed: Prolific pays
whoever enters the code. Approving anyone who did not complete here needs a reason; the
researcher who clicks "Approve selected" on a participant still judging is stopped.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from intruder.evidence.flags import exclusion_rules_set
from intruder.models import Participant, Study
from intruder.prolific.bulk_review import APPROVE_CLEAN, bulk_candidates
from intruder.prolific.models import ProlificAction, ProlificSubmission
from intruder.prolific.services import ProlificActionRefused, submissions_review
from tests.intruder.factories import (
    logged_in,
    make_description,
    make_judgment,
    make_participant,
    make_study,
    make_target,
    make_text,
)

pytestmark = pytest.mark.django_db


def _form_action(page) -> str:
    return re.search(r'<form method="post" action="([^"]+)"', page.content.decode()).group(1)


@pytest.fixture
def study(prolific_settings):
    study = make_study(kind=Study.Kind.INTRUDER, items_per_participant=1, judgments_per_text=2)
    for i in range(2):
        target = make_target(study=study, name=f"Oriel Vantassel{i}")
        make_text(study=study, description=make_description(study=study, target=target))
    # Rules set before launch that exclude nothing: the test client answers in 0 s.
    exclusion_rules_set(study=study, exclude=[], thresholds={})
    return study


def _walk_to_the_code(client, study: Study, pid: str) -> None:
    """Enrol, consent, read the instructions, judge the one text, load the debrief; leave."""
    entry = reverse("participant-entry", kwargs={"slug": study.slug})
    home = client.get(f"{entry}?PROLIFIC_PID={pid}")["Location"]
    page = client.get(home)
    client.post(_form_action(page), {"decision": "agree"})
    client.post(_form_action(client.get(home)))
    page = client.get(home)
    assignment = re.search(rb'name="assignment_id" value="(\d+)"', page.content)[1].decode()
    client.post(
        _form_action(page),
        {"assignment_id": assignment, "self_identified": "no", "other_knowledge": "Sails."},
    )
    debrief = client.get(home)
    assert study.completion_code in debrief.content.decode()  # shown; the tab is closed


def _on_prolific(study: Study, pid: str, status: str) -> None:
    ProlificSubmission.objects.create(
        study=study,
        submission_id=f"sub{pid}",
        prolific_pid=pid,
        status=status,
        status_at="2026-11-27T10:00:00Z",
    )


def test_seeing_the_code_completes_and_the_pages_say_who_never_came_back(
    client, study, fake_prolific
):
    _walk_to_the_code(client, study, "PIDCLOSEDTAB")
    participant = Participant.objects.get(prolific_pid="PIDCLOSEDTAB")
    assert participant.status == Participant.Status.COMPLETED
    assert participant.completed_at is not None
    Study.objects.filter(pk=study.pk).update(prolific_study_id="64f0c0ffee00000000000001")
    _on_prolific(study, "PIDCLOSEDTAB", "ACTIVE")
    owner = logged_in(study.owner)
    monitor = owner.get(reverse("researcher-participants", kwargs={"slug": study.slug}))
    assert 'data-testid="not-back-on-prolific"' in monitor.content.decode()
    assert "PIDCLOSEDTAB" in monitor.content.decode()
    prolific_page = owner.get(reverse("researcher-prolific", kwargs={"slug": study.slug}))
    assert "never came back to Prolific" in prolific_page.content.decode()
    # Once they submit the code on Prolific, the bulk rule approves them.
    ProlificSubmission.objects.filter(prolific_pid="PIDCLOSEDTAB").update(status="AWAITING REVIEW")
    study.refresh_from_db()
    assert [c.prolific_pid for c in bulk_candidates(study, APPROVE_CLEAN)] == ["PIDCLOSEDTAB"]


def test_a_participant_still_judging_is_not_approved_without_a_reason(
    study, fake_prolific, client_for, confirmed
):
    Study.objects.filter(pk=study.pk).update(prolific_study_id="64f0c0ffee00000000000002")
    study.refresh_from_db()
    fake_prolific.studies[study.prolific_study_id] = {"id": study.prolific_study_id}
    make_participant(study=study, prolific_pid="PIDJUDGING")  # started, never reached the code
    sub = fake_prolific.submission_start(study.prolific_study_id, "PIDJUDGING")
    fake_prolific.submission_set_status(sub, "AWAITING REVIEW")  # entered a code anyway
    ProlificSubmission.objects.create(
        study=study,
        submission_id=sub,
        prolific_pid="PIDJUDGING",
        status="AWAITING REVIEW",
        status_at="2026-11-27T10:00:00Z",
    )
    client = client_for()
    for override in ("", "   ", "ok ok"):
        with pytest.raises(ProlificActionRefused, match="Not completed here: PIDJUDGING"):
            submissions_review(
                study=study, client=client, pids=["PIDJUDGING"], kind="approve", override=override
            )
    assert fake_prolific.submissions[sub]["status"] == "AWAITING REVIEW"
    assert not ProlificAction.objects.exists()
    # The page refuses the same click and says why; nothing is sent.
    owner = logged_in(study.owner)
    url = reverse("researcher-prolific-review", kwargs={"slug": study.slug})
    response = owner.post(url, {"pid": ["PIDJUDGING"], "kind": "approve"}, follow=True)
    assert "Not completed here" in response.content.decode()
    assert fake_prolific.submissions[sub]["status"] == "AWAITING REVIEW"
    # With the researcher's reason it is sent, and the reason is recorded.
    reason = "Their browser crashed on the last text; they emailed the code."
    preview = owner.post(url, {"pid": ["PIDJUDGING"], "kind": "approve", "override": reason})
    assert "Not completed here: PIDJUDGING" in preview.content.decode()  # said again
    assert fake_prolific.submissions[sub]["status"] == "AWAITING REVIEW"
    confirmed(owner, url, {"pid": ["PIDJUDGING"], "kind": "approve", "override": reason})
    assert fake_prolific.submissions[sub]["status"] == "APPROVED"
    action = ProlificAction.objects.get()
    assert action.reason == f"Approved without completion here: {reason}"
    assert action.created_by == study.owner


def test_rejections_need_no_completion(study, fake_prolific, client_for):
    """The completion rule guards approvals only: someone who never finished can be rejected."""
    Study.objects.filter(pk=study.pk).update(prolific_study_id="64f0c0ffee00000000000003")
    study.refresh_from_db()
    fake_prolific.studies[study.prolific_study_id] = {"id": study.prolific_study_id}
    make_participant(study=study, prolific_pid="PIDGONE")
    sub = fake_prolific.submission_start(study.prolific_study_id, "PIDGONE")
    fake_prolific.submission_set_status(sub, "AWAITING REVIEW")
    _on_prolific(study, "PIDGONE", "AWAITING REVIEW")
    ProlificSubmission.objects.filter(prolific_pid="PIDGONE").update(submission_id=sub)
    done = submissions_review(
        study=study,
        client=client_for(),
        pids=["PIDGONE"],
        kind="reject",
        reason="You entered a completion code without answering any of the texts of the study, "
        "so there is no data to pay for.",
        category="NO_DATA",
    )
    assert done[0].status == ProlificAction.Status.SUCCEEDED


def test_a_timed_out_intruder_who_was_shown_the_code_is_approved_without_a_reason(
    study, fake_prolific, client_for
):
    """The time-out page shows the code to whoever finished a text: that work is paid for."""
    Study.objects.filter(pk=study.pk).update(prolific_study_id="64f0c0ffee00000000000004")
    study.refresh_from_db()
    fake_prolific.studies[study.prolific_study_id] = {"id": study.prolific_study_id}
    text = study.descriptions.first().anonymizations.get()
    worked = make_participant(
        study=study, prolific_pid="PIDWORKED", status=Participant.Status.TIMED_OUT
    )
    make_judgment(participant=worked, text=text, slot=1)
    make_participant(study=study, prolific_pid="PIDIDLE", status=Participant.Status.TIMED_OUT)
    subs = {}
    for pid in ("PIDWORKED", "PIDIDLE"):
        subs[pid] = fake_prolific.submission_start(study.prolific_study_id, pid)
        fake_prolific.submission_set_status(subs[pid], "AWAITING REVIEW")
        ProlificSubmission.objects.create(
            study=study,
            submission_id=subs[pid],
            prolific_pid=pid,
            status="AWAITING REVIEW",
            status_at="2026-11-27T10:00:00Z",
        )
    client = client_for()
    done = submissions_review(study=study, client=client, pids=["PIDWORKED"], kind="approve")
    assert done[0].status == ProlificAction.Status.SUCCEEDED and done[0].reason == ""
    with pytest.raises(ProlificActionRefused, match="Not completed here: PIDIDLE"):
        submissions_review(study=study, client=client, pids=["PIDIDLE"], kind="approve")
