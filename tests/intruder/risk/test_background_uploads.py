"""Uploaded background documents: TXT, CSV, JSONL; bad files name the line and field."""

from __future__ import annotations

import pytest

from intruder.risk.background_uploads import (
    BackgroundUploadError,
    parse_background_upload,
    parse_background_uploads,
)


def test_txt_csv_and_jsonl_give_documents_per_target_key():
    assert parse_background_upload(b"  Mira is a welder.\n", "mira.txt") == {
        "mira": "Mira is a welder."
    }
    csv_content = b"target,text\nmira,welder in Perth\nmira,rides horses\nodo,baker\n"
    assert parse_background_upload(csv_content, "bg.csv") == {
        "mira": "welder in Perth\n\nrides horses",
        "odo": "baker",
    }
    jsonl = b'{"target": "mira", "text": "welder"}\n\n{"target": "odo", "text": "baker"}\n'
    assert parse_background_upload(jsonl, "bg.jsonl") == {"mira": "welder", "odo": "baker"}
    merged = parse_background_uploads([("mira.txt", b"a"), ("x.csv", b"target,text\nmira,b\n")])
    assert merged == {"mira": "a\n\nb"}


@pytest.mark.parametrize(
    "content, name, message",
    [
        (b"", "mira.txt", "empty"),
        (b"\xff\xfe", "mira.txt", "not UTF-8"),
        (b"who,text\nmira,x\n", "bg.csv", "line 1: missing column"),
        (b"target,text\nmira,x\n,y\n", "bg.csv", "line 3, field 'target'"),
        (b'{"target": "mira"}\n', "bg.jsonl", "line 1, field 'text'"),
        (b'{"target": "mira", "text": "x"}\n{oops\n', "bg.jsonl", "line 2"),
        (b"[1, 2]\n", "bg.jsonl", "not a JSON object"),
        (b"x", "bg.pdf", "use .txt"),
        (b"target,text\n", "bg.csv", "no documents"),
    ],
)
def test_bad_files_name_the_line_and_field(content, name, message):
    with pytest.raises(BackgroundUploadError, match=message):
        parse_background_upload(content, name)
