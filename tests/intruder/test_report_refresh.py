"""Report pages after a data change: an older stored report is shown at once and labelled,
one debounced job computes the current one, and downloads always use the current data."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.urls import reverse

from intruder.analysis.page import ANALYSIS_PAGE, analysis_page_parts
from intruder.models import Job, Judgment
from intruder.reports import refresh as report_refresh
from intruder.reports.models import ComputedReport
from intruder.reports.versions import study_data_version
from intruder.risk.pages import RISK_HTML, RISK_PAGE, RISK_REPORT
from intruder.services import jobs
from tests.intruder.factories import logged_in, make_job, make_judgment, make_participant
from tests.intruder.report_pages import replace_compute
from tests.intruder.risk_fixtures import add_judgments, finished_cheap_run, risk_study

pytestmark = pytest.mark.django_db

STALE_LABEL = "Not yet updated"
CURRENT_LABEL = "the current data"


@pytest.fixture
def judged_study():
    study = risk_study(per_person=2)
    add_judgments(study)
    return study


def add_one_judgment(study) -> Judgment:
    """A new intruder judges one text (a data change, as on a study taking judgments)."""
    text = study.descriptions.first().anonymizations.get()
    slot = text.assignments.count() + 1
    participant = make_participant(study=study)
    return make_judgment(participant=participant, text=text, slot=slot, cosine=0.0)


def no_compute(*args, **kwargs):
    raise AssertionError("a report was computed in the request")


def run_refresh_jobs() -> list[Job]:
    """Run every queued refresh job as the worker would, in this process."""
    queued = Job.objects.filter(kind=Job.Kind.REFRESH_REPORTS, status=Job.Status.QUEUED)
    return [jobs.job_execute(job.pk, heartbeat_interval_s=None) for job in queued]


def start_refresh(study) -> tuple[Job, bool]:
    """Queue the study's refresh job as a page does (the only one while it is active)."""
    return report_refresh.reports_refresh_start(owner=report_refresh.ReportOwner(study=study))


def test_a_refresh_job_does_not_change_the_data_version(judged_study):
    before = study_data_version(judged_study)
    make_job(study=judged_study, kind=Job.Kind.REFRESH_REPORTS)
    assert study_data_version(judged_study) == before


def test_a_first_view_computes_and_stores_the_report(judged_study):
    shown = report_refresh.page_report(study=judged_study, name=ANALYSIS_PAGE)
    assert shown.current and shown.job is None
    assert shown.count_then == Judgment.objects.filter(participant__study=judged_study).count()
    row = ComputedReport.objects.get(study=judged_study)
    assert row.data_version == study_data_version(judged_study)
    assert not Job.objects.filter(kind=Job.Kind.REFRESH_REPORTS).exists()


def test_after_a_change_the_older_report_is_shown_and_one_job_computes_the_current(
    judged_study, monkeypatch
):
    name = ANALYSIS_PAGE
    first = report_refresh.page_report(study=judged_study, name=name)
    n_before = first.value["summary"]["overall"]["n_judgments"]
    add_one_judgment(judged_study)

    # The request computes nothing: the older report comes back, labelled, with the job.
    replace_compute(monkeypatch, name, no_compute)
    stale = report_refresh.page_report(study=judged_study, name=name)
    assert not stale.current and stale.count_new == 1
    assert stale.value["summary"]["overall"]["n_judgments"] == n_before
    assert stale.job is not None and stale.job.status == Job.Status.QUEUED

    # A burst of changes and views queues no second job: the queued one computes them all.
    add_one_judgment(judged_study)
    again = report_refresh.page_report(study=judged_study, name=name)
    assert again.job.pk == stale.job.pk and again.count_new == 2
    assert Job.objects.filter(kind=Job.Kind.REFRESH_REPORTS).count() == 1

    monkeypatch.undo()
    [job] = run_refresh_jobs()
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.result["computed"] == [f"{name}()"]
    row = ComputedReport.objects.get(study=judged_study, name=name)
    assert row.data_version == study_data_version(judged_study) and row.requested_at is None

    # Another process (its own cache empty) reads the job's report from the shared store.
    cache.clear()
    replace_compute(monkeypatch, name, no_compute)
    fresh = report_refresh.page_report(study=judged_study, name=name)
    assert fresh.current and fresh.job is None
    assert fresh.value["summary"]["overall"]["n_judgments"] == n_before + 2


def test_the_job_computes_only_reports_a_page_asked_for_and_drops_a_deleted_runs(judged_study):
    report_refresh.page_report(study=judged_study, name=ANALYSIS_PAGE)
    add_one_judgment(judged_study)
    # Nobody looked since the change: the job has nothing to do for the analysis page.
    job, created = start_refresh(judged_study)
    assert created
    assert jobs.job_execute(job.pk, heartbeat_interval_s=None).result == {
        "computed": [],
        "dropped": [],
    }
    gone = ComputedReport.objects.create(
        study=judged_study,
        name=RISK_PAGE,
        args="(987654,)",
        data_version="old",
        content=b"",
        computed_at=job.created_at,
        requested_at=job.created_at,
    )
    job, _ = start_refresh(judged_study)
    result = jobs.job_execute(job.pk, heartbeat_interval_s=None).result
    assert result["dropped"] == ["risk-page(987654,)"]
    assert not ComputedReport.objects.filter(pk=gone.pk).exists()


def test_old_refresh_jobs_are_forgotten(judged_study):
    for _ in range(report_refresh.KEEP_JOBS + 2):
        job, _ = start_refresh(judged_study)
        jobs.job_execute(job.pk, heartbeat_interval_s=None)
    kept = Job.objects.filter(study=judged_study, kind=Job.Kind.REFRESH_REPORTS)
    assert kept.count() == report_refresh.KEEP_JOBS


def test_analysis_page_labels_an_older_report_until_the_job_stored_the_current(judged_study):
    client = logged_in(judged_study.owner)
    url = reverse("analysis-study", args=[judged_study.slug])
    body = client.get(url).content.decode()
    assert CURRENT_LABEL in body and STALE_LABEL not in body
    add_one_judgment(judged_study)
    body = client.get(url).content.decode()
    assert STALE_LABEL in body and "1 new judgment since" in body
    job = Job.objects.get(kind=Job.Kind.REFRESH_REPORTS)
    assert reverse("researcher-job-status", args=[job.pk]) in body  # polled; reloads at the end
    assert 'id="report-freshness"' in body and 'role="status"' in body
    run_refresh_jobs()
    body = client.get(url).content.decode()
    assert CURRENT_LABEL in body and STALE_LABEL not in body


def test_analysis_downloads_use_the_current_data_while_the_page_is_behind(judged_study):
    client = logged_in(judged_study.owner)
    client.get(reverse("analysis-study", args=[judged_study.slug]))
    summary_url = reverse("analysis-table", args=[judged_study.slug, "summary", "json"])
    n_before = json.loads(client.get(summary_url).content)["overall"]["n_judgments"]
    add_one_judgment(judged_study)
    assert (
        STALE_LABEL
        in client.get(reverse("analysis-study", args=[judged_study.slug])).content.decode()
    )
    assert json.loads(client.get(summary_url).content)["overall"]["n_judgments"] == n_before + 1


def test_risk_page_labels_an_older_report_and_its_downloads_stay_current(monkeypatch):
    run = finished_cheap_run(["textwash-model", "clear"])
    study = run.study
    client = logged_in(study.owner)
    url = reverse("risk-page", args=[study.slug]) + f"?run={run.pk}"
    assert CURRENT_LABEL in client.get(url).content.decode()
    summary_url = reverse("risk-download", args=[study.slug, run.pk, "summary.json"])
    before = client.get(summary_url).content
    # A changed setting changes what counts as identified: the data changed, no new judgment.
    study.identification_threshold = 0.1
    study.save()
    body = client.get(url).content.decode()
    assert STALE_LABEL in body and "the data changed since" in body
    assert "Persons most at risk" in body  # the older report, not a blank page
    current_summary = client.get(summary_url).content
    assert current_summary != before  # the download is of the current data
    [job] = run_refresh_jobs()
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.result["computed"] == [f"risk-page({run.pk},)"]
    body = client.get(url).content.decode()
    assert CURRENT_LABEL in body and STALE_LABEL not in body
    # The job stored the run's report too: a download in another process reads it.
    cache.clear()
    replace_compute(monkeypatch, RISK_REPORT, no_compute)
    assert client.get(summary_url).content == current_summary


def test_an_attack_run_stores_its_risk_report_before_its_job_ends(prepared_reports, monkeypatch):
    run = finished_cheap_run(["textwash-model"])
    row = ComputedReport.objects.get(study=run.study, name=RISK_PAGE)
    assert row.args == repr((run.pk,)) and row.data_version == study_data_version(run.study)
    assert run.job.message == "finished"  # after storing the report, its last step
    # The researcher's first view of the run reads it: nothing is computed in the request.
    cache.clear()
    replace_compute(monkeypatch, RISK_PAGE, no_compute)
    replace_compute(monkeypatch, RISK_REPORT, no_compute)
    client = logged_in(run.study.owner)
    body = client.get(reverse("risk-page", args=[run.study.slug]) + f"?run={run.pk}").content
    assert CURRENT_LABEL in body.decode() and "Persons most at risk" in body.decode()


def test_the_report_html_is_stored_once_for_every_process_and_redrawn_for_new_data(
    prepared_reports, monkeypatch
):
    run = finished_cheap_run(["textwash-model"])
    stored = ComputedReport.objects.get(study=run.study, name=RISK_HTML)
    assert stored.data_version == study_data_version(run.study)  # drawn by the run's job
    # Another process (its own cache empty) downloads it: nothing is drawn in the request.
    cache.clear()
    replace_compute(monkeypatch, RISK_HTML, no_compute)
    replace_compute(monkeypatch, RISK_REPORT, no_compute)
    client = logged_in(run.study.owner)
    url = reverse("risk-download", args=[run.study.slug, run.pk, "report.html"])
    first = client.get(url)
    assert first.status_code == 200 and first.content.startswith(b"<!doctype html>")
    # New data: a download is never an older report, so it is drawn anew and stored.
    monkeypatch.undo()
    add_one_judgment(run.study)
    again = client.get(url)
    assert again.status_code == 200 and again.content != first.content
    row = ComputedReport.objects.get(pk=stored.pk)
    assert row.data_version == study_data_version(run.study) != stored.data_version


def test_an_attack_run_whose_report_fails_still_succeeds(prepared_reports, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("no report today")

    replace_compute(monkeypatch, RISK_PAGE, broken)
    run = finished_cheap_run(["textwash-model"])  # asserts the job succeeded
    assert run.results.exists()
    assert not ComputedReport.objects.filter(name=RISK_PAGE).exists()
    assert "its risk report could not be stored" in caplog.text


def test_preparing_a_current_report_computes_nothing(prepared_reports, judged_study, monkeypatch):
    name = ANALYSIS_PAGE
    report_refresh.report_prepare(study=judged_study, name=name)
    stored = ComputedReport.objects.get(study=judged_study, name=name)
    replace_compute(monkeypatch, name, no_compute)
    report_refresh.report_prepare(study=judged_study, name=name)
    assert ComputedReport.objects.get(pk=stored.pk).computed_at == stored.computed_at
    add_one_judgment(judged_study)  # behind its data: prepared again
    monkeypatch.undo()
    report_refresh.report_prepare(study=judged_study, name=name)
    row = ComputedReport.objects.get(pk=stored.pk)
    assert row.data_version == study_data_version(judged_study) and row.judgments > stored.judgments


def test_reports_are_left_to_their_first_view_when_preparing_is_off(judged_study, settings):
    settings.INTRUDER_PREPARE_REPORTS = False
    report_refresh.report_prepare(study=judged_study, name=ANALYSIS_PAGE)
    assert not ComputedReport.objects.exists()


def test_once_the_job_has_run_the_page_shows_the_numbers_of_a_fresh_computation(judged_study):
    client = logged_in(judged_study.owner)
    url = reverse("analysis-study", args=[judged_study.slug])
    client.get(url)  # the first view stores the report
    for _ in range(3):
        add_one_judgment(judged_study)
        client.get(url)  # shows the older report, labelled; one job is queued
    [job] = run_refresh_jobs()
    assert job.status == Job.Status.SUCCEEDED, job.error
    cache.clear()  # another process: the page reads the shared store
    body = client.get(url).content.decode()
    assert CURRENT_LABEL in body

    fresh = analysis_page_parts(judged_study)
    shown = report_refresh.page_report(study=judged_study, name=ANALYSIS_PAGE)
    assert shown.value["summary"] == fresh["summary"]
    assert fresh["summary"]["overall"]["n_judgments"] == shown.count_then
    assert fresh["sections"] and fresh["layouts"]
    for part in (*fresh["sections"], *fresh["layouts"]):
        assert str(part["table"]) in body  # every table on the page, number for number
