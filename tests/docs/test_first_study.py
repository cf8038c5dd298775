"""The first-study walkthrough's commands run as printed, in order, on a study made as it says.

The `manage.py` lines are read from docs/first-study.md (output folders moved to a temporary
directory) and run in-process with `call_command`, so the walkthrough cannot drift from the
commands it shows.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from intruder.models import Description, Study, TargetPerson
from intruder.services.studies import study_create

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
WALKTHROUGH = REPO / "docs" / "first-study.md"


def walkthrough_commands() -> list[list[str]]:
    """Return the walkthrough's `python manage.py` lines as argv (after manage.py), in order."""
    commands = []
    for line in WALKTHROUGH.read_text(encoding="utf-8").splitlines():
        if line.startswith("python manage.py "):
            commands.append(shlex.split(line)[2:])
    return commands


def make_my_study() -> Study:
    """Create the study of step 2 as the walkthrough fills in the form."""
    owner = get_user_model().objects.create_user(username="researcher", password="pw-1-x")
    return study_create(
        owner=owner,
        slug="my-study",
        title="My study",
        kind=Study.Kind.INTRUDER,
        items_per_participant=1,
        judgments_per_text=3,
        consent_text="You agree to take part.",
        instructions_text="Play an adversary.",
        debrief_text="Thank you.",
        completion_code="MYSTUDY1",
    )


def run_walkthrough(tmp_path: Path, commands: list[list[str]]) -> None:
    for argv in commands:
        argv = [str(tmp_path / Path(a).name) if a.startswith("runs/") else a for a in argv]
        call_command(*argv)


def test_the_walkthrough_imports_exports_and_analyses_its_study(tmp_path: Path) -> None:
    commands = walkthrough_commands()
    assert [c[0] for c in commands] == [
        "import_study_data",
        "import_study_data",
        "export_study",
        "analyse_study",
        "risk_report",
    ]
    study = make_my_study()

    run_walkthrough(tmp_path, commands[:4])

    assert TargetPerson.objects.filter(study=study).count() == 3
    assert Description.objects.filter(study=study).count() == 4
    exported = tmp_path / "my-study-export" / "my-study_descriptions.jsonl"
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    assert sorted(r["external_id"] for r in rows) == ["ex-1", "ex-2", "ex-3", "ex-4"]
    summary = json.loads((tmp_path / "my-study-analysis" / "summary.json").read_text())
    assert summary["warnings"], "a study without judgments says what is missing"


@pytest.mark.slow
def test_the_walkthrough_risk_report_attacks_the_study(tmp_path: Path) -> None:
    commands = walkthrough_commands()
    make_my_study()
    run_walkthrough(tmp_path, commands[:2])

    run_walkthrough(tmp_path, commands[4:])

    report = tmp_path / "my-study-risk"
    summary = json.loads((report / "summary.json").read_text())
    assert summary["settings"]["attacks"] == ["tfidf", "bm25"]
    assert summary["settings"]["folds"] == 2
    clear = summary["trir"]["clear"]
    assert set(clear) >= {"tfidf", "bm25", "strongest", "pct_words_masked"}
    # The strongest adversary re-identifies at least what its best attack does.
    assert clear["strongest"] >= max(clear["tfidf"], clear["bm25"])
    assert (report / "report.html").is_file()
