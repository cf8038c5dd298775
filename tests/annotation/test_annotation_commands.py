"""The three management commands, with the names and flags scripts rely on."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from intruder.annotation import services
from intruder.annotation.models import Document
from tests.annotation.conftest import TEXTS, make_project, mention
from tests.intruder.factories import make_user

pytestmark = pytest.mark.django_db

TAB_KEYS = {
    "token_recall",
    "mention_recall",
    "recall_direct_entities",
    "recall_quasi_entities",
    "token_precision",
    "mention_precision",
}


def annotated_project():
    project = make_project(slug="cmd")
    for user in (project.owner, make_user()):
        annotator = services.annotator_for_user(project=project, user=user)
        for _ in range(3):
            task = services.task_next(annotator=annotator)
            if task is None:
                break
            text = task.document.text
            words = [w for w in text.replace(",", " ").split() if w[0].isupper()][1:3]
            services.task_save(
                task=task, revision=0, mentions=[mention(text, w, entity=w) for w in words]
            )
            services.task_submit(task=task)
    return project


@pytest.mark.parametrize("fmt", ["tab", "doccano", "csv"])
def test_export_then_import_into_a_new_project_round_trips(fake_anonymizer, tmp_path, fmt):
    source = annotated_project()
    out = tmp_path / f"export.{ {'tab': 'json', 'doccano': 'jsonl', 'csv': 'csv'}[fmt] }"
    call_command(
        "export_annotations",
        "cmd",
        "--format",
        fmt,
        "--out",
        str(out),
        "--agreement",
        str(tmp_path / "agreement.csv"),
    )
    assert "krippendorff_alpha" in (tmp_path / "agreement.csv").read_text().splitlines()[0]
    make_project(slug="copy", texts=TEXTS if fmt == "csv" else {}, suggest=False)
    call_command("import_annotations", "copy", str(out))
    tab_a, tab_b = tmp_path / "a.json", tmp_path / "b.json"
    call_command("export_annotations", "cmd", "--format", "tab", "--out", str(tab_a))
    call_command("export_annotations", "copy", "--format", "tab", "--out", str(tab_b))

    def mentions(path):
        return sorted(
            (d["doc_id"], a, m["start_offset"], m["end_offset"], m["entity_type"], m["edit_type"])
            for d in json.loads(path.read_text())
            for a, layer in d["annotations"].items()
            for m in layer["entity_mentions"]
        )

    assert mentions(tab_a) == mentions(tab_b) and mentions(tab_a)
    assert source.documents.count() == 3


def test_import_of_a_malformed_file_names_the_line_and_writes_nothing(fake_anonymizer, tmp_path):
    make_project(slug="cmd")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "n1", "text": "Ann"}\n{"id": "n2", "text": "Bo", "label": [[0, 9, "DATE"]]}\n'
    )
    with pytest.raises(CommandError, match=r"line 2: offsets \[0, 9\)"):
        call_command("import_annotations", "cmd", str(bad))
    assert not Document.objects.filter(doc_id__in=["n1", "n2"]).exists()


def test_evaluate_anonymizer_writes_tab_named_metrics_and_system_spans(fake_anonymizer, tmp_path):
    annotated_project()
    call_command(
        "evaluate_anonymizer",
        "cmd",
        "--system",
        "model",
        "--threshold",
        "0.3",
        "--out",
        str(tmp_path / "model"),
    )
    metrics = json.loads((tmp_path / "model" / "metrics.json").read_text())
    assert set(metrics) >= TAB_KEYS and metrics["threshold"] == 0.3
    spans = json.loads((tmp_path / "model" / "system_spans.json").read_text())
    assert set(spans) == set(TEXTS) and all(isinstance(s, list) for s in spans.values())
    for name in ("per_category.csv", "summary.csv", "gold_tab.json"):
        assert (tmp_path / "model" / name).exists()
    # The written system output is a valid input to the same command.
    call_command(
        "evaluate_anonymizer",
        "cmd",
        "--system",
        str(tmp_path / "model" / "system_spans.json"),
        "--out",
        str(tmp_path / "file"),
    )
    again = json.loads((tmp_path / "file" / "metrics.json").read_text())
    assert {k: again[k] for k in TAB_KEYS} == {k: metrics[k] for k in TAB_KEYS}


def test_evaluate_anonymizer_refuses_unknown_projects_and_systems(fake_anonymizer, tmp_path):
    annotated_project()
    with pytest.raises(CommandError, match="no annotation project"):
        call_command("evaluate_anonymizer", "nope", "--system", "model", "--out", str(tmp_path))
    with pytest.raises(CommandError, match="neither model, spacy nor a file"):
        call_command("evaluate_anonymizer", "cmd", "--system", "gpt", "--out", str(tmp_path))
    with pytest.raises(CommandError, match=r"threshold must be in \[0, 1\]"):
        call_command(
            "evaluate_anonymizer",
            "cmd",
            "--system",
            "model",
            "--threshold",
            "3",
            "--out",
            str(tmp_path),
        )
