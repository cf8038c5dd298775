"""Risk pages, downloads, API and CLI: who may see and start what, and what they get."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from intruder.models import Job, StudyMember
from intruder.risk.models import AttackRun
from intruder.services import jobs
from tests.intruder.factories import logged_in, make_member, make_user
from tests.intruder.risk_fixtures import FAST_CONFIG, finished_cheap_run, risk_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study_with_run():
    run = finished_cheap_run(["textwash-model", "clear"])
    return run.study, run


def test_risk_page_shows_the_report_with_plots_and_downloads(study_with_run):
    study, run = study_with_run
    response = logged_in(study.owner).get(reverse("risk-page", args=[study.slug]))
    assert response.status_code == 200
    body = response.content.decode()
    assert "Persons most at risk" in body and "<svg" in body
    assert "Spearman" in body or "kappa" in body
    # The PDF takes seconds to draw: the page offers a job, not a slow link.
    assert reverse("risk-pdf-start", args=[study.slug, run.pk]) in body
    assert reverse("risk-download", args=[study.slug, run.pk, "report.pdf"]) not in body


@pytest.mark.slow  # draws the PDF
@pytest.mark.postgres
def test_the_pdf_is_made_by_a_job_and_linked_until_the_data_change(study_with_run):
    from intruder.reports.models import ReportFile

    study, run = study_with_run
    client = logged_in(study.owner)
    page_url = reverse("risk-page", args=[study.slug]) + f"?run={run.pk}"
    response = client.post(reverse("risk-pdf-start", args=[study.slug, run.pk]))
    assert response.status_code == 302 and response["Location"].endswith("#report")
    job = Job.objects.get(kind="risk_report_pdf")
    body = client.get(page_url).content.decode()
    assert reverse("researcher-job-status", args=[job.pk]) in body  # its progress bar
    client.post(reverse("risk-pdf-start", args=[study.slug, run.pk]))  # a double click
    assert Job.objects.filter(kind="risk_report_pdf").count() == 1
    job = jobs.job_execute(job.pk, heartbeat_interval_s=None)
    assert job.status == "succeeded" and job.progress_done == job.progress_total > 2
    pdf_url = reverse("risk-download", args=[study.slug, run.pk, "report.pdf"])
    assert pdf_url in client.get(page_url).content.decode()
    stored = ReportFile.objects.get(run=run)
    download = client.get(pdf_url)
    assert download.content == bytes(stored.content) and download.content.startswith(b"%PDF")
    # New data (here a changed setting) make the stored PDF outdated: no link, a new job.
    study.identification_threshold = 0.9
    study.save()
    body = client.get(page_url).content.decode()
    assert pdf_url not in body and reverse("risk-pdf-start", args=[study.slug, run.pk]) in body


@pytest.mark.parametrize(
    "name, content_type, marker",
    [
        ("report.html", "text/html", b"<!doctype html>"),
        ("report.pdf", "application/pdf", b"%PDF"),
        ("summary.json", "application/json", b'"trir"'),
        ("rates_target.csv", "text/csv", b"human_pct_identified"),
        ("per_text.json", "application/json", b"human_identified"),
    ],
)
def test_every_download_has_its_format(study_with_run, name, content_type, marker):
    study, run = study_with_run
    url = reverse("risk-download", args=[study.slug, run.pk, name])
    response = logged_in(study.owner).get(url)
    assert response.status_code == 200
    assert response["Content-Type"].startswith(content_type)
    assert marker in response.content


def test_unknown_downloads_and_runs_are_404(study_with_run):
    study, run = study_with_run
    client = logged_in(study.owner)
    assert (
        client.get(reverse("risk-download", args=[study.slug, run.pk, "x.exe"])).status_code == 404
    )
    assert (
        client.get(reverse("risk-download", args=[study.slug, 999, "report.html"])).status_code
        == 404
    )
    assert client.get(reverse("risk-page", args=[study.slug]) + "?run=abc").status_code == 404


def test_viewers_read_but_cannot_start_and_outsiders_see_nothing(study_with_run):
    study, run = study_with_run
    viewer = make_member(study=study, role=StudyMember.Role.VIEWER)
    outsider = make_user()
    page = reverse("risk-page", args=[study.slug])
    assert logged_in(viewer).get(page).status_code == 200
    check = reverse("risk-check-start", args=[study.slug])
    assert logged_in(viewer).post(check).status_code == 404
    assert logged_in(outsider).get(page).status_code == 404
    download = reverse("risk-download", args=[study.slug, run.pk, "report.html"])
    assert logged_in(outsider).get(download).status_code == 404
    assert Client().get(page).status_code == 302  # login first
    assert AttackRun.objects.count() == 1


def test_form_starts_a_run_and_bad_settings_come_back_as_messages():
    study = risk_study(per_person=2)
    client = logged_in(study.owner)
    url = reverse("risk-run-start", args=[study.slug])
    response = client.post(
        url,
        {
            "attacks": ["tfidf"],
            "methods": ["clear"],
            "background": "cross_validated",
            "folds": 2,
            "seed": 0,
        },
    )
    assert response.status_code == 302
    run = AttackRun.objects.get()
    assert run.job.status == Job.Status.QUEUED and run.attacks == ["tfidf"]
    response = client.post(
        url,
        {
            "attacks": ["tfidf"],
            "methods": ["clear"],
            "background": "uploaded",
            "folds": 2,
            "seed": 0,
        },
        follow=True,
    )
    assert "upload background documents" in response.content.decode()
    assert AttackRun.objects.count() == 1


def test_uploaded_background_files_start_an_uploaded_run():
    from django.core.files.uploadedfile import SimpleUploadedFile

    study = risk_study(per_person=1)
    client = logged_in(study.owner)
    files = [
        SimpleUploadedFile("orlena.txt", b"glassblower from Quellmar"),
        SimpleUploadedFile("more.csv", b"target,text\nbastian,charts the Vennic trench\n"),
    ]
    client.post(
        reverse("risk-run-start", args=[study.slug]),
        {
            "attacks": ["tfidf"],
            "methods": ["clear"],
            "background": "uploaded",
            "folds": 2,
            "seed": 0,
            "documents": files,
        },
    )
    run = AttackRun.objects.get()
    assert set(run.background_documents) == {"orlena", "bastian"}


def test_risk_check_flags_re_identified_drafts_on_the_review_page_with_their_words(
    tmp_path, monkeypatch
):
    study = risk_study()
    client = logged_in(study.owner)
    response = client.post(reverse("risk-check-start", args=[study.slug]), {"next": "review"})
    assert response.status_code == 302 and response["Location"].endswith("/review/")
    run = AttackRun.objects.get(purpose=AttackRun.Purpose.RISK_CHECK)
    run.config = FAST_CONFIG
    run.attacks = ["tfidf", "bm25"]
    run.save()
    assert jobs.job_execute(run.job.pk).status == Job.Status.SUCCEEDED
    body = client.get(reverse("researcher-review", args=[study.slug])).content.decode()
    assert "re-identified by the machine" in body
    assert (
        body.count("data-risk-flag=")
        == run.results.filter(true_rank=1).values("anonymized_text").distinct().count()
        > 0
    )
    flagged = run.results.filter(true_rank=1, attack="tfidf").first()
    assert flagged.driving_words[0] in body
    # The attack's probability is named "machine confidence", never "p" (issue 35).
    assert "machine confidence" in body and ", p = " not in body
    detail = client.get(
        reverse("researcher-review-text", args=[study.slug, flagged.anonymized_text_id])
    )
    assert "machine re-identifies" in detail.content.decode()
    study_page = client.get(reverse("researcher-study", args=[study.slug])).content.decode()
    assert "Run pre-release risk check" in study_page
    check_predicted_human_risk_beside_the_flags(client, study, run, tmp_path, monkeypatch)


def check_predicted_human_risk_beside_the_flags(client, study, run, tmp_path, monkeypatch):
    """The review page shows the pre-release estimate from the calibration nearest N = 4."""
    import math

    from intruder.risk import predicted as risk_predicted

    path = tmp_path / "calibration.json"
    monkeypatch.setattr(risk_predicted, "CALIBRATION_PATH", path)
    page = reverse("researcher-review", args=[study.slug])
    assert "Not shown: no calibration is shipped" in client.get(page).content.decode()
    far = risk_predicted.Calibration(
        a=-2.0,
        b=3.0,
        n_candidates=50,
        attacks=["tfidf", "bm25"],
        fitted_on="far",
        persons=20,
        familiarity=dict(risk_predicted.FAMILIARITY),
        draws=[[-2.0, 3.0]],
    )
    risk_predicted.save_calibrations([far], path)
    body = client.get(page).content.decode()
    assert "Not shown: the nearest calibration was fitted at N = 50" in body
    near = risk_predicted.Calibration(**{**far.to_dict(), "n_candidates": 4, "fitted_on": "near"})
    risk_predicted.save_calibrations([far, near], path)
    body = client.get(page).content.decode()
    assert "<td>Fictitious</td><td>12</td><td>0.0 %</td>" in body  # nobody knows them
    study.targets.update(group="famous")
    body = client.get(page).content.decode()
    method = run.methods[0] if len(run.methods) == 1 else "textwash-model"
    evidence = {}
    for r in run.results.filter(method=method):
        evidence.setdefault(r.description_id, []).append(1 / r.true_rank if r.true_rank else 0)
    expected = sum(
        1 / (1 + math.exp(-(-2.0 + 3.0 * sum(v) / len(v)))) for v in evidence.values()
    ) / len(evidence)
    assert "fitted on near at N = 4" in body
    assert f"<td>all texts</td><td>{len(evidence)}</td><td>{100 * expected:.1f} %</td>" in body


def test_api_starts_lists_and_pages_through_results(study_with_run):
    study, run = study_with_run
    api = APIClient()
    api.force_authenticate(study.owner)
    listed = api.get("/api/attack-runs/", {"study": study.pk}).json()
    assert listed["results"][0]["id"] == run.pk
    assert "strongest" in listed["results"][0]["trir"]["clear"]
    results = api.get("/api/attack-results/", {"run": run.pk, "attack": "tfidf"}).json()
    assert results["count"] == 24
    first = results["results"][0]
    assert {"predicted_key", "true_rank", "true_prob", "top_k", "fold"} <= set(first)
    created = api.post(
        "/api/attack-runs/create/",
        {"study": study.pk, "attacks": ["bm25"], "methods": ["clear"], "folds": 2},
        format="json",
    )
    assert created.status_code == 201, created.content
    bad = api.post(
        "/api/attack-runs/create/",
        {"study": study.pk, "methods": ["nope"]},
        format="json",
    )
    assert bad.status_code == 400 and "no texts of method" in bad.content.decode()
    paths = api.post(
        "/api/attack-runs/create/",
        {"study": study.pk, "methods": ["clear"], "config": {"cache_dir": "/etc"}},
        format="json",
    )
    assert paths.status_code == 400 and "server paths" in paths.content.decode()


def test_api_takes_a_distractor_population_and_bounds_it(study_with_run, settings):
    study, _ = study_with_run
    api = APIClient()
    api.force_authenticate(study.owner)
    person = study.targets.first()
    payload = {"study": study.pk, "attacks": ["tfidf"], "methods": ["clear"], "folds": 2}
    population = {
        "Ilse Marrow": "tapestry weaver of Dunholm, famous for indigo dyes",
        person.name: "a study person: dropped by name",
    }
    created = api.post(
        "/api/attack-runs/create/", payload | {"distractor_documents": population}, format="json"
    )
    assert created.status_code == 201, created.content
    assert created.json()["distractors"] == 1
    run = AttackRun.objects.get(pk=created.json()["id"])
    assert list(run.distractor_documents) == ["Ilse Marrow"]
    assert run.summary["distractors_dropped"] == [person.name]
    jobs.job_cancel(job=run.job)  # frees the study for the next start
    nul = api.post(
        "/api/attack-runs/create/",
        payload | {"distractor_documents": {"Pi\x00et": "pigeon breeder"}},
        format="json",
    )
    assert nul.status_code == 400 and "NUL" in nul.content.decode()
    settings.INTRUDER_BACKGROUND_MAX_MB = 0.0001
    big = api.post(
        "/api/attack-runs/create/",
        payload | {"distractor_documents": {"Piet": "pigeon breeder " * 20}},
        format="json",
    )
    assert (
        big.status_code == 400 and "distractors: the background documents" in big.content.decode()
    )


def test_api_hides_other_researchers_runs_and_refuses_viewers(study_with_run):
    study, run = study_with_run
    outsider = APIClient()
    outsider.force_authenticate(make_user())
    assert outsider.get(f"/api/attack-runs/{run.pk}/").status_code == 404
    assert outsider.get("/api/attack-results/", {"run": run.pk}).json()["count"] == 0
    created = outsider.post(
        "/api/attack-runs/create/", {"study": study.pk, "methods": ["clear"]}, format="json"
    )
    assert created.status_code == 404
    viewer = APIClient()
    viewer.force_authenticate(make_member(study=study, role=StudyMember.Role.VIEWER))
    refused = viewer.post(
        "/api/attack-runs/create/", {"study": study.pk, "methods": ["clear"]}, format="json"
    )
    assert refused.status_code == 403


@pytest.mark.slow  # draws the PDF
@pytest.mark.postgres
def test_risk_report_command_writes_html_pdf_tables_and_summary(study_with_run, tmp_path):
    study, _ = study_with_run
    call_command("risk_report", study.slug, "--out", str(tmp_path))
    names = {p.name for p in tmp_path.iterdir()}
    assert {"report.html", "report.pdf", "summary.json", "trir_by_method.csv"} <= names
    assert {"rates_target.json", "agreement.csv", "plot_person_scatter.svg"} <= names
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["trir"]["clear"]["strongest"] >= summary["trir"]["clear"]["tfidf"]


def test_risk_report_command_runs_attacks_itself_with_attack(tmp_path):
    study = risk_study(per_person=2)
    call_command(
        "risk_report",
        study.slug,
        "--out",
        str(tmp_path),
        "--attack",
        "--attacks",
        "tfidf",
        "--methods",
        "clear",
        "--folds",
        "2",
        "--no-pdf",
    )
    run = AttackRun.objects.get()
    assert run.job.status == Job.Status.SUCCEEDED and run.results.count() == 8
    assert (tmp_path / "report.html").exists() and not (tmp_path / "report.pdf").exists()


def test_risk_report_command_without_runs_says_what_to_do(tmp_path):
    from django.core.management.base import CommandError

    study = risk_study(per_person=1)
    with pytest.raises(CommandError, match="--attack"):
        call_command("risk_report", study.slug, "--out", str(tmp_path))
