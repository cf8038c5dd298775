"""The bots benchmark's smoke run: a few sessions, waits shrunk, against a real gunicorn.

Proves the path the full run takes (benchmarks/intruder_bots.py) and that it refuses to report
success when it did no work; the detection rates themselves are the full run's
(benchmarks/RESULTS.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "intruder_bots.py"


def run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_benchmark_refuses_to_run_nothing(tmp_path) -> None:
    out = tmp_path / "bots.json"
    for args in (("--sessions", "0"), ("--types", ",")):
        done = run("--out", str(out), *args, timeout=60)
        assert done.returncode != 0
        assert "nothing to run" in done.stderr
    assert not out.exists()


@pytest.mark.browser
def test_a_smoke_run_flags_the_adversaries_and_writes_the_issues_json(tmp_path) -> None:
    from tests.browser.conftest import CHROMIUM

    if not Path(CHROMIUM).exists():
        pytest.skip(f"chromium not found at {CHROMIUM}")
    out = tmp_path / "bots.json"
    kinds = ("forged_minimal", "no_js", "script_inserted", "canary_cyrillic")
    done = run(
        "--out", str(out), "--sessions", "1", "--parallel", "4", "--time-scale", "0.02",
        "--types", ",".join(kinds),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text())
    assert results["errors"] == []
    assert results["measurement"] is False and results["pass"] is False  # 1 session: no claim
    expected = {
        "forged_minimal": "inconsistent_telemetry",
        "no_js": "no_telemetry",
        "script_inserted": "inserted",
        "canary_cyrillic": "canary",
    }
    for kind, code in expected.items():
        row = results["bots"][kind]
        assert (row["sessions"], row["answered"], row["flagged"]) == (1, 1, 1), row
        assert code in row["flag_codes"], row
        assert row["wilson_95_pct"][1] == 100.0


def test_the_plain_http_kinds_run_and_the_quick_bots_are_flagged(tmp_path) -> None:
    """Issue 48's plain-HTTP path (no browser): the quick reader and the "no idea" bot, one
    session each at real pace (4 texts of ~100 words, 2 of them catch trials, answered within
    8 s)."""
    out = tmp_path / "bots_http.json"
    done = run(
        "--http", "--out", str(out), "--sessions", "1", "--parallel", "2",
        "--types", "bot_quick_reader,bot_no_idea",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text())
    assert results["errors"] == []
    assert results["pass"] is False  # 1 session: no claim
    quick, careless = results["bots"]["bot_quick_reader"], results["bots"]["bot_no_idea"]
    assert quick["judgments"] == careless["judgments"] == 4
    assert quick["judgments_on_catch_trials"] == careless["judgments_on_catch_trials"] == 2
    assert quick["judgments_per_flag_code"]["too_fast_to_read"] == 4
    assert careless["judgments_per_flag_code"]["repeated_quick_answer"] == 4
