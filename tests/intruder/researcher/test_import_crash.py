"""A killed import leaves nothing behind that blocks the same file (issue 22, finding 4).

`manage.py import_study_data` runs in a subprocess on a file database of its own and is
killed with SIGKILL once some batches are committed; the next import of the identical file
rolls the remains back and lands whole, and a worker's start cleans up as well.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
ROWS = 6000  # 12 write batches of 500


def _env(var: Path) -> dict[str, str]:
    env = dict(os.environ, INTRUDER_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="intruder.settings")
    env.pop("DATABASE_URL", None)  # a file SQLite database both processes can open
    return env


def _manage(var: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_env(var),
        capture_output=True,
        text=True,
        check=check,
        timeout=300,
    )


def _count(db: Path, table: str) -> int:
    with sqlite3.connect(db, timeout=30) as connection:
        return connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


@pytest.mark.slow
def test_an_import_killed_mid_way_is_rolled_back_and_the_same_file_imports_whole(tmp_path):
    var = tmp_path / "var"
    var.mkdir()
    _manage(var, "migrate", "--verbosity", "0")
    _manage(
        var,
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model as g;"
        "from intruder.models import Study;"
        "u = g().objects.create_user('owner', password='pw-12345678');"
        "Study.objects.create(slug='crash', title='Crash', kind='intruder', owner=u)",
    )
    data = tmp_path / "descriptions.jsonl"
    with data.open("w", encoding="utf-8") as sink:
        for n in range(ROWS):
            row = {
                "id": f"d{n}",
                "person": f"Person {n % 50}",
                "type": "fictitious",
                "text": f"Description {n} of a person who keeps bees near the sea. " * 4,
            }
            sink.write(json.dumps(row) + "\n")
    db = next(var.glob("*.sqlite3"))
    process = subprocess.Popen(
        [sys.executable, "manage.py", "import_study_data", "crash", str(data)],
        cwd=ROOT,
        env=_env(var),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            try:
                written = _count(db, "intruder_description")
            except sqlite3.OperationalError:
                written = 0
            if written >= 1000 or process.poll() is not None:
                break
            time.sleep(0.02)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    left = _count(db, "intruder_description")
    assert 0 < left < ROWS, f"the kill came at {left} rows; the test needs a partial import"
    assert _count(db, "intruder_importbatch") == 1

    again = _manage(var, "import_study_data", "crash", str(data), check=False)
    assert again.returncode == 0, again.stderr
    assert _count(db, "intruder_description") == ROWS
    assert _count(db, "intruder_importbatch") == 0


def test_a_crashed_import_marker_is_rolled_back_by_the_next_import_or_a_worker_start(db):
    from intruder.exchange.imports import import_study_data, imports_roll_back_abandoned
    from intruder.models import Description, ImportBatch
    from tests.intruder.factories import make_description, make_study

    study = make_study()
    left_over = make_description(study=study, external_id="d1")
    # A marker of a process that is gone (pid 0 on this host is never a live importer).
    import socket

    ImportBatch.objects.create(
        study=study,
        worker=f"{socket.gethostname()}:999999999",
        created={"targets": [left_over.target_id], "descriptions": [left_over.pk], "texts": []},
    )
    content = json.dumps(
        {"id": "d1", "person": "Ann Lee", "type": "fictitious", "text": "Ann keeps bees. " * 9}
    )
    report = import_study_data(study=study, content=content, fmt="jsonl")
    assert report.descriptions_created == 1
    assert list(Description.objects.values_list("external_id", flat=True)) == ["d1"]
    assert not ImportBatch.objects.exists()
    assert imports_roll_back_abandoned() == 0
