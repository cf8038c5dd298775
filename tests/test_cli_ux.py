"""What a researcher meets on the command line (issue 26), each checked in a real subprocess:
one-line errors with status 2, one background format, k refused up front, an example in
every verb's --help, and progress bars only on a terminal and never with --quiet."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_BACKGROUND = REPO / "docs/examples/background.jsonl"
# Persons of docs/examples/background.jsonl; the texts are ours, made up for this test.
TEXTS = [
    {
        "id": "t1",
        "text": "A singer of sea shanties who recorded a lighthouse album.",
        "target": "odalys-brennecke",
        "spans": [],
    },
    {
        "id": "t2",
        "text": "A chess grandmaster who writes a puzzle column.",
        "target": "tobias-wernecke",
        "spans": [],
    },
]
VERBS = [
    ("anonymize", "run"),
    ("anonymize", "train"),
    ("anonymize", "evaluate"),
    ("anonymize", "calibrate"),
    ("anonymize", "card"),
    ("anonymize", "tpi"),
    ("attacks", "run"),
    ("attacks", "predict"),
    ("guard", "guard"),
]
# Every test here runs the CLI in a child process that imports the model stack (seconds).
pytestmark = pytest.mark.slow

BAR_MARKS = ("Loading weights", "it/s]", "s/it]", "%|")


def run(*argv: str, stdin: str = "", tty: bool = False) -> subprocess.CompletedProcess:
    """Run `python -m ...` in the repository; stderr is a pipe, or a terminal with `tty`."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "120"}
    if not tty:
        return subprocess.run(
            [sys.executable, "-m", *argv],
            cwd=REPO,
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    leader, follower = pty.openpty()
    # A terminal 120 columns wide: tqdm sizes its bar from the terminal (0 = no bar).
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    try:
        done = subprocess.run(
            [sys.executable, "-m", *argv],
            cwd=REPO,
            input=stdin,
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            env=env,
            timeout=300,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        done.stderr = b"".join(chunks).decode("utf-8", "replace")
        return done
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    """Assert status 2 and a single 'error: ...' line without a traceback; return it."""
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_anonymize_run_with_a_missing_input_prints_one_line_and_exits_2(tmp_path) -> None:
    line = one_line_error(run("anonymize", "run", "--input", str(tmp_path / "nope.jsonl")))
    assert "nope.jsonl" in line and "No such file" in line
    line = one_line_error(
        run("anonymize", "run", "--input-dir", str(tmp_path / "no-dir"), "--output-dir", "x")
    )
    assert "no-dir" in line
    line = one_line_error(
        run(
            "anonymize",
            "run",
            "--model-dir",
            str(tmp_path / "no-model"),
            stdin='{"id": 1, "text": "Hi."}',
        )
    )
    assert "--model-dir" in line


def test_attacks_cli_errors_stay_one_line(tmp_path) -> None:
    line = one_line_error(run("attacks", "run", "--config", str(tmp_path / "none.json")))
    assert "none.json" in line


def test_guard_accepts_the_docs_example_background_and_lists_residual_words(tmp_path) -> None:
    texts = write_jsonl(tmp_path / "texts.jsonl", TEXTS)
    out = tmp_path / "guarded.jsonl"
    done = run(
        "guard",
        "guard",
        "--input",
        str(texts),
        "--background",
        str(EXAMPLE_BACKGROUND),
        "--k",
        "2",
        "--output",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["t1", "t2"]
    for row in rows:
        assert isinstance(row["residual_words"], list)
        assert not set(row["residual_words"]) & {w.lower() for w in row["masked_words"]}
    # stderr is a pipe here: no progress bar at all, only the summary lines.
    assert not any(mark in done.stderr for mark in BAR_MARKS), done.stderr
    assert "k-anonymous" not in done.stderr


def test_guard_accepts_name_for_target_where_unambiguous_and_refuses_a_conflict(tmp_path):
    texts = write_jsonl(tmp_path / "texts.jsonl", TEXTS)
    rows = [json.loads(line) for line in EXAMPLE_BACKGROUND.read_text().splitlines()]
    by_name = write_jsonl(
        tmp_path / "name.jsonl", [{"name": r["target"], "text": r["text"]} for r in rows]
    )
    done = run(
        "guard",
        "guard",
        "--input",
        str(texts),
        "--background",
        str(by_name),
        "--k",
        "2",
        "--output",
        str(tmp_path / "o.jsonl"),
    )
    assert done.returncode == 0, done.stderr
    conflict = [{**rows[0], "name": "someone-else"}, *rows[1:]]
    bad = write_jsonl(tmp_path / "conflict.jsonl", conflict)
    line = one_line_error(
        run("guard", "guard", "--input", str(texts), "--background", str(bad), "--k", "2")
    )
    assert "conflict.jsonl line 1" in line and "'target' and 'name'" in line


def test_guard_refuses_k_above_the_number_of_candidates_up_front(tmp_path) -> None:
    texts = write_jsonl(tmp_path / "texts.jsonl", TEXTS)
    line = one_line_error(
        run(
            "guard",
            "guard",
            "--input",
            str(texts),
            "--background",
            str(EXAMPLE_BACKGROUND),
            "--k",
            "4",
        )
    )
    assert "--k 4" in line and "3 candidates" in line


@pytest.mark.parametrize(("module", "verb"), VERBS, ids=[f"{m}-{v}" for m, v in VERBS])
def test_every_cli_verb_help_shows_an_example(module: str, verb: str) -> None:
    done = run(module, verb, "--help")
    assert done.returncode == 0, done.stderr
    example = done.stdout.split("example", 1)
    assert len(example) == 2, done.stdout
    assert f"python -m {module} {verb}" in example[1]


def test_anonymize_progress_bar_shows_on_a_terminal_only_and_never_with_quiet() -> None:
    lines = "".join(
        json.dumps({"id": i, "text": f"Orla Brennick {i} is a nurse in Dunmore."}) + "\n"
        for i in range(3)
    )
    on_tty = run("anonymize", "run", stdin=lines, tty=True)
    assert on_tty.returncode == 0, on_tty.stderr
    assert "anonymize" in on_tty.stderr and "3/3" in on_tty.stderr, on_tty.stderr
    quiet = run("anonymize", "run", "--quiet", stdin=lines, tty=True)
    assert quiet.returncode == 0, quiet.stderr
    assert not any(mark in quiet.stderr for mark in BAR_MARKS), quiet.stderr
    piped = run("anonymize", "run", stdin=lines)
    assert not any(mark in piped.stderr for mark in BAR_MARKS), piped.stderr
    assert len(piped.stdout.splitlines()) == 3


def test_guard_quiet_silences_the_loading_weights_bar(tmp_path) -> None:
    """Rows without spans load the anonymizer: on a terminal its bars show unless --quiet."""
    texts = write_jsonl(
        tmp_path / "texts.jsonl", [{k: v for k, v in TEXTS[0].items() if k != "spans"}]
    )
    argv = [
        "guard",
        "guard",
        "--input",
        str(texts),
        "--background",
        str(EXAMPLE_BACKGROUND),
        "--k",
        "2",
        "--output",
        str(tmp_path / "o.jsonl"),
    ]
    loud = run(*argv, tty=True)
    assert loud.returncode == 0, loud.stderr
    assert "guard" in loud.stderr and "1/1" in loud.stderr, loud.stderr
    quiet = run(*argv, "--quiet", tty=True)
    assert quiet.returncode == 0, quiet.stderr
    assert not any(mark in quiet.stderr for mark in BAR_MARKS), quiet.stderr
