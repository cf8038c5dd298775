"""The sandbox cannot touch real data (issue 47): it rehearses on a copy of a SQLite
database, refuses any other database unless told it is a throwaway, starts a worker, takes
the demo login, and does not take the demo's port."""

from __future__ import annotations

import sqlite3
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.management import CommandError, call_command

from intruder.prolific import sandbox as sandbox_module
from intruder.prolific.sandbox import SandboxRefused, sandbox_database


@pytest.fixture
def real_sqlite(tmp_path, settings, monkeypatch):
    """A 'real' SQLite database file, and settings pointing at it (restored afterwards).

    The sandbox closes the default connection before switching it to the copy; here that
    would be the test database's (in memory: closing it would drop it), so it is left alone.
    """
    idle = SimpleNamespace(close=lambda: None)
    monkeypatch.setattr(sandbox_module, "connections", {"default": idle})
    real = tmp_path / "real.sqlite3"
    with sqlite3.connect(real) as db:
        db.execute("create table t (x)")
        db.execute("insert into t values ('real row')")
    database = settings.DATABASES["default"]
    saved = dict(database)
    database.update(ENGINE="django.db.backends.sqlite3", NAME=str(real))
    yield real
    database.clear()
    database.update(saved)


def test_a_sqlite_database_is_copied_and_the_copy_is_used(real_sqlite, tmp_path, settings):
    said = sandbox_database(throwaway=False, copies_dir=tmp_path / "copies")
    (copy,) = (tmp_path / "copies").glob("sandbox-*.sqlite3")
    assert settings.DATABASES["default"]["NAME"] == str(copy)
    assert str(real_sqlite) in said and str(copy) in said and "not touched" in said
    with sqlite3.connect(copy) as db:
        db.execute("insert into t values ('sandbox row')")
    with sqlite3.connect(real_sqlite) as db:
        assert db.execute("select x from t").fetchall() == [("real row",)]


def test_another_database_is_refused_unless_said_to_be_a_throwaway(settings, tmp_path):
    database = settings.DATABASES["default"]
    saved = dict(database)
    database["ENGINE"] = "django.db.backends.postgresql"
    try:
        with pytest.raises(SandboxRefused, match="--throwaway-database"):
            sandbox_database(throwaway=False, copies_dir=tmp_path)
        assert "as asked" in sandbox_database(throwaway=True, copies_dir=tmp_path)
    finally:
        database.clear()
        database.update(saved)


def test_a_missing_sqlite_file_is_refused_not_created(settings, tmp_path):
    database = settings.DATABASES["default"]
    saved = dict(database)
    database.update(ENGINE="django.db.backends.sqlite3", NAME=str(tmp_path / "none.sqlite3"))
    try:
        with pytest.raises(SandboxRefused, match="migrate"):
            sandbox_database(throwaway=False, copies_dir=tmp_path / "c")
    finally:
        database.clear()
        database.update(saved)
    assert not (tmp_path / "none.sqlite3").exists()


def test_the_command_refuses_a_postgresql_database_before_starting_anything(settings, monkeypatch):
    settings.DEBUG = False
    settings.SECRET_KEY = "a-real-secret-key-for-this-test-only-0123456789abcdef"
    started = []
    monkeypatch.setattr(sandbox_module, "sandbox_start", lambda **kw: started.append(kw))
    database = settings.DATABASES["default"]
    saved = dict(database)
    database["ENGINE"] = "django.db.backends.postgresql"
    try:
        with pytest.raises(CommandError, match="throwaway"):
            call_command("prolific", "sandbox")
    finally:
        database.clear()
        database.update(saved)
    assert started == []


def test_the_command_starts_a_worker_and_the_demo_login_on_its_copy(
    real_sqlite, settings, monkeypatch, tmp_path
):
    """Started as the docs say: a copy, the fake, a worker, the site on 8010 (not 8000)."""
    import django.core.management as management

    settings.DEBUG = True
    settings.VAR_DIR = tmp_path
    settings.INTRUDER_DEMO = False
    served, popen = [], []

    class FakeProcess:
        pid = 4242

        def __init__(self, args, **kwargs) -> None:
            popen.append((args, kwargs["env"]))

        def terminate(self) -> None:
            popen.append("terminated")

        def wait(self, timeout=None) -> int:
            return 0

    monkeypatch.setattr("subprocess.Popen", FakeProcess)
    run_command = management.call_command
    monkeypatch.setattr(
        management, "call_command", lambda name, addr, **kw: served.append((name, addr))
    )
    out = StringIO()
    fake_holder = []
    real_start = sandbox_module.sandbox_start

    def start(**kwargs):
        fake = real_start(**kwargs)
        fake_holder.append(fake)
        return fake

    monkeypatch.setattr(sandbox_module, "sandbox_start", start)
    try:
        run_command("prolific", "sandbox", "--port", "0", stdout=out)
    finally:
        for fake in fake_holder:
            fake.stop()
    text = out.getvalue()
    assert served == [("runserver", "127.0.0.1:8010")]
    (args, env), terminated = popen
    assert args[-1] == "run_worker" and terminated == "terminated"
    copy = settings.DATABASES["default"]["NAME"]
    assert env["DATABASE_URL"] == f"sqlite:///{copy}" and Path(copy).parent == tmp_path / "sandbox"
    assert settings.INTRUDER_DEMO is True  # the demo password logs in, in this process
    assert "a copy of" in text and "pid 4242" in text and "researcher / intruder-demo" in text
    assert fake_holder[0].control_secret in text
