"""The example files in docs/examples/ import through the platform's real import services.

The manual points researchers at these files; if a format changes, this fails before a reader
meets an import error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from anonymize.annotations.formats import read_documents
from intruder.annotation.exports import parse_annotation_file
from intruder.annotation.models import Mention, Task
from intruder.annotation.services import annotations_import, documents_add, project_create
from intruder.exchange.imports import detect_format, import_study_data
from intruder.models import AnonymizedText, Description, Study, TargetPerson
from intruder.risk.attack_runs import attack_run_start
from intruder.risk.background_uploads import parse_background_upload
from intruder.risk.models import AttackRun
from intruder.services.studies import study_create

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
FORMATS = ["csv", "jsonl"]


def example(name: str) -> bytes:
    return (EXAMPLES / name).read_bytes()


def new_study(slug: str) -> Study:
    owner = get_user_model().objects.create_user(username=f"owner-{slug}", password="pw-1-x")
    return study_create(
        owner=owner,
        slug=slug,
        title="Example study",
        kind=Study.Kind.INTRUDER,
        consent_text="You agree.",
        instructions_text="Play an adversary.",
        debrief_text="Thank you.",
        completion_code="EXAMPLE1",
    )


def import_example(study: Study, name: str):
    return import_study_data(study=study, content=example(name), fmt=detect_format(name))


@pytest.mark.parametrize("fmt", FORMATS)
def test_example_targets_descriptions_and_anonymized_texts_import(fmt: str) -> None:
    study = new_study(f"examples-{fmt}")

    import_example(study, f"targets.{fmt}")
    import_example(study, f"descriptions.{fmt}")
    import_example(study, f"anonymized_texts.{fmt}")

    targets = {t.key: t for t in TargetPerson.objects.filter(study=study)}
    assert set(targets) == {"odalys-brennecke", "tobias-wernecke", "ines-calloway"}
    assert targets["odalys-brennecke"].aliases == ["Odie Brennecke"]
    assert targets["ines-calloway"].group == "fictitious"
    assert targets["ines-calloway"].profile["job"] == "ferry engineer"

    descriptions = {d.external_id: d for d in Description.objects.filter(study=study)}
    assert set(descriptions) == {"ex-1", "ex-2", "ex-3", "ex-4"}
    assert descriptions["ex-3"].target.key == "tobias-wernecke"
    assert descriptions["ex-1"].text.startswith("Odalys Brennecke is a singer")

    texts = AnonymizedText.objects.filter(description__study=study).order_by(
        "description__external_id"
    )
    assert [t.description.external_id for t in texts] == ["ex-1", "ex-2"]
    first = texts[0]
    assert first.status == AnonymizedText.Status.DRAFT
    assert first.method == "manual"
    assert first.text.startswith("PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 is a singer")
    assert [(s["text"], s["category"]) for s in first.spans] == [
        ("Odalys", "PERSON_FIRSTNAME"),
        ("Brennecke", "PERSON_LASTNAME"),
        ("Baltic coast", "LOCATION"),
    ]
    assert "Odalys" not in first.text


@pytest.mark.parametrize("fmt", FORMATS)
def test_example_background_documents_start_an_attack_run(fmt: str) -> None:
    study = new_study(f"background-{fmt}")
    import_example(study, f"targets.{fmt}")
    import_example(study, f"descriptions.{fmt}")

    documents = parse_background_upload(example(f"background.{fmt}"), f"background.{fmt}")
    run = attack_run_start(
        study=study,
        user=study.owner,
        attacks=["tfidf"],
        methods=["clear"],
        background=AttackRun.Background.UPLOADED,
        background_documents=documents,
    )

    assert set(run.background_documents) == {"odalys-brennecke", "tobias-wernecke", "ines-calloway"}
    # Two documents of one person are joined into that person's background.
    assert "lighthouse album" in run.background_documents["odalys-brennecke"]
    assert "Hamburg" in run.background_documents["odalys-brennecke"]
    assert run.job is not None


@pytest.mark.parametrize("fmt", FORMATS)
def test_example_annotation_texts_and_annotations_import(fmt: str) -> None:
    owner = get_user_model().objects.create_user(username=f"annotator-{fmt}", password="pw-1-x")
    project = project_create(owner=owner, slug=f"notes-{fmt}", title="Notes", scheme="textwash")

    counts = documents_add(
        project=project, documents=read_documents(f"x.{fmt}", example(f"annotation_texts.{fmt}"))
    )
    assert counts == {"created": 2, "skipped": 0}
    assert set(project.documents.values_list("doc_id", flat=True)) == {"note-1", "note-2"}

    name = "annotations.csv" if fmt == "csv" else "annotations_doccano.jsonl"
    imported = annotations_import(
        project=project,
        documents=parse_annotation_file(project=project, name=name, data=example(name)),
    )

    assert imported["layers"] == 2
    assert imported["mentions"] == 5
    assert imported["documents_created"] == 0
    task = Task.objects.get(document__project=project, document__doc_id="note-1")
    assert task.status == Task.Status.SUBMITTED
    spans = sorted((m.start, m.end, m.entity_type) for m in Mention.objects.filter(task=task))
    text = task.document.text
    assert [(text[s:e], c) for s, e, c in spans] == [
        ("Tobias", "PERSON_FIRSTNAME"),
        ("Wernecke", "PERSON_LASTNAME"),
        ("Leipzig", "LOCATION"),
    ]
