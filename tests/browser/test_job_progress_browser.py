"""Long researcher steps run as jobs whose progress bar shows where the researcher looks."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from intruder.annotation import services
from intruder.models import Job
from intruder.services import anonymization, jobs
from tests.annotation.conftest import make_project, mention
from tests.browser import screenshots
from tests.intruder.fake_anonymizer import FakeAnonymizer

# postgres: the page polls while the job's progress is written on another connection.
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.postgres]
PASSWORD = "pw-browser-jobs"


@pytest.fixture
def annotated_project():
    previous = anonymization.set_anonymizer(FakeAnonymizer())
    owner = get_user_model().objects.create_user("ada", "ada@example.org", PASSWORD)
    project = make_project(owner=owner, suggest=False)
    task = services.task_next(annotator=services.annotator_for_user(project=project, user=owner))
    text = task.document.text
    services.task_save(task=task, revision=0, mentions=[mention(text, text.split()[0])])
    services.task_submit(task=task)
    yield project
    anonymization.set_anonymizer(previous)


def test_evaluating_shows_the_progress_bar_above_the_fold_then_the_scores(
    page, annotated_project, live_requests
):
    page.goto("/accounts/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/r/")
    for width, height in ((1280, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"/annotate/{annotated_project.slug}/evaluate/")
        if width == 1280:
            page.select_option("#id_system", "model")
            page.click("form.card button[type=submit]")
            page.wait_for_url(f"**/annotate/{annotated_project.slug}/evaluate/")
        bar = page.locator("#evaluation-job .progress")
        expect(bar).to_be_visible()
        box = bar.bounding_box()
        assert box is not None and box["y"] + box["height"] <= height, (width, box)
        screenshots.keep(page, f"evaluate_job_queued_{width}")
    page.set_viewport_size({"width": 1280, "height": 900})
    # The worker's part, in this process; the page's poll sees the end and reloads itself.
    job = Job.objects.get(kind="annotation_evaluate")
    with live_requests.paused():
        assert jobs.job_execute(job.pk, heartbeat_interval_s=None).status == "succeeded"
    expect(page.locator("#summary")).to_be_visible(timeout=15_000)
    screenshots.keep(page, "evaluate_job_done_1280")
