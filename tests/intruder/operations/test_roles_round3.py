"""What each role may do with jobs: viewers follow progress, only editors see tracebacks."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from intruder.models import Job, StudyMember
from tests.intruder.factories import make_job, make_member, make_study, make_user

pytestmark = pytest.mark.django_db

TRACEBACK = 'Traceback (most recent call last):\n  File "/srv/intruder/app/x.py"\nValueError: x'


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def failed_job():
    study = make_study()
    return make_job(
        study=study,
        created_by=study.owner,
        status=Job.Status.FAILED,
        error=TRACEBACK,
        message="failed: ValueError: x",
    )


def test_an_account_without_a_role_does_not_see_the_job(failed_job):
    stranger = make_user()
    assert _api(stranger).get("/api/jobs/").json()["count"] == 0
    assert _api(stranger).get(f"/api/jobs/{failed_job.pk}/").status_code == 404


def test_a_viewer_reads_the_jobs_message_but_never_its_traceback(failed_job):
    viewer = make_member(study=failed_job.study)
    listing = _api(viewer).get("/api/jobs/").json()
    detail = _api(viewer).get(f"/api/jobs/{failed_job.pk}/")
    rows = listing["results"]
    assert [r["error"] for r in rows] == [""] and detail.json()["error"] == ""
    assert detail.json()["message"] == "failed: ValueError: x"
    assert "/srv/intruder" not in str(listing) + detail.content.decode()


@pytest.mark.parametrize("role", ["owner", StudyMember.Role.EDITOR])
def test_owners_and_editors_read_the_traceback_to_fix_and_retry(failed_job, role):
    user = failed_job.study.owner if role == "owner" else None
    user = user or make_member(study=failed_job.study, role=StudyMember.Role.EDITOR)
    assert _api(user).get(f"/api/jobs/{failed_job.pk}/").json()["error"] == TRACEBACK
