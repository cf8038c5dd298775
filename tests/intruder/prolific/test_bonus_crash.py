"""Bonuses survive a crash between set-up and pay, and labels differ only in case (issue 37).

Prolific pays a set-up bonus once: the platform must never set up a second bonus for a
participant whose first one may have been paid. The first test kills the paying thread of
control in-process (an exception no handler catches, as a dying worker); the slow one kills
a real `manage.py` process with SIGKILL while Prolific is paying.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path

import pytest

from intruder.prolific.fake_server import FakeProlific
from intruder.prolific.models import ProlificAction
from intruder.prolific.services import bonuses_pay, study_draft_create
from tests.intruder.factories import make_study

ROOT = Path(__file__).resolve().parents[3]
AMOUNTS = {"PID1": Decimal("1.00"), "PID2": Decimal("0.50"), "PID3": Decimal("0.25")}


class Killed(BaseException):
    """The process dies: no `except Exception` sees it, every open transaction rolls back."""


@pytest.fixture
def study(prolific_settings, client_for, fake_prolific):
    study = make_study()
    study_draft_create(
        study=study,
        client=client_for(),
        entry_url="https://x.example/s/b/",
        places=5,
        reward_minor=100,
        estimated_minutes=5,
    )
    study.refresh_from_db()
    for pid in AMOUNTS:  # Prolific pays bonuses to the study's own submissions only
        fake_prolific.submission_start(study.prolific_study_id, pid)
    return study


@pytest.mark.django_db
def test_a_crash_during_the_pay_call_then_a_retry_pays_once(study, fake_prolific, client_for):
    client = client_for()
    real_pay = client.bonus_pay

    def pay_then_die(bonus_id: str) -> dict:
        real_pay(bonus_id)  # Prolific pays ...
        raise Killed  # ... and the web process dies before the answer is stored

    client.bonus_pay = pay_then_die
    with pytest.raises(Killed):
        bonuses_pay(study=study, client=client, amounts=AMOUNTS, label="identification")
    assert len(fake_prolific.payments) == 3
    # The set-up survived the crash: the retry pays that bonus, Prolific says it is paid.
    assert set(ProlificAction.objects.values_list("status", flat=True)) == {"set_up"}
    retried = bonuses_pay(study=study, client=client_for(), amounts=AMOUNTS, label="identification")
    assert {a.status for a in retried} == {ProlificAction.Status.SUCCEEDED}
    assert sorted(pid for _, pid, _ in fake_prolific.payments) == ["PID1", "PID2", "PID3"]
    assert len(fake_prolific.bonuses) == 1  # never set up again


@pytest.mark.django_db
def test_a_crash_during_set_up_leaves_nothing_paid_and_the_retry_pays_once(
    study, fake_prolific, client_for
):
    client = client_for()
    real_setup = client.bonus_setup

    def set_up_then_die(study_id, rows):
        real_setup(study_id, rows)  # Prolific holds an unpaid bonus; its id is lost
        raise Killed

    client.bonus_setup = set_up_then_die
    with pytest.raises(Killed):
        bonuses_pay(study=study, client=client, amounts=AMOUNTS, label="id")
    bonuses_pay(study=study, client=client_for(), amounts=AMOUNTS, label="id")
    assert len(fake_prolific.payments) == 3
    assert sum(b["paid"] for b in fake_prolific.bonuses.values()) == 1


@pytest.mark.django_db
def test_labels_differing_only_in_case_or_spacing_are_one_bonus(study, fake_prolific, client_for):
    client = client_for()
    bonuses_pay(study=study, client=client, amounts=AMOUNTS, label="race")
    for label in ("Race", " RACE ", "race"):
        again = bonuses_pay(study=study, client=client, amounts=AMOUNTS, label=label)
        assert {a.status for a in again} == {ProlificAction.Status.SUCCEEDED}
    assert len(fake_prolific.payments) == 3
    # A label of another name is another bonus.
    bonuses_pay(study=study, client=client, amounts={"PID1": Decimal("2")}, label="extra")
    assert len(fake_prolific.payments) == 4


@pytest.mark.django_db
def test_a_bonus_keyed_before_labels_were_folded_is_not_paid_again(
    study, fake_prolific, client_for
):
    """A row stored under the old case-sensitive key still counts for its label."""
    ProlificAction.objects.create(
        study=study,
        key=f"{study.pk}:bonus:Race:PID1",
        kind=ProlificAction.Kind.BONUS,
        prolific_pid="PID1",
        amount=Decimal("1.00"),
        reason="Race",
        status=ProlificAction.Status.SUCCEEDED,
    )
    bonuses_pay(study=study, client=client_for(), amounts={"PID1": Decimal("1")}, label="race")
    assert fake_prolific.payments == []


# --- a real process, killed with SIGKILL during the pay call ---------------------------------


def _env(var: Path, fake: FakeProlific) -> dict[str, str]:
    env = dict(
        os.environ,
        INTRUDER_VAR_DIR=str(var),
        DJANGO_SETTINGS_MODULE="intruder.settings",
        PROLIFIC_API_TOKEN=fake.token,
        PROLIFIC_API_URL=fake.base_url,
    )
    env.pop("DATABASE_URL", None)  # a file SQLite database both processes can open
    return env


PAY = (
    "from decimal import Decimal as D;"
    "from intruder.models import Study;"
    "from intruder.prolific.client import client_from_settings;"
    "from intruder.prolific.services import bonuses_pay;"
    "s = Study.objects.get(slug='crash');"
    "bonuses_pay(study=s, client=client_from_settings(), label='id',"
    " amounts={'PID1': D('1.00'), 'PID2': D('0.50'), 'PID3': D('0.25')})"
)


@pytest.mark.slow
def test_a_process_killed_while_prolific_pays_then_retried_pays_once(tmp_path):
    fake = FakeProlific()
    fake.serve()
    var = tmp_path / "var"
    var.mkdir()
    env = _env(var, fake)
    try:
        run = lambda *a: subprocess.run(  # noqa: E731
            [sys.executable, "manage.py", *a], cwd=ROOT, env=env, check=True, timeout=300
        )
        run("migrate", "--verbosity", "0")
        study_id = fake.study_add_foreign()
        fake.studies[study_id]["workspace"] = fake.workspace_id
        for pid in ("PID1", "PID2", "PID3"):
            fake.submission_start(study_id, pid)
        run(
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model as g;"
            "from intruder.models import Study;"
            "u = g().objects.create_user('owner', password='pw-12345678');"
            "Study.objects.create(slug='crash', title='C', owner=u,"
            f" prolific_study_id='{study_id}')",
        )
        paying, release = threading.Event(), threading.Event()
        real_pay = fake._bonus_pay

        def pay_and_hang(body, bonus_id):
            answer = real_pay(body, bonus_id)
            paying.set()
            release.wait(60)  # the answer never reaches the killed process
            return answer

        import intruder.prolific.fake_server as fake_module

        routes = fake_module.ROUTES
        fake_module.ROUTES = [
            (p, m, (lambda s, b, *g: pay_and_hang(b, *g)) if h is real_pay.__func__ else h)
            for p, m, h in routes
        ]
        try:
            process = subprocess.Popen(
                [sys.executable, "manage.py", "shell", "-c", PAY],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            assert paying.wait(120), "the pay call never came"
            os.kill(process.pid, signal.SIGKILL)
            process.wait(30)
            release.set()
        finally:
            fake_module.ROUTES = routes
        assert len(fake.payments) == 3
        db = next(var.glob("*.sqlite3"))
        with sqlite3.connect(db, timeout=30) as connection:
            refs = connection.execute(
                "SELECT status, prolific_ref FROM intruder_prolificaction"
            ).fetchall()
        assert {status for status, _ in refs} == {"set_up"} and all(ref for _, ref in refs)
        run("shell", "-c", PAY)  # the researcher clicks "Pay" again
        assert sorted(pid for _, pid, _ in fake.payments) == ["PID1", "PID2", "PID3"]
        assert len(fake.bonuses) == 1
        with sqlite3.connect(db, timeout=30) as connection:
            statuses = connection.execute("SELECT status FROM intruder_prolificaction").fetchall()
        assert {s for (s,) in statuses} == {"succeeded"}
    finally:
        fake.stop()
