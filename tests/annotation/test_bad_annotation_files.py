"""Every bad file to the newer importers gets a line/field error and writes nothing (issue 22, 8).

Annotation texts and layers, background documents and the evaluation file; on SQLite and
PostgreSQL (NUL characters are what PostgreSQL refuses).
"""

from __future__ import annotations

import json

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from intruder.annotation.models import Document, Mention, Task
from intruder.risk.background_uploads import BackgroundUploadError, parse_background_upload
from tests.annotation.conftest import make_project
from tests.intruder.factories import logged_in

pytestmark = pytest.mark.django_db

LONG_FIELD = "word " * 40_000  # 200,000 characters: over the csv module's default limit
DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "9" * 5000


def doccano(**record) -> bytes:
    base = {"id": "d-new", "text": "Ann Lee met Bo.", "entities": []}
    base.update(record)
    return (json.dumps(base) + "\n").encode()


BAD_TEXT_FILES = [
    ("deep.jsonl", f'{{"id": "x", "text": "t", "entities": {DEEP}}}\n'.encode()),
    ("int.jsonl", f'{{"id": {HUGE_INT}, "text": "t"}}\n'.encode()),
    ("idlist.jsonl", doccano(id=["a"])),
    ("iddict.jsonl", doccano(id={"a": 1})),
    (
        "entid.jsonl",
        doccano(
            entities=[{"id": [1], "start_offset": 0, "end_offset": 3, "label": "PERSON_FIRSTNAME"}]
        ),
    ),
    ("relations.jsonl", doccano(relations="coref")),
    (
        "relid.jsonl",
        doccano(
            entities=[{"id": 1, "start_offset": 0, "end_offset": 3, "label": "PERSON_FIRSTNAME"}],
            relations=[{"type": "coreference", "from_id": [1], "to_id": 1}],
        ),
    ),
    ("longid.jsonl", doccano(id="x" * 250)),
    ("longid.csv", ("id,text\n" + "y" * 250 + ",some text\n").encode()),
    ("nul.jsonl", doccano(text="Ann\x00Lee")),
    ("nul.csv", b"id,text\nn1,Ann\x00Lee\n"),
    ("annotator.jsonl", doccano(annotator=["a"])),
    ("extra.csv", b"id,text\nz1,fine,extra\n"),
]


@pytest.mark.parametrize(("name", "content"), BAD_TEXT_FILES, ids=[n for n, _ in BAD_TEXT_FILES])
def test_bad_text_files_are_refused_with_a_line_and_write_nothing(fake_anonymizer, name, content):
    project = make_project()
    before = Document.objects.count()
    response = logged_in(project.owner).post(
        reverse("annotation-add-texts", kwargs={"slug": project.slug}),
        {"file": SimpleUploadedFile(name, content)},
    )
    assert response.status_code == 302
    notes = [str(m) for m in get_messages(response.wsgi_request)]
    assert any("Nothing imported" in n for n in notes), notes
    assert any("line" in n or "document 1" in n for n in notes), notes
    assert Document.objects.count() == before


@pytest.mark.parametrize(("name", "content"), BAD_TEXT_FILES, ids=[n for n, _ in BAD_TEXT_FILES])
def test_bad_layer_files_are_refused_and_write_nothing(fake_anonymizer, name, content):
    project = make_project()
    response = logged_in(project.owner).post(
        reverse("annotation-import", kwargs={"slug": project.slug}),
        {"file": SimpleUploadedFile(name.replace(".csv", ".jsonl"), content)},
    )
    assert response.status_code == 302
    notes = [str(m) for m in get_messages(response.wsgi_request)]
    assert any("Nothing imported" in n for n in notes), notes
    assert not Task.objects.exists() and not Mention.objects.exists()


def test_a_csv_field_over_131072_characters_is_read(fake_anonymizer):
    project = make_project()
    content = f"id,text\nlong1,{LONG_FIELD}\n".encode()
    logged_in(project.owner).post(
        reverse("annotation-add-texts", kwargs={"slug": project.slug}),
        {"file": SimpleUploadedFile("long.csv", content)},
    )
    assert project.documents.get(doc_id="long1").text == LONG_FIELD


def test_jsonl_with_u2028_inside_a_string_is_accepted(fake_anonymizer):
    project = make_project()
    content = doccano(id="sep", text="First line\u2028second\u2029third\x85end.")
    content = json.dumps(json.loads(content), ensure_ascii=False).encode() + b"\n"
    response = logged_in(project.owner).post(
        reverse("annotation-add-texts", kwargs={"slug": project.slug}),
        {"file": SimpleUploadedFile("sep.jsonl", content)},
    )
    assert response.status_code == 302
    assert "\u2028" in project.documents.get(doc_id="sep").text


def test_doccano_spans_come_along_when_adding_texts(fake_anonymizer):
    project = make_project()
    content = doccano(
        id="spans",
        annotator="alice-layer",
        entities=[{"id": 1, "start_offset": 0, "end_offset": 3, "label": "PERSON_FIRSTNAME"}],
    )
    logged_in(project.owner).post(
        reverse("annotation-add-texts", kwargs={"slug": project.slug}),
        {"file": SimpleUploadedFile("spans.jsonl", content)},
    )
    task = Task.objects.get(document__doc_id="spans")
    assert task.annotator.name == "alice-layer"
    assert [(m.start, m.end) for m in task.mentions.all()] == [(0, 3)]


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("deep.jsonl", f'{{"target": "a", "text": {DEEP}}}\n'.encode()),
        ("int.jsonl", f'{{"target": "a", "text": {HUGE_INT}}}\n'.encode()),
        ("nul.jsonl", b'{"target": "a", "text": "x\\u0000y"}\n'),
        ("nul.csv", b"target,text\na,x\x00y\n"),
        ("short.csv", b'target,text\n"a,unterminated\n'),
    ],
)
def test_bad_background_files_name_the_line(name, content):
    with pytest.raises(BackgroundUploadError, match="line"):
        parse_background_upload(content, name)


def test_a_background_csv_field_over_131072_characters_and_u2028_are_read():
    long = parse_background_upload(f"target,text\na,{LONG_FIELD}\n".encode(), "bg.csv")
    assert long["a"] == LONG_FIELD.strip()
    line = json.dumps({"target": "b", "text": "one\u2028two"}, ensure_ascii=False) + "\n"
    assert parse_background_upload(line.encode(), "bg.jsonl")["b"] == "one\u2028two"


@pytest.mark.parametrize(
    "content",
    [DEEP.encode(), f'{{"d1": [[0, {HUGE_INT}]]}}'.encode(), b'{"d1": "x"}', b"[1, 2]"],
)
def test_bad_evaluation_files_get_an_error_not_a_500(fake_anonymizer, content):
    project = make_project()
    response = logged_in(project.owner).post(
        reverse("annotation-evaluate", kwargs={"slug": project.slug}),
        {"system": "file", "file": SimpleUploadedFile("sys.json", content)},
    )
    assert response.status_code == 200
    assert response.context["form"].non_field_errors()
