"""One computed report, rendered many ways: each number has one value in every form.

The consistency harness of issue 35: for a 4-person and a 3-person study, the page,
report.html, the PDF's text (every text the PDF's figures hold), every CSV and JSON table
file, summary.json and the API give the headline, the rho, each method's chance level and
TRIR with one value; every section is in every form (or the form says where it is); every
table file says where it came from and whether the human data are simulated; the PDF's
text stays inside its page and its table cells.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import matplotlib.table
import matplotlib.text
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from attacks.strongest import STRONGEST
from intruder.analysis.intervals import Rate
from intruder.models import AnonymizedText, Description, Participant, Study, TargetPerson
from intruder.risk import attack_runs
from intruder.risk.plots import PLOT_TITLES
from intruder.risk.rendering import (
    NOT_RECORDED,
    PDF_FILE_ONLY,
    SOURCE_COLUMNS,
    _column_parts,
    pdf_pages,
    provenance_rows,
)
from intruder.risk.report.summary import OPEN_WORLD_NOTE
from intruder.risk.report.tables import RISK_TABLE_TITLES
from intruder.risk.selectors import run_report
from intruder.risk.stats import Correlation
from intruder.services import jobs
from tests.intruder.factories import logged_in
from tests.intruder.risk_fixtures import FAST_CONFIG, add_judgments, risk_study

pytestmark = pytest.mark.django_db


def finished_run(*, persons: int = 4, methods: tuple[str, ...] = ("textwash-model", "clear")):
    """Return a finished TF-IDF + BM25 run on a judged `risk_study` of `persons` persons."""
    study = risk_study()
    for target in TargetPerson.objects.filter(study=study).order_by("key")[persons:]:
        AnonymizedText.objects.filter(description__target=target).delete()
        Description.objects.filter(target=target).delete()
        target.delete()
    add_judgments(study)
    run = attack_runs.attack_run_start(
        study=study,
        user=study.owner,
        attacks=["tfidf", "bm25"],
        methods=list(methods),
        folds=3,
        config=FAST_CONFIG,
    )
    job = jobs.job_execute(run.job.pk)
    assert job.status == "succeeded", job.error
    run.refresh_from_db()
    return run


def download(run, name: str) -> bytes:
    url = reverse("risk-download", args=[run.study.slug, run.pk, name])
    response = logged_in(run.study.owner).get(url)
    assert response.status_code == 200, (name, response.status_code)
    return response.content


def pdf_text(report) -> str:
    """Return every text the PDF's figures draw (the PDF's words, as they are written)."""
    import matplotlib.pyplot as plt

    texts = []
    for _, figure in pdf_pages(report, "t"):
        texts += [t.get_text() for t in figure.findobj(matplotlib.text.Text) if t.get_text()]
        for table in figure.findobj(matplotlib.table.Table):  # a cell's text is no child
            texts += [cell.get_text().get_text() for cell in table.get_celld().values()]
        plt.close(figure)
    return " ".join(" ".join(texts).split())


def flat(text: str) -> str:
    """Collapse whitespace and HTML's escaping of apostrophes, for finding a sentence."""
    return " ".join(text.replace("&#x27;", "'").replace("&quot;", '"').split())


def demo_run():
    """Return the demo's report run (its simulated intruders, TF-IDF + BM25)."""
    from intruder.demo import load_demo
    from intruder.risk.demo import run_demo_attacks
    from intruder.services import anonymization
    from tests.intruder.fake_anonymizer import FakeAnonymizer

    previous = anonymization.set_anonymizer(FakeAnonymizer())
    try:
        study = load_demo(password="pw-demo-test", attacks=False).intruder
        _, run = run_demo_attacks(study, study.owner, attacks=("tfidf", "bm25"), config=FAST_CONFIG)
    finally:
        anonymization.set_anonymizer(previous)
    return run


@pytest.fixture(
    scope="module",
    params=[4, 3, pytest.param("demo", marks=pytest.mark.slow)],
    ids=["4 persons", "3 persons", "demo study"],
)
def forms(
    request, django_db_setup, django_db_blocker, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """Every form of one run's report, built once for the three tests that read it.

    They only read what it returns, so it is built once per module and study, not once per
    test (issue 50: the demo study's three builds took 66 s of the file's time), under the
    suite's settings; what it stored is rolled back before any test runs, so no test sees it.
    """
    from django.core.cache import cache
    from django.db import transaction
    from django.test import override_settings

    from tests.suite_settings import suite_settings

    with (
        django_db_blocker.unblock(),
        override_settings(**suite_settings(tmp_path_factory)),
        transaction.atomic(),
    ):
        cache.clear()
        built = all_forms(request.param)
        transaction.set_rollback(True)
    cache.clear()
    return built


def all_forms(study: int | str) -> dict[str, Any]:
    """Return every form of the report of a run on `study` (persons, or "demo")."""
    run = demo_run() if study == "demo" else finished_run(persons=study)
    client = logged_in(run.study.owner)
    page = client.get(reverse("risk-page", args=[run.study.slug]) + f"?run={run.pk}")
    assert page.status_code == 200
    report = run_report(run)
    api = APIClient()
    api.force_authenticate(run.study.owner)
    detail = api.get(reverse("api:attack-run-detail", args=[run.pk]))
    assert detail.status_code == 200
    tables = {}
    for name in report.tables:
        rows = list(csv.DictReader(io.StringIO(download(run, f"{name}.csv").decode())))
        tables[name] = {"csv": rows, "json": json.loads(download(run, f"{name}.json"))}
    return {
        "run": run,
        "persons": report.headline.get("persons"),
        "simulated": study == "demo",
        "report": report,
        "page": flat(page.content.decode()),
        "html": flat(download(run, "report.html").decode()),
        "pdf": flat(pdf_text(report)),
        "summary": json.loads(download(run, "summary.json")),
        "tables": tables,
        "api": detail.json(),
    }


def test_the_forms_built_once_for_the_module_leave_no_row_behind(forms):
    # Built before this test's own transaction and rolled back: no test sees its study.
    assert forms["run"].pk is not None
    assert not Study.objects.exists() and not TargetPerson.objects.exists()
    assert not Description.objects.exists() and not AnonymizedText.objects.exists()


def test_every_number_has_one_value_in_every_form(forms):
    summary, tables = forms["summary"], forms["tables"]
    rendered = {"page": forms["page"], "report.html": forms["html"], "report.pdf": forms["pdf"]}
    # The headline: both rates with n and interval, one text everywhere.
    human = Rate(**summary["headline"]["human"]).text()
    machine = Rate(**summary["headline"]["machine"][STRONGEST]).text()
    for form, text in rendered.items():
        assert human in text and machine in text, form
    assert any(human in p and machine in p for p in summary["summary_text"])
    # The strongest adversary's rho (or what it needs): the summary's and the sensitivity
    # table's chosen row are one object.
    rho = summary["spearman"][STRONGEST]
    chosen = next(r for r in tables["sensitivity"]["json"]["rows"] if r["chosen"])
    assert chosen["judgments"] == "all"
    for key in ("rho", "rho_p", "rho_ci_low", "rho_ci_high", "rho_note"):
        assert chosen[key] == rho[key.removeprefix("rho_") if key != "rho" else "rho"] or (
            key == "rho_note" and chosen[key] == rho["note"]
        )
    assert chosen["persons"] == rho["n"] == forms["persons"]
    # Its kappa (and interval) is the agreement table's strongest row.
    strongest = next(r for r in tables["agreement"]["json"]["rows"] if r["attack"] == STRONGEST)
    for key in ("kappa", "kappa_ci_low", "kappa_ci_high"):
        assert chosen[key] == strongest[key], key
    phrase = Correlation(**rho).text() if rho["rho"] is not None else rho["note"]
    for form, text in rendered.items():
        assert phrase in text, form
    if rho["rho"] is None:
        assert f"needs 5 persons, has {forms['persons']}" in phrase
    # Each method's chance level: computed once, the same in the threat model and frontier.
    method = summary["settings"]["human_method"]
    null = summary["threat_model"]["machine"]["strongest_null_pct"]
    frontier = {r["method"]: r for r in tables["frontier"]["json"]["rows"]}
    assert frontier[method]["strongest_null_pct"] == null
    frontier_csv = {r["method"]: r for r in tables["frontier"]["csv"]}
    assert float(frontier_csv[method]["strongest_null_pct"]) == pytest.approx(null, rel=1e-12)
    for form, text in rendered.items():
        assert f"{null:.1f} %" in text, form
    # Each method's TRIR: the report's table, the frontier, summary.json and the API.
    by_method = {r["method"]: r for r in tables["trir_by_method"]["json"]["rows"]}
    api_trir = forms["api"]["trir"]
    for name, row in by_method.items():
        value = row[f"trir_{STRONGEST}"]
        assert frontier[name][f"trir_{STRONGEST}"] == value
        assert summary["trir"][name][STRONGEST] == value
        assert api_trir[name][STRONGEST]["trir"] == pytest.approx(value, abs=1e-9)
        shown = f"{value:.1f} [{row[f'{STRONGEST}_ci_low']:.1f}, {row[f'{STRONGEST}_ci_high']:.1f}]"
        for form, text in rendered.items():
            assert shown in text, (form, name)


def test_every_section_is_in_every_form_or_the_form_says_where(forms):
    report = forms["report"]
    assert "frontier" in report.tables and "open_world" in report.tables
    for form in ("page", "html"):
        for name in report.tables:
            assert flat(RISK_TABLE_TITLES[name]) in forms[form], (form, name)
    for name in report.tables:
        title = flat(RISK_TABLE_TITLES[name])
        if name in PDF_FILE_ONLY:
            assert f"{title} ({name}.csv)" in forms["pdf"]  # "in the CSV/JSON files only"
        else:
            assert title in forms["pdf"], name
    for name in ("plot_frontier", "plot_rates_group"):
        assert flat(PLOT_TITLES[name]) in forms["pdf"]
    # The ladder explains itself beside its table in every form, and in its files.
    for form in ("page", "html", "pdf"):
        assert flat(OPEN_WORLD_NOTE) in forms[form], form
    assert forms["tables"]["open_world"]["json"]["note"] == OPEN_WORLD_NOTE
    # The human threat model says who the intruders are, or that nobody said.
    for form in ("page", "html", "pdf"):
        assert "Population" in forms[form] and NOT_RECORDED in forms[form], form
        assert "planned per text" in forms[form], form


def test_every_table_file_says_where_it_came_from_and_whether_humans_were_simulated(forms):
    run = forms["run"]
    for name, files in forms["tables"].items():
        for row in files["csv"]:
            assert set(SOURCE_COLUMNS) <= set(row), name
            assert f"attack run {run.pk}" in row["source"]
            assert row["human_data_simulated"] == str(forms["simulated"])
        meta = files["json"]
        assert meta["table"] == name and meta["title"] == RISK_TABLE_TITLES[name]
        assert f"study {run.study.slug}" in meta["source"]
        assert meta["human_data_simulated"] is forms["simulated"]
    assert forms["summary"]["settings"]["human_data_simulated"] is forms["simulated"]


def test_simulated_humans_are_marked_in_every_table_file_and_beside_the_prediction():
    run = finished_run(persons=3)
    Participant.objects.filter(study=run.study).update(simulated=True)
    for name in run_report(run).tables:
        rows = list(csv.DictReader(io.StringIO(download(run, f"{name}.csv").decode())))
        assert rows and all(r["human_data_simulated"] == "True" for r in rows), name
        assert json.loads(download(run, f"{name}.json"))["human_data_simulated"] is True


def test_visual_tables_with_simulated_human_columns_carry_the_marker():
    """Issue 46: the files said SIMULATED, the tables on the page, in report.html and the
    PDF did not."""
    from intruder.risk.rendering import SIMULATED_MARK, holds_simulated_humans, report_context

    run = finished_run(persons=3)
    Participant.objects.filter(study=run.study).update(simulated=True)
    report = run_report(run)
    marked = {t["name"] for t in report_context(report)["risk_tables"] if t["simulated"]}
    assert {"rates_target", "rates_group", "sensitivity", "per_text", "agreement"} <= marked
    assert "trir_by_method" not in marked and "machine_per_text" not in marked
    html = download(run, "report.html").decode()
    section = html[html.index('id="table-rates_target"') :]
    assert SIMULATED_MARK in section[: section.index("</section>")]
    assert SIMULATED_MARK in pdf_text(report)
    # Real intruders: no marker anywhere.
    Participant.objects.filter(study=run.study).update(simulated=False)
    real = run_report(run)
    assert not any(holds_simulated_humans(real, name) for name in real.tables)
    assert SIMULATED_MARK not in download(run, "report.html").decode()


def test_the_human_threat_model_prints_what_the_researcher_filled_in():
    run = finished_run(persons=3)
    from intruder.services.studies import study_update

    # The study's settings (the form and the API both go through this service).
    study_update(
        study=run.study,
        intruder_population="UK adults on Prolific, 18 to 65",
        intruder_recruitment="Prolific filters: UK, approval rate 95 %, English first",
    )
    html = flat(download(run, "report.html").decode())
    assert "UK adults on Prolific, 18 to 65" in html
    assert "approval rate 95 %" in html
    # The one left empty still says so.
    assert "Familiarity with the persons" in html and NOT_RECORDED in html


def test_attack_settings_left_at_their_defaults_say_so_not_empty_braces():
    report = run_report(finished_run(persons=3))
    report.provenance["attack_config"] = {}
    rows = dict(provenance_rows(report))
    assert rows["Attack settings"] == "the attacks' defaults (no setting overridden)"


def test_a_run_of_the_clear_text_only_answers_every_reader():
    # Issue 38: intruders judged the anonymized texts; a run of `clear` alone made its risk
    # page, report and downloads (and the study's default risk page) answer 500.
    run = finished_run(persons=3, methods=("clear",))
    assert AnonymizedText.objects.filter(description__study=run.study).exists()
    client = logged_in(run.study.owner)
    for url in (
        reverse("risk-page", args=[run.study.slug]),
        reverse("risk-page", args=[run.study.slug]) + f"?run={run.pk}",
    ):
        response = client.get(url)
        assert response.status_code == 200
        assert "which this run did not attack" in flat(response.content.decode())
    report = run_report(run)
    assert report.settings["human_method"] == "clear" and not report.headline
    for name in ["report.html", "summary.json", *(f"{n}.csv" for n in report.tables)]:
        download(run, name)
    assert pdf_text(report)


def test_no_pdf_text_lies_outside_its_page_or_its_table_cell():
    import matplotlib.pyplot as plt

    report = run_report(finished_run(persons=4))
    pages = pdf_pages(report, "Risk report of a study with a long title " * 4)
    checked = 0
    for name, figure in pages:
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        page = figure.bbox
        # A plot is saved with a tight box: its page is cut around all it draws.
        texts = [] if name in PLOT_TITLES else figure.findobj(matplotlib.text.Text)
        for text in texts:
            if not text.get_text() or not text.get_visible():
                continue
            box = text.get_window_extent(renderer)
            assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1, (name, text.get_text())
            assert page.y0 - 1 <= box.y0 and box.y1 <= page.y1 + 1, (name, text.get_text())
        for table in figure.findobj(matplotlib.table.Table):
            for (row, column), cell in table.get_celld().items():
                inner = cell.get_window_extent(renderer)
                box = cell.get_text().get_window_extent(renderer)
                assert inner.x0 - 0.5 <= box.x0 and box.x1 <= inner.x1 + 0.5, (
                    name,
                    row,
                    column,
                    cell.get_text().get_text(),
                )
                assert inner.y0 - 0.5 <= box.y0 and box.y1 <= inner.y1 + 0.5, (
                    name,
                    row,
                    cell.get_text().get_text(),
                )
                checked += 1
        if name in PLOT_TITLES:
            for axes in figure.axes:
                legend = axes.get_legend()
                if legend is not None:
                    overlap = legend.get_window_extent(renderer).overlaps(
                        axes.get_window_extent(renderer)
                    )
                    assert not overlap, f"{name}: the legend covers the data"
        plt.close(figure)
    assert checked > 100


def test_a_wide_table_splits_into_even_parts_never_a_lone_column():
    widths = {c: 100.0 for c in "abcdefg"}
    assert [len(p) for p in _column_parts(list("abcde"), widths, 450.0)] == [2, 3]
    assert _column_parts(list("abcde"), widths, 600.0) == [list("abcde")]
    parts = _column_parts(list("abcdefg"), widths, 350.0)
    assert sorted(len(p) for p in parts) == [2, 2, 3]
    assert [c for p in parts for c in p] == list("abcdefg")


def test_a_table_csv_is_written_through_csv_safe_so_a_formula_stays_text():
    run = finished_run(persons=3)
    run.study.targets.filter(key="bastian").update(name='=HYPERLINK("http://evil.example")')
    rows = list(csv.DictReader(io.StringIO(download(run, "rates_target.csv").decode())))
    names = {r["target_key"]: r["target_name"] for r in rows}
    assert names["bastian"] == '\'=HYPERLINK("http://evil.example")'


def test_the_pdf_never_holds_more_than_the_plots_and_one_page_open():
    """Issue 46: `risk_report` warned "More than 20 figures have been opened": every table
    page was drawn before the first was saved. Now a page is drawn when it is written."""
    import warnings

    import matplotlib.pyplot as plt

    from intruder.risk.rendering import _page_plan, pdf_bytes

    report = run_report(finished_run(persons=4))
    plan = _page_plan(report, "t")
    plots = sum(not callable(page) for _, page in plan)
    plt.close("all")
    assert len(plan) > plots + 2  # enough drawn pages to have warned before
    with matplotlib.rc_context({"figure.max_open_warning": plots + 1}), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pdf_bytes(report, "t").startswith(b"%PDF")


def test_the_page_and_report_html_say_why_predicted_risk_is_absent():
    """Issue 46: only the PDF said why the predicted-risk section was missing."""
    run = finished_run(persons=4)
    report = run_report(run)
    assert "predicted_target" not in report.tables
    why = report.settings["predicted_human"]
    assert why.startswith("not shown: ") and why.endswith(".")
    page = logged_in(run.study.owner).get(
        reverse("risk-page", args=[run.study.slug]) + f"?run={run.pk}"
    )
    for body in (page.content.decode(), download(run, "report.html").decode()):
        assert 'id="risk-predicted-status"' in body
        assert flat(why) in flat(body)


def test_the_open_world_plot_labels_its_log_axis_with_numbers():
    """Seen in a reviewer's read (issue 46): with mathtext off, log ticks read
    "$\\mathdefault{10^{0}}$"."""
    import pandas as pd

    from intruder.risk.plots import risk_svgs
    from intruder.risk.report.tables import RiskReport

    report = RiskReport(settings={})
    report.tables["open_world"] = pd.DataFrame(
        {"candidates": [4, 40], "chance_pct": [25.0, 2.5], "trir_strongest": [90.0, 60.0]}
    )
    svg = risk_svgs(report)["plot_open_world"]
    assert "mathdefault" not in svg and "40" in svg


def test_every_pdf_page_is_a4():
    """Issue 46: plot pages had a size of their own (a tight box around each plot)."""
    import re

    from intruder.risk.rendering import pdf_bytes

    pdf = pdf_bytes(run_report(finished_run(persons=4)), "t")
    boxes = re.findall(rb"/MediaBox \[ ?0 0 ([\d.]+) ([\d.]+) ?\]", pdf)
    assert len(boxes) > 5
    sizes = {tuple(sorted((round(float(w)), round(float(h))))) for w, h in boxes}
    assert sizes == {(595, 842)}, sizes
