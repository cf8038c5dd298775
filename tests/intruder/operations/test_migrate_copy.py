"""`manage.py migrate` starts a new SQLite database from the copy a first one left in
$INTRUDER_MIGRATION_CACHE, and leaves any other database to Django's migrate."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow


def migrate(database: Path, cache: Path, *args: str) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "INTRUDER_VAR_DIR": str(database.parent / "var"),
        "INTRUDER_MIGRATION_CACHE": str(cache),
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0", *args],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=300,
    )


def schema(database: Path) -> list[tuple]:
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        applied = db.execute("SELECT app, name FROM django_migrations ORDER BY id").fetchall()
    return [*rows, *applied]


def test_a_second_new_database_is_the_first_ones_copy_and_others_are_left_alone(tmp_path):
    cache = tmp_path / "cache"
    migrate(tmp_path / "first.sqlite3", cache)
    (copy,) = cache.glob("migrated-*.sqlite3")
    migrate(tmp_path / "second.sqlite3", cache)
    assert schema(tmp_path / "second.sqlite3") == schema(tmp_path / "first.sqlite3")
    assert schema(copy) == schema(tmp_path / "first.sqlite3")

    # A database that holds tables is Django's to migrate: the copy is never put over it.
    held = tmp_path / "held.sqlite3"
    with sqlite3.connect(tmp_path / "second.sqlite3") as source, sqlite3.connect(held) as db:
        source.backup(db)
        db.execute("CREATE TABLE notes (body TEXT)")
        db.execute("INSERT INTO notes VALUES ('kept')")
    migrate(held, tmp_path / "other-cache")
    with sqlite3.connect(held) as db:
        assert db.execute("SELECT body FROM notes").fetchall() == [("kept",)]
    assert not (tmp_path / "other-cache").exists()  # and no copy is made of it
