"""The risk report in a real browser at 1280 and 390 px: every section is there, each table's
note is beside it, and neither the page nor the standalone HTML is wider than the screen
(wide tables scroll inside their own box)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from intruder.risk import attack_runs
from intruder.risk.rendering import standalone_html
from intruder.risk.report.summary import OPEN_WORLD_NOTE
from intruder.risk.selectors import run_report
from intruder.services import jobs
from tests.browser import screenshots
from tests.intruder.risk_fixtures import FAST_CONFIG, add_judgments, risk_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse 42"
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
SECTIONS = ("#risk-threat-model", "#risk-summary", "#risk-plots", "#frontier")
WIDER_THAN_SCREEN = "document.documentElement.scrollWidth > window.innerWidth + 1"


@pytest.fixture
def finished_run():
    owner = get_user_model().objects.create_user("ada", "ada@example.org", PASSWORD)
    study = risk_study(owner=owner)
    add_judgments(study)
    run = attack_runs.attack_run_start(
        study=study,
        user=owner,
        attacks=["tfidf", "bm25"],
        methods=["textwash-model", "clear"],
        folds=3,
        config=FAST_CONFIG,
    )
    assert jobs.job_execute(run.job.pk, heartbeat_interval_s=None).status == "succeeded"
    run.refresh_from_db()
    return run


def test_the_report_reads_whole_at_desktop_and_phone_widths(page, finished_run):
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto("/accounts/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/r/")
    page.goto(f"/r/{finished_run.study.slug}/risk/?run={finished_run.pk}")
    for suffix, (width, height) in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        for section in SECTIONS:
            expect(page.locator(section)).to_be_attached()
        expect(page.locator("#table-open_world .table-note")).to_contain_text(OPEN_WORLD_NOTE[:60])
        expect(page.locator("#risk-summary")).not_to_contain_text("do not .")
        assert not page.evaluate(WIDER_THAN_SCREEN), f"the risk page overflows at {width} px"
        screenshots.keep(page, f"risk-report-page-{suffix}")
    report = run_report(finished_run)
    page.set_content(standalone_html(report, "Risk report"))
    for suffix, (width, height) in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        expect(page.locator("#frontier")).to_be_attached()
        expect(page.locator("#risk-provenance")).to_be_attached()
        assert not page.evaluate(WIDER_THAN_SCREEN), f"report.html overflows at {width} px"
        screenshots.keep(page, f"risk-report-html-{suffix}")
    assert not errors, errors


def test_a_viewer_reads_the_report_and_is_told_who_makes_the_pdf(page, finished_run):
    from intruder.models import Job, StudyMember

    viewer = get_user_model().objects.create_user("vera", "vera@example.org", PASSWORD)
    StudyMember.objects.create(study=finished_run.study, user=viewer, role="viewer")
    page.goto("/accounts/login/")
    page.fill("#id_username", "vera")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/r/")
    page.goto(f"/r/{finished_run.study.slug}/risk/?run={finished_run.pk}")
    for suffix, (width, height) in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        expect(page.locator("#report-pdf")).to_contain_text("an owner or editor of the study")
        expect(page.locator("#report-pdf button")).to_have_count(0)
        expect(page.locator("#risk-summary")).to_be_visible()
        assert not page.evaluate(WIDER_THAN_SCREEN), f"the viewer's page overflows at {width} px"
        screenshots.keep(page, f"risk-report-viewer-{suffix}")
    # The action itself refuses a viewer (a forged POST gets the same 404 as any risk action).
    token = page.evaluate("document.cookie.match(/csrftoken=([^;]+)/)?.[1] || ''")
    answer = page.request.post(
        f"/r/{finished_run.study.slug}/risk/{finished_run.pk}/pdf/",
        headers={"X-CSRFToken": token},
    )
    assert answer.status == 404
    assert not Job.objects.filter(kind=Job.Kind.RISK_REPORT_PDF).exists()
