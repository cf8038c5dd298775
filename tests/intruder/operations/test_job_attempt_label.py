"""Job rows say "not started yet" while queued, nothing for a job run once, and "attempt N"
only for a job run again; the live poll sends the same words (issue 40: a queued job read
"attempt 0", and a finished one changed from "attempt 0 succeeded" to "attempt 1")."""

from __future__ import annotations

import pytest
from django.urls import reverse

from intruder.models import Job
from intruder.selectors.jobs import job_status
from tests.intruder.factories import logged_in, make_job, make_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("status", "attempts", "label"),
    [
        (Job.Status.QUEUED, 0, "not started yet"),
        (Job.Status.RUNNING, 1, ""),
        (Job.Status.SUCCEEDED, 1, ""),
        (Job.Status.QUEUED, 1, ""),  # retried, not yet claimed again
        (Job.Status.RUNNING, 2, "attempt 2"),
        (Job.Status.FAILED, 3, "attempt 3"),
    ],
)
def test_the_row_and_the_poll_say_the_same(status, attempts, label):
    study = make_study()
    job = make_job(study=study, status=status, attempts=attempts, created_by=study.owner)
    assert job.attempt_label == label == job_status(job)["attempt_label"]
    html = logged_in(study.owner).get(reverse("researcher-study", args=[study.slug]))
    html = html.content.decode()
    expected = f", {label}" if label else ""
    assert f'<span data-field="attempt">{expected}</span>' in html
    assert "attempt 0" not in html
    poll = logged_in(study.owner).get(reverse("researcher-job-status", kwargs={"pk": job.pk}))
    assert poll.json()["attempt_label"] == label
