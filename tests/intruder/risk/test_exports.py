"""One definition everywhere: page, HTML, PDF, CSV and JSON give the same numbers; odd names."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from intruder.risk.rendering import pdf_text_lines
from intruder.risk.selectors import run_report
from intruder.risk.stats import Rate
from tests.intruder.factories import logged_in
from tests.intruder.risk_fixtures import finished_cheap_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def majority_run():
    run = finished_cheap_run(["textwash-model", "clear"])
    run.study.identified_rule = "majority"
    run.study.save(update_fields=["identified_rule"])
    return run


def download(run, name: str) -> bytes:
    url = reverse("risk-download", args=[run.study.slug, run.pk, name])
    response = logged_in(run.study.owner).get(url)
    assert response.status_code == 200, name
    return response.content


def test_page_html_pdf_csv_and_json_give_the_same_human_and_machine_rates(majority_run):
    run = majority_run
    summary = json.loads(download(run, "summary.json"))
    assert summary["settings"]["identified_rule"] == "majority"
    human = summary["headline"]["human"]
    # majority of 3 intruders: orlena (3/3) and bastian (2/3), 3 texts each, of 12.
    assert (human["k"], human["n"]) == (6, 12)
    sentence = Rate(**human).text()
    assert sentence == "50.0 % (95 % CI 25.4 to 74.6, 6 of 12)"
    page = logged_in(run.study.owner).get(reverse("risk-page", args=[run.study.slug]))
    html = download(run, "report.html").decode()
    pdf_lines = " ".join(pdf_text_lines(run_report(run), "t"))
    for text in (page.content.decode(), html, pdf_lines):
        assert sentence in text
        assert "Candidates N" in text and "any attack" in text  # the threat-model box
        assert "weights" in text.lower() or "SHA-256" in text  # provenance
    rows = list(csv.DictReader(io.StringIO(download(run, "rates_target.csv").decode())))
    per_person = {r["target_key"]: float(r["human_pct_identified"]) for r in rows}
    assert per_person == {"orlena": 100.0, "bastian": 100.0, "maelis": 0.0, "corvin": 0.0}
    table = json.loads(download(run, "rates_target.json"))["rows"]
    assert {r["target_key"]: r["human_pct_identified"] for r in table} == per_person
    sensitivity = json.loads(download(run, "sensitivity.json"))["rows"]
    chosen = next(r for r in sensitivity if r["chosen"] and r["judgments"] == "all")
    assert chosen["rule"] == "majority" and chosen["human_identified"] == human["k"]
    per_text = json.loads(download(run, "per_text.json"))["rows"]
    assert sum(r["human_identified"] for r in per_text) == human["k"]


def test_provenance_names_version_commit_model_seed_and_counts(majority_run):
    provenance = json.loads(download(majority_run, "summary.json"))["provenance"]
    assert provenance["generated_at"] and provenance["version"]
    assert provenance["anonymizer_model"]["name"]
    assert provenance["seed"] == majority_run.seed and provenance["threshold"] == 0.75
    assert provenance["counts"]["judgments"] == 36 and provenance["counts"]["intruders"] == 3
    assert provenance["counts"]["texts_judged"] == 12


@pytest.mark.slow  # draws the PDF
@pytest.mark.postgres
def test_a_tex_like_target_name_renders_as_typed_on_the_page_and_in_every_file(majority_run):
    run = majority_run
    name = r"$\frac{a}$ Orlena_1 ^2"
    run.study.targets.filter(key="orlena").update(name=name)
    page = logged_in(run.study.owner).get(reverse("risk-page", args=[run.study.slug]))
    assert page.status_code == 200
    for file in ("report.html", "report.pdf", "summary.json", "rates_target.csv"):
        assert download(run, file)
    assert "frac{a}" in download(run, "report.html").decode()


def test_the_report_gives_every_rule_with_and_without_flagged_judgments(majority_run):
    # Two of orlena's three judgments of one text were pasted: excluded by the default rules,
    # so that text no longer has a majority (1 of 1 left is still one, so pick two texts'
    # judgments: the text keeps one identifying judgment of one).
    from intruder.models import Judgment

    orlena = Judgment.objects.filter(
        assignment__text__description__target__key="orlena",
        assignment__text__method="textwash-model",
    ).order_by("pk")
    flagged = list(orlena[:3])
    for judgment in flagged:
        judgment.flags = [{"code": "paste", "reason": "pasted 40 characters"}]
        judgment.save(update_fields=["flags"])
    rows = json.loads(download(majority_run, "sensitivity.json"))["rows"]
    both = {(r["judgments"], r["rule"]): r for r in rows}
    assert {judgments for judgments, _ in both} == {"all", "flagged excluded"}
    assert both[("all", "majority")]["human_identified"] == 6
    assert both[("all", "majority")]["n_texts"] == 12
    kept = both[("flagged excluded", "majority")]
    excluded_texts = {j.assignment.text_id for j in flagged}
    left = Judgment.objects.filter(assignment__text_id__in=excluded_texts).exclude(
        pk__in=[j.pk for j in flagged]
    )
    # Texts left with no judgment drop out of n; the page, PDF and summary use the same table.
    texts_without_any = len(excluded_texts - {j.assignment.text_id for j in left})
    assert kept["n_texts"] == 12 - texts_without_any
    assert kept["human_identified"] <= 6
    html = download(majority_run, "report.html").decode()
    assert "flagged excluded" in html
