"""The README's library recipes run as printed, on the example files, and give what they promise.

The commands are read from README.md itself (only the output folder is moved to a temporary
directory), so a recipe that stops working fails here, not in a reader's terminal.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def readme_command(prefix: str) -> list[str]:
    """Return the README's fenced command that starts with `prefix`, as argv."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, f"expected one README command starting {prefix!r}, found {lines}"
    return shlex.split(lines[0])


def run(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    """Run a `python ...` command with this interpreter, outputs under tmp_path."""
    argv = [sys.executable, *argv[1:]]
    argv = [str(tmp_path / Path(a).name) if a.startswith("runs/") else a for a in argv]
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow
def test_readme_anonymize_recipe_masks_the_example_names(tmp_path: Path) -> None:
    done = run(readme_command("python -m anonymize run"), tmp_path)

    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "anonymized.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["ex-1", "ex-2", "ex-3", "ex-4"]
    first = rows[0]
    assert "Odalys" not in first["anonymized"] and "Brennecke" not in first["anonymized"]
    assert re.search(r"PERSON_(FIRSTNAME|LASTNAME)_1", first["anonymized"])
    assert {"start", "end", "category"} <= set(first["spans"][0])


@pytest.mark.slow
def test_readme_attack_recipe_reports_trir_per_column_and_the_strongest(tmp_path: Path) -> None:
    done = run(readme_command("python -m attacks run"), tmp_path)

    assert done.returncode == 0, done.stderr[-2000:]
    final = json.loads((tmp_path / "example-attack" / "final.json").read_text())
    by_attack = final["trir_by_attack"]
    assert set(by_attack) == {"tfidf", "bm25", "strongest"}
    # Three people with their names in the clear text: every attack finds all three.
    assert by_attack["strongest"]["clear"] == 100.0
    assert set(by_attack["tfidf"]) == {"clear", "placeholders"}
