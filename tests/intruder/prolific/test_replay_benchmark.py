"""`benchmarks/prolific_replay.py` in a seconds-long configuration: it measures something,
meets its targets, and exits non-zero when it measured nothing (issue 37)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SMOKE = [
    "--events", "150", "--texts", "4", "--judgments-per-text", "2", "--items", "2",
    "--max-participants", "40", "--return-share", "0.5", "--concurrency", "3",
    "--senders", "2", "--max-delay", "0.2", "--crashes", "2", "--replays", "10",
    "--min-returns", "1", "--time-limit", "120",
]  # fmt: skip


def _replay(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "replay.json"
    env = dict(os.environ, INTRUDER_VAR_DIR=str(tmp_path / "var"))
    env.pop("DATABASE_URL", None)  # a throwaway SQLite database of the benchmark's own
    run = subprocess.run(
        [sys.executable, "benchmarks/prolific_replay.py", *args, "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return run, json.loads(out.read_text())


@pytest.mark.slow
def test_the_smoke_run_measures_every_scenario_and_meets_the_targets(tmp_path):
    run, result = _replay(tmp_path, *SMOKE)
    assert run.returncode == 0, run.stderr[-2000:]
    details = result["details"]
    assert result["measured_nothing"] == [] and result["targets_missed"] == []
    assert details["participants_enrolled"] > 0 and details["judgments"] > 0
    assert details["returned_holding_a_text"] > 0
    assert details["bonus_crashes"]["crashed"] == 2
    assert result["crash_double_payments"] == 0
    assert details["cross_study"]["attempts"] >= 15 and result["cross_study_effects"] == 0
    assert details["replays"]["outcomes"] == {"duplicate": details["replays"]["sent"]}
    assert result["replays_applied"] == 0
    # Issue 47: claims on workspace studies, cleared and changed IDs, a race of approvals.
    ownership = details["ownership"]
    assert ownership["attempts"] >= 10 and result["ownership_effects"] == 0
    assert ownership["race"] == {"approved": 1, "refused": 1}
    assert ownership["webhook_outcomes"] == {"unknown_study": 2}
    # Issue 47: the excluded, the tester outside the Prolific study, a second label.
    ineligible = details["ineligible"]
    assert ineligible["candidates"] >= 1 and result["ineligible_payments"] == 0
    assert ineligible["not_paid_why"]["not a submission of this Prolific study"] == 1


@pytest.mark.slow
def test_a_run_that_measured_nothing_exits_non_zero(tmp_path):
    run, result = _replay(tmp_path, *SMOKE[:-2], "--max-participants", "0", "--time-limit", "3")
    assert run.returncode == 3  # benchmarks/did_work.py's NO_WORK_EXIT
    assert "no participant enrolled" in result["measured_nothing"]
    assert "measured nothing" in run.stderr
