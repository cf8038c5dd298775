"""A report page after a data change, in a real browser at 1280 and 390 px: the older report
is shown with a visible label and the refresh job's progress, and the page reloads itself
into the current report when the job ends."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from intruder.models import Job
from intruder.services import jobs
from tests.browser import screenshots
from tests.intruder.factories import make_judgment, make_participant
from tests.intruder.risk_fixtures import add_judgments, risk_study

# postgres: the page polls while a job stores the report on another connection.
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.postgres]

PASSWORD = "correct horse 42"
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}


@pytest.fixture
def judged_study():
    owner = get_user_model().objects.create_user("ada", "ada@example.org", PASSWORD)
    study = risk_study(per_person=2, owner=owner)
    add_judgments(study)
    return study


def login(page) -> None:
    page.goto("/accounts/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/r/")


def test_an_older_analysis_report_is_labelled_until_the_page_reloads_the_current(
    page, judged_study, live_requests
):
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    login(page)
    url = f"/r/{judged_study.slug}/analysis/"
    page.goto(url)
    expect(page.locator("#report-freshness")).to_contain_text("current data")

    text = judged_study.descriptions.first().anonymizations.get()
    participant = make_participant(study=judged_study)
    make_judgment(participant=participant, text=text, slot=text.assignments.count() + 1)
    page.goto(url)
    label = page.locator("#report-freshness")
    expect(label).to_be_visible()
    expect(label).to_contain_text("Not yet updated")
    expect(label).to_contain_text("1 new judgment since")
    expect(page.locator("h2", has_text="Headline")).to_be_visible()  # the older report, shown
    expect(page.locator("tr.job", has_text="refresh_reports")).to_be_visible()
    for suffix, (width, height) in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        expect(label).to_be_in_viewport()
        screenshots.keep(page, f"report-refresh-stale-{suffix}")
    page.set_viewport_size({"width": 1280, "height": 900})

    # The worker's part, in this process; the page's poll sees the end and reloads itself.
    job = Job.objects.get(kind=Job.Kind.REFRESH_REPORTS)
    with live_requests.paused():
        assert jobs.job_execute(job.pk, heartbeat_interval_s=None).status == "succeeded"
    expect(page.locator("#report-freshness")).to_contain_text("current data", timeout=15_000)
    expect(page.locator("#report-freshness")).not_to_contain_text("Not yet updated")
    screenshots.keep(page, "report-refresh-current-desktop")
    assert not errors, errors
