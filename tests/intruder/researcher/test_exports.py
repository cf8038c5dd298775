"""Exports: every table in CSV and JSONL reads back into pandas with the same content."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from intruder.exchange.exports import COLUMNS, TABLES, render_table
from tests.intruder.factories import (
    make_description,
    make_judgment,
    make_participant,
    make_study,
    make_target,
    make_text,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged_study():
    study = make_study(slug="harbour")
    target = make_target(
        study=study, name="Ines Calloway", group="semifamous", aliases=["Ines C.", "Calloway"]
    )
    famous = make_target(study=study, name="Oriel Vantassel", group="famous")
    texts = [
        make_text(
            study=study,
            description=make_description(
                study=study, target=target, text=f'Ines Calloway, "quoted", line {i}\nnext line'
            ),
        )
        for i in range(2)
    ]
    for position, pid in enumerate(["PIDA", "PIDB"], start=1):
        participant = make_participant(study=study, prolific_pid=pid, group="semifamous")
        for slot, text in enumerate(texts, start=1):
            make_judgment(
                participant=participant,
                text=text,
                position=slot,
                slot=position,
                self_identified=pid == "PIDA",
                guessed_name="ines calloway" if pid == "PIDA" else "",
                cosine=0.97 if pid == "PIDA" else 0.0,
                identified=pid == "PIDA",
                time_spent_ms=12000 + slot,
            )
        participant.attention_checks.create(
            after_texts=1, prompt="Type the word orange.", expected="orange", answer=pid
        )
        # The debrief's familiarity question (famous persons only).
        participant.familiarity_answers.create(target=famous, heard_of=pid == "PIDA")
    return study


def read(study, table: str, fmt: str) -> pd.DataFrame:
    content = render_table(study, table, fmt)
    if fmt == "csv":
        return pd.read_csv(io.StringIO(content), keep_default_na=False, na_values=[""])
    return pd.read_json(io.StringIO(content), lines=True)


def test_judgments_have_one_row_per_judgment_with_target_group_pid_and_scores(
    judged_study,
) -> None:
    frame = read(judged_study, "judgments", "csv")
    assert len(frame) == 4
    assert list(frame.columns) == COLUMNS["judgments"]
    assert set(frame["participant_pid"]) == {"PIDA", "PIDB"}
    assert set(frame["target_name"]) == {"Ines Calloway"}
    assert set(frame["group"]) == {"semifamous"}
    by_pid = frame.groupby("participant_pid")["identified"].mean()
    assert by_pid.to_dict() == {"PIDA": 1.0, "PIDB": 0.0}
    assert frame["cosine"].dtype == float


@pytest.mark.parametrize("table", list(TABLES))
def test_csv_and_jsonl_hold_the_same_records(judged_study, table: str) -> None:
    from_csv = read(judged_study, table, "csv")
    from_jsonl = read(judged_study, table, "jsonl")
    assert list(from_csv.columns) == list(from_jsonl.columns) == COLUMNS[table]
    assert len(from_csv) == len(from_jsonl) > 0
    for column in ("text", "guessed_name", "prolific_pid", "key"):
        if column in from_csv:
            assert from_csv[column].fillna("").tolist() == from_jsonl[column].fillna("").tolist()


def test_text_with_quotes_and_newlines_survives_the_csv_round_trip(judged_study) -> None:
    frame = read(judged_study, "descriptions", "csv")
    assert frame["text"].tolist()[0] == 'Ines Calloway, "quoted", line 0\nnext line'


def test_spans_and_aliases_are_json_in_csv_and_lists_in_jsonl(judged_study) -> None:
    csv_spans = read(judged_study, "anonymized_texts", "csv")["spans"].map(json.loads)
    jsonl_spans = read(judged_study, "anonymized_texts", "jsonl")["spans"]
    assert csv_spans.tolist() == jsonl_spans.tolist()
    assert csv_spans.iloc[0][0]["text"] == "Ines Calloway"
    aliases = read(judged_study, "targets", "jsonl").set_index("name")["aliases"]["Ines Calloway"]
    assert aliases == ["Ines C.", "Calloway"]


def test_familiarity_has_one_row_per_intruder_and_person_asked(judged_study) -> None:
    frame = read(judged_study, "familiarity", "csv")
    assert list(frame.columns) == COLUMNS["familiarity"]
    assert dict(zip(frame["participant_pid"], frame["heard_of"], strict=True)) == {
        "PIDA": True,
        "PIDB": False,
    }
    assert set(frame["target_name"]) == {"Oriel Vantassel"} and not frame["simulated"].any()


def test_participant_export_has_no_session_token(judged_study) -> None:
    content = render_table(judged_study, "participants", "jsonl")
    tokens = judged_study.participants.values_list("token", flat=True)
    assert all(token not in content for token in tokens)


def test_empty_table_still_has_a_header() -> None:
    study = make_study()
    frame = read(study, "judgments", "csv")
    assert list(frame.columns) == COLUMNS["judgments"]
    assert frame.empty


def test_download_link_serves_an_attachment(judged_study) -> None:
    client = Client()
    client.force_login(judged_study.owner)
    url = reverse(
        "researcher-export", kwargs={"slug": "harbour", "table": "judgments", "fmt": "jsonl"}
    )
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="harbour_judgments.jsonl"'
    assert len(response.content.decode().splitlines()) == 4
    bad = reverse("researcher-export", kwargs={"slug": "harbour", "table": "users", "fmt": "csv"})
    assert client.get(bad).status_code == 404


def test_export_command_writes_every_table_in_both_formats(judged_study, tmp_path) -> None:
    call_command("export_study", "harbour", "--out", str(tmp_path))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(f"harbour_{t}.{f}" for t in TABLES for f in ("csv", "jsonl"))
    frame = pd.read_csv(tmp_path / "harbour_judgments.csv")
    assert len(frame) == 4
