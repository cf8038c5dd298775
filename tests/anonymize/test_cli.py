"""`python -m anonymize run`: JSONL in/out, folders, and error messages naming the line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from anonymize.cli import main


def run_cli(argv: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(argv, stdin=io.BytesIO(stdin), stdout=stdout, stderr=stderr)
    return code, stdout.getvalue(), stderr.getvalue()


GOOD_LINE = b'{"id": "a", "text": "Mara Quillfeather lives in Lisbon."}\n'


@pytest.mark.parametrize(
    ("bad_input", "message"),
    [
        (GOOD_LINE + b'{"id": "b", "text": "x"\n', "line 2: malformed JSON"),
        (GOOD_LINE + b"\n" + b'{"text": "x"}\n', "line 3: missing field 'id'"),
        (b'{"id": "b"}\n', "line 1: missing field 'text'"),
        (b'{"id": "b", "text": 5}\n', "line 1: field 'text' must be a string"),
        (b"[1, 2]\n", "line 1: expected a JSON object"),
        (GOOD_LINE + b'{"id": "c", "text": "caf\xe9"}\n', "line 2: not valid UTF-8 (byte 0xe9"),
    ],
)
def test_bad_lines_stop_the_run_with_the_line_number(bad_input, message, tiny_model_dir):
    code, out, err = run_cli(["run", "--model-dir", str(tiny_model_dir)], stdin=bad_input)
    assert code == 2
    assert message in err
    assert out == ""


def test_skip_errors_goes_on_and_reports_what_it_skipped(tiny_model_dir):
    stdin = GOOD_LINE + b"not json\n" + b'{"id": "z", "text": ""}\n'
    code, out, err = run_cli(
        ["run", "--model-dir", str(tiny_model_dir), "--skip-errors"], stdin=stdin
    )
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["id"] for row in rows] == ["a", "z"]
    assert rows[1]["anonymized"] == "" and rows[1]["spans"] == []
    assert "skipped 1 input(s)" in err and "line 2: malformed JSON" in err


def test_output_lines_keep_id_and_text_and_add_spans_with_offsets(tiny_model_dir, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_bytes(GOOD_LINE + b'{"id": 7, "text": "Tobin flew to Oslo.", "lang": "en"}\n')
    target = tmp_path / "out.jsonl"
    code, _, _ = run_cli(
        [
            "run",
            "--model-dir",
            str(tiny_model_dir),
            "--input",
            str(source),
            "--output",
            str(target),
            "--threshold",
            "0.0",
        ]
    )
    assert code == 0
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert [row["id"] for row in rows] == ["a", 7]
    assert rows[1]["lang"] == "en"
    for row in rows:
        assert set(row) >= {"id", "text", "anonymized", "spans"}
        assert row["spans"], "threshold 0 masks every word"
        for span in row["spans"]:
            assert set(span) == {"start", "end", "text", "category", "placeholder", "score"}
            assert row["text"][span["start"] : span["end"]] == span["text"]


def test_folder_mode_writes_one_anonymized_file_per_text(tiny_model_dir, tmp_path: Path):
    source, target = tmp_path / "in", tmp_path / "out"
    source.mkdir()
    (source / "one.txt").write_text("Lysa Oakhurst is a tailor.", encoding="utf-8")
    (source / "two.txt").write_text("", encoding="utf-8")
    code, _, _ = run_cli(
        [
            "run",
            "--model-dir",
            str(tiny_model_dir),
            "--input-dir",
            str(source),
            "--output-dir",
            str(target),
            "--operator",
            "redact",
            "--threshold",
            "0.0",
        ]
    )
    assert code == 0
    assert sorted(p.name for p in target.iterdir()) == ["one.txt", "two.txt"]
    assert set((target / "one.txt").read_text()) <= {"*", " "}  # threshold 0 redacts all
    assert (target / "two.txt").read_text() == ""


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--entities", "CITY"], "unknown categories ['CITY']"),
        (["--threshold", "2"], "--threshold must be in [0, 1]"),
        (["--input-dir", "x"], "--input-dir and --output-dir go together"),
        (["--rules", "digits,typo"], "--rules: unknown rules ['typo']"),
    ],
)
def test_bad_options_are_explained(flags, message, tiny_model_dir):
    code, _, err = run_cli(["run", "--model-dir", str(tiny_model_dir), *flags], GOOD_LINE)
    assert code == 2
    assert message in err


def test_threshold_help_gives_the_shipped_models_own_threshold(tmp_path):
    """The help reads the default from the model's config, where `calibrate` wrote it."""
    from anonymize.cli import build_parser
    from anonymize.model import DEFAULT_MODEL_DIR, DEFAULT_THRESHOLD, saved_threshold

    shipped = json.loads((DEFAULT_MODEL_DIR / "config.json").read_text())["psi_threshold"]
    assert saved_threshold() == shipped
    assert saved_threshold(tmp_path) == DEFAULT_THRESHOLD  # no config: the load default
    run = build_parser()._subparsers._group_actions[0].choices["run"]
    assert f"{shipped} for the shipped model" in " ".join(run.format_help().split())


@pytest.mark.parametrize(
    ("name", "content", "looks"),
    [
        ("texts.csv", b"id,text\nt1,Mara lives in Lisbon.\nt2,Tobin flew.\n", "a CSV file"),
        ("notes.txt", b"Mara lives in Lisbon.\nTobin flew to Oslo.\n", "plain text"),
    ],
)
def test_a_file_that_is_not_json_lines_is_named_once_not_line_by_line(
    name, content, looks, tiny_model_dir, tmp_path
):
    source = tmp_path / name
    source.write_bytes(content)
    code, out, err = run_cli(["run", "--model-dir", str(tiny_model_dir), "--input", str(source)])
    assert code == 2 and out == ""
    assert f"--input {source} is not JSON Lines" in err and f"looks like {looks}" in err
    assert "malformed JSON" not in err and len(err.strip().splitlines()) == 1


def test_json_lines_with_a_byte_order_mark_are_still_read(tiny_model_dir):
    code, out, err = run_cli(
        ["run", "--model-dir", str(tiny_model_dir)], stdin=b"\xef\xbb\xbf" + GOOD_LINE
    )
    assert code == 0 and "not JSON Lines" not in err
    assert json.loads(out)["id"] == "a"


def test_a_successful_run_says_what_it_wrote(tiny_model_dir, tmp_path):
    target = tmp_path / "out.jsonl"
    argv = ["run", "--model-dir", str(tiny_model_dir), "--output", str(target), "--threshold", "0"]
    code, out, err = run_cli(argv, stdin=GOOD_LINE)
    assert code == 0 and out == ""
    spans = len(json.loads(target.read_text())["spans"])
    assert err.strip().endswith(f"anonymized 1 text(s), {spans} span(s) masked; wrote {target}")


def test_tpi_help_ends_with_a_worked_example(capsys):
    with pytest.raises(SystemExit):
        main(["tpi", "--help"])
    assert "python -m anonymize tpi --input runs/anonymized.jsonl" in capsys.readouterr().out
