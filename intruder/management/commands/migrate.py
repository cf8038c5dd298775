"""Django's `migrate`, which starts a new SQLite database from a copy already migrated.

A new database runs every migration of the project: about 4 s of CPU on the 2-core machine,
paid by each rehearsal (a new database per run), each benchmark's throwaway database and
some twenty processes of the test command. Where the environment names a folder in
`INTRUDER_MIGRATION_CACHE`, a new SQLite file (missing, or without a table) is first filled
from the copy kept there for the same migration files and Django version; Django's migrate
then finds nothing left to apply. A new file that had to be migrated leaves its copy there.
Copies are made with SQLite's backup API (the database runs in WAL mode) and put in place
by a rename, so processes that migrate at once never read half a copy. PostgreSQL, SQLite
in memory, a database that holds tables and a partial migrate (an app label, --fake,
--plan, --check) are migrated as Django always does.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
from importlib import import_module
from pathlib import Path
from typing import Any

import django
from django.apps import apps
from django.core.management.commands.migrate import Command as DjangoMigrate
from django.db import connections

CACHE_ENV = "INTRUDER_MIGRATION_CACHE"


def migrations_key() -> str:
    """Return a digest of every installed app's migration files and Django's version."""
    digest = hashlib.sha256(django.get_version().encode())
    for config in sorted(apps.get_app_configs(), key=lambda c: c.name):
        try:
            package = import_module(f"{config.name}.migrations")
        except ImportError:
            continue
        folder = Path(package.__file__).parent
        for path in sorted(folder.glob("*.py")):
            digest.update(f"{config.name}/{path.name}".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:24]


def new_sqlite_file(alias: str) -> Path | None:
    """Return the database's file if it is a SQLite file that holds no table yet."""
    connection = connections[alias]
    name = str(connection.settings_dict.get("NAME") or "")
    if connection.vendor != "sqlite" or not name or "memory" in name:
        return None
    if Path(name).exists() and connection.introspection.table_names():
        return None
    return Path(name)


def _backup(source: Path, target: Path) -> None:
    """Copy one SQLite database into another, whole, through SQLite itself."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


class Command(DjangoMigrate):
    help = f"{DjangoMigrate.help} A new SQLite file starts from a copy in ${CACHE_ENV}."

    def handle(self, *args: Any, **options: Any) -> None:
        cache = os.environ.get("INTRUDER_MIGRATION_CACHE", "")  # CACHE_ENV
        whole = not (
            options.get("app_label")
            or options.get("fake")
            or options.get("fake_initial")
            or options.get("plan")
            or options.get("check_unapplied")
        )
        target = new_sqlite_file(options["database"]) if cache and whole else None
        if target is None:
            super().handle(*args, **options)
            return
        copy = Path(cache) / f"migrated-{migrations_key()}.sqlite3"
        connections[options["database"]].close()
        restored = copy.exists()
        if restored:
            _backup(copy, target)
        super().handle(*args, **options)
        if not restored:
            copy.parent.mkdir(parents=True, exist_ok=True)
            connections[options["database"]].close()
            handle, partial = tempfile.mkstemp(dir=copy.parent, suffix=".partial")
            os.close(handle)
            _backup(target, Path(partial))
            os.replace(partial, copy)
