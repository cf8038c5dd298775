"""Every submission Prolific reports is listed and can be reviewed (issue 47).

A participant who enters the completion code on Prolific without opening the study here has
a submission (AWAITING REVIEW) and no participant row: the status count showed them, no
list did.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from intruder.prolific.models import ProlificAction
from intruder.prolific.services import (
    ProlificActionRefused,
    study_sync,
    submission_rows,
    submissions_review,
)
from tests.intruder.factories import logged_in

pytestmark = pytest.mark.django_db

REASON = "You entered the completion code on Prolific without ever opening the study, " * 2


def _never_started(study, fake, client, pids):
    for pid in pids:
        sub = fake.submission_start(study.prolific_study_id, pid)
        fake.submission_set_status(sub, "AWAITING REVIEW")
    study_sync(study=study, client=client)


def test_a_submission_that_never_started_here_is_listed_and_named(published, fake_prolific):
    study, client = published
    _never_started(study, fake_prolific, client, ["PIDGHOST"])
    (row,) = submission_rows(study)
    assert row.prolific_pid == "PIDGHOST" and row.platform_status == "never started here"
    page = logged_in(study.owner).get(reverse("researcher-prolific", kwargs={"slug": study.slug}))
    html = page.content.decode()
    assert "PIDGHOST" in html and "never started here" in html
    assert 'name="pid" value="PIDGHOST"' in html  # selectable for approval or rejection


def test_it_can_be_rejected_and_approved_only_with_a_reason(published, fake_prolific):
    study, client = published
    _never_started(study, fake_prolific, client, ["PIDGHOST", "PIDPAID"])
    done = submissions_review(
        study=study, client=client, pids=["PIDGHOST"], kind="reject", reason=REASON,
        category="NO_DATA",
    )  # fmt: skip
    assert done[0].status == ProlificAction.Status.SUCCEEDED
    with pytest.raises(ProlificActionRefused, match="Not completed here: PIDPAID"):
        submissions_review(study=study, client=client, pids=["PIDPAID"], kind="approve")
    done = submissions_review(
        study=study, client=client, pids=["PIDPAID"], kind="approve",
        override="emailed us their answers after a crash",
    )  # fmt: skip
    assert done[0].status == ProlificAction.Status.SUCCEEDED
    statuses = {s["participant_id"]: s["status"] for s in fake_prolific.submissions.values()}
    assert statuses == {"PIDGHOST": "REJECTED", "PIDPAID": "APPROVED"}
