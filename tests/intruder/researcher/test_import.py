"""Importing targets and descriptions: happy paths, and every error naming line and field."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from intruder.exchange.imports import (
    ImportValidationError,
    RowError,
    detect_format,
    import_study_data,
)
from intruder.models import AnonymizedText, Description, TargetPerson
from tests.intruder.factories import make_description, make_study, make_target

pytestmark = pytest.mark.django_db

TEXT = "Wilhelmina Farrow repairs clocks in a small workshop near the harbour of Port Ellery."


def jsonl(*rows: dict) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def textwash_row(n: int, person: str = "wilhelmina farrow", kind: str = "fictitious") -> dict:
    """A row in the format of the Textwash study files (made-up content)."""
    return {
        "id": f"{kind}_{n}",
        "study": 1,
        "type": kind,
        "item": n,
        "person": person,
        "original": f"{TEXT} Entry {n}.",
        "textwash": "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 repairs clocks near LOCATION_1.",
    }


def assert_nothing_written(study) -> None:
    assert not TargetPerson.objects.filter(study=study).exists()
    assert not Description.objects.filter(study=study).exists()
    assert not AnonymizedText.objects.filter(description__study=study).exists()


def errors_of(study, content: str, fmt: str) -> list[RowError]:
    with pytest.raises(ImportValidationError) as caught:
        import_study_data(study=study, content=content, fmt=fmt)
    return caught.value.errors


def test_textwash_format_imports_targets_descriptions_and_textwash_texts() -> None:
    study = make_study()
    content = jsonl(
        textwash_row(1),
        textwash_row(2),
        textwash_row(3, person="orlando quist", kind="famous"),
    )
    report = import_study_data(study=study, content=content, fmt="jsonl")
    assert (report.targets_created, report.descriptions_created, report.anonymized_created) == (
        2,
        3,
        3,
    )
    target = TargetPerson.objects.get(study=study, key="wilhelmina-farrow")
    assert (target.name, target.group) == ("Wilhelmina Farrow", "fictitious")
    description = Description.objects.get(study=study, external_id="fictitious_2")
    assert description.text == f"{TEXT} Entry 2."
    anonymized = description.anonymizations.get()
    assert anonymized.method == "textwash-original"
    assert anonymized.status == "draft"
    assert anonymized.text.startswith("PERSON_FIRSTNAME_1")


@pytest.mark.shared_data
def test_textwash_study_files_import_whole(shared_data) -> None:
    study = make_study()
    path = shared_data / "textwash_study" / "study2.jsonl"
    report = import_study_data(study=study, content=path.read_bytes(), fmt="jsonl")
    lines = sum(1 for line in path.read_text().splitlines() if line.strip())
    assert report.descriptions_created == lines
    assert report.anonymized_created == lines
    assert study.targets.filter(group="famous").count() == report.targets_created > 0


def test_csv_targets_then_descriptions_by_key() -> None:
    study = make_study()
    targets = (
        "key,name,group,aliases,wikipedia_url,profile\n"
        'ellery,Ellery Vance,semifamous,"E. Vance;Ell",https://en.wikipedia.org/wiki/X,\n'
        'nadia,Nadia Brook,fictitious,,,"{""job"": ""baker"", ""age"": 41}"\n'
    )
    report = import_study_data(study=study, content=targets, fmt="csv")
    assert report.targets_created == 2
    ellery = TargetPerson.objects.get(study=study, key="ellery")
    assert ellery.aliases == ["E. Vance", "Ell"]
    assert TargetPerson.objects.get(study=study, key="nadia").profile == {
        "job": "baker",
        "age": 41,
    }
    descriptions = "id,target,text\nd1,ellery,A long text about her.\nd2,nadia,Bakes bread.\n"
    report = import_study_data(study=study, content=descriptions.encode(), fmt="csv")
    assert report.descriptions_created == 2
    assert Description.objects.get(study=study, external_id="d2").target.key == "nadia"


def test_existing_target_is_reused_by_person_name() -> None:
    study = make_study()
    make_target(study=study, key="wilhelmina-farrow", name="Wilhelmina Farrow")
    report = import_study_data(study=study, content=jsonl(textwash_row(1)), fmt="jsonl")
    assert (report.targets_created, report.targets_reused) == (0, 1)


BAD_JSONL_CASES = [
    ("not json", "{not json", 1, "(line)", "not valid JSON"),
    ("not an object", "[1, 2]", 1, "(line)", "JSON object"),
    (
        "missing text",
        {"id": "a", "text": "", "person": "x y", "type": "famous"},
        1,
        "text",
        "required",
    ),
    ("text not string", {"text": ["a"], "target": "k"}, 1, "text", "must be a string"),
    ("bad group", {"original": "T", "person": "x y", "type": "celebrity"}, 1, "type", "not one of"),
    ("no target", {"original": "T"}, 1, "target", "give a target"),
    ("unknown key", {"original": "T", "target": "ghost"}, 1, "target", "no target 'ghost'"),
    ("new person without group", {"original": "T", "person": "x y"}, 1, "type", "required"),
    ("target without name", {"name": "", "group": "famous"}, 1, "name", "required"),
    ("target without group", {"name": "Ann Lee"}, 1, "group", "required"),
    (
        "bad url",
        {"name": "Ann Lee", "group": "semifamous", "wikipedia_url": "nope"},
        1,
        "wikipedia_url",
        "not a valid URL",
    ),
    (
        "bad aliases",
        {"name": "Ann Lee", "group": "famous", "aliases": [1, 2]},
        1,
        "aliases",
        "list of strings",
    ),
    (
        "bad profile",
        {"name": "Ann Lee", "group": "fictitious", "profile": [1]},
        1,
        "profile",
        "JSON object",
    ),
    (
        "id not string",
        {"id": ["x"], "original": "T", "person": "a b", "type": "famous"},
        1,
        "id",
        "must be a string",
    ),
]


@pytest.mark.parametrize(
    ("case", "row", "line", "field", "message"),
    BAD_JSONL_CASES,
    ids=[c[0] for c in BAD_JSONL_CASES],
)
def test_bad_jsonl_row_is_reported_by_line_and_field_and_nothing_is_written(
    case: str, row, line: int, field: str, message: str
) -> None:
    study = make_study()
    good = json.dumps(textwash_row(1))
    bad = row if isinstance(row, str) else json.dumps(row)
    # The good row first: it must not be written either.
    errors = errors_of(study, f"{good}\n{bad}\n", "jsonl")
    assert any(e.line == line + 1 and e.field == field and message in e.message for e in errors), (
        errors
    )
    assert_nothing_written(study)


def test_duplicate_id_within_the_file_names_both_lines() -> None:
    study = make_study()
    errors = errors_of(study, jsonl(textwash_row(1), textwash_row(1)), "jsonl")
    assert errors == [RowError(2, "id", "'fictitious_1' repeats line 1")]
    assert_nothing_written(study)


def test_id_already_in_the_study_is_refused() -> None:
    study = make_study()
    import_study_data(study=study, content=jsonl(textwash_row(1)), fmt="jsonl")
    errors = errors_of(study, jsonl(textwash_row(2), textwash_row(1)), "jsonl")
    assert errors == [RowError(2, "id", "'fictitious_1' is already in the study")]
    assert study.descriptions.count() == 1


def test_conflicting_person_for_an_existing_key_is_refused() -> None:
    study = make_study()
    make_target(study=study, key="wilhelmina-farrow", name="Wilhelmina Farrow", group="famous")
    errors = errors_of(study, jsonl(textwash_row(1)), "jsonl")
    assert errors[0].line == 1
    assert errors[0].field == "person"
    assert "exists in the study" in errors[0].message


def test_csv_errors_use_physical_line_numbers_across_multiline_fields() -> None:
    study = make_study()
    content = (
        'id,person,type,text\na,Ann Lee,famous,"first line\nsecond line"\nb,Bo Ek,royalty,text\n'
    )
    errors = errors_of(study, content, "csv")
    assert errors == [RowError(4, "type", "'royalty' is not one of famous, semifamous, fictitious")]
    assert_nothing_written(study)


def test_csv_row_with_too_many_values_is_reported() -> None:
    study = make_study()
    errors = errors_of(study, "name,group\nAnn Lee,famous,extra\n", "csv")
    assert errors == [RowError(2, "(line)", "more values than header columns")]


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "no rows"), (b"\xff\xfe\x00", "not UTF-8"), (b"\n\n", "no rows")],
)
def test_empty_or_undecodable_file_is_refused(content: bytes, message: str) -> None:
    study = make_study()
    errors = errors_of(study, content, "jsonl")
    assert errors[0].field == "file"
    assert message in errors[0].message


def test_every_error_of_a_file_is_reported_at_once() -> None:
    study = make_study()
    content = jsonl({"original": "T"}, {"name": "X"}, {"original": "", "target": "k"})
    errors = errors_of(study, content, "jsonl")
    assert sorted({e.line for e in errors}) == [1, 2, 3]


def test_error_message_reads_line_and_field() -> None:
    assert str(RowError(7, "type", "bad")) == "line 7, field 'type': bad"


@pytest.mark.parametrize(
    ("name", "fmt"), [("a.csv", "csv"), ("b.JSONL", "jsonl"), ("c.ndjson", "jsonl")]
)
def test_format_is_detected_from_the_file_name(name: str, fmt: str) -> None:
    assert detect_format(name) == fmt


def test_unknown_suffix_is_refused() -> None:
    with pytest.raises(ImportValidationError):
        detect_format("data.xlsx")


def test_upload_form_imports_and_reports_errors_with_lines() -> None:
    study = make_study()
    client = Client()
    client.force_login(study.owner)
    url = reverse("researcher-study-import", kwargs={"slug": study.slug})
    bad = SimpleUploadedFile("bad.jsonl", jsonl(textwash_row(1), {"original": "T"}).encode())
    response = client.post(url, {"file": bad})
    assert response.status_code == 400
    body = response.content.decode()
    assert "Nothing was imported" in body
    assert "<td>2</td>" in body and "<code>target</code>" in body
    assert_nothing_written(study)
    good = SimpleUploadedFile("good.jsonl", jsonl(textwash_row(1)).encode())
    response = client.post(url, {"file": good})
    assert response.status_code == 302
    assert study.descriptions.count() == 1


def test_import_command_writes_rows_or_reports_errors(tmp_path) -> None:
    study = make_study()
    make_description(study=study, external_id="keep")
    good = tmp_path / "good.jsonl"
    good.write_text(jsonl(textwash_row(1)))
    call_command("import_study_data", study.slug, str(good))
    assert study.descriptions.count() == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text(jsonl(textwash_row(2), {"original": "T", "target": "ghost"}))
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_study_data", study.slug, str(bad))
    assert study.descriptions.count() == 2


def test_uploads_of_one_file_at_once_import_it_once_and_refuse_the_others(monkeypatch) -> None:
    """Three "add texts" of one file at the same moment: one imports, two are told why."""
    from intruder.exchange import imports

    study = make_study()
    client = Client()
    client.force_login(study.owner)
    url = reverse("researcher-study-import", kwargs={"slug": study.slug})
    content = jsonl(textwash_row(1), textwash_row(2)).encode()
    answers: list[int] = []
    real_validate = imports.validate_rows

    def validate_while_others_upload(*args, **kwargs):
        checked = real_validate(*args, **kwargs)
        if not answers:  # the first upload is checked; the other two arrive before it writes
            answers.append(0)
            for n in (2, 3):
                upload = SimpleUploadedFile(f"same-{n}.jsonl", content)
                answers.append(client.post(url, {"file": upload}).status_code)
        return checked

    monkeypatch.setattr(imports, "validate_rows", validate_while_others_upload)
    first = client.post(url, {"file": SimpleUploadedFile("same-1.jsonl", content)})
    assert first.status_code == 302
    assert answers[1:] == [409, 409]
    assert study.descriptions.count() == 2 and not study.import_batches.exists()


def test_a_row_written_meanwhile_another_way_gives_a_message_not_a_500(monkeypatch) -> None:
    from intruder.exchange import imports

    study = make_study()
    real_write = imports._write_targets

    def write_after_someone_else(study_, targets, *args):
        for key, target in targets.items():  # another way in takes the key first
            TargetPerson.objects.create(study=study_, key=key, name=target.name)
        return real_write(study_, targets, *args)

    monkeypatch.setattr(imports, "_write_targets", write_after_someone_else)
    with pytest.raises(imports.ImportRunning, match="import it again"):
        import_study_data(study=study, content=jsonl(textwash_row(1)), fmt="jsonl")
    assert study.descriptions.count() == 0 and not study.import_batches.exists()


def test_a_missing_name_names_the_column_that_was_not_read() -> None:
    """A `fullname` column is why `name` is missing: the error says so (issue 40)."""
    study = make_study()
    errors = errors_of(study, "fullname,group\nAnn Lee,famous\n", "csv")
    [error] = [e for e in errors if e.field == "name"]
    assert error.line == 2
    assert error.message == (
        "required; the column(s) 'fullname' are not read: rename the one meant"
    )
    assert_nothing_written(study)


def test_a_missing_name_with_only_known_columns_just_says_required() -> None:
    study = make_study()
    [error] = errors_of(study, "name,group\n,famous\n", "csv")
    assert (error.field, error.message) == ("name", "required")
