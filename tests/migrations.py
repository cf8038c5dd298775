"""Run a migration test from an earlier state of the schema, and leave the latest behind."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@contextmanager
def at_migration(before: list[tuple[str, str]]) -> Iterator[Any]:
    """Migrate back to `before`, yield its historical apps, and migrate to the latest after,
    however the test ends (a later test must find the schema it expects)."""
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        MigrationExecutor(connection).migrate(before)
        yield MigrationExecutor(connection).loader.project_state(before).apps
    finally:
        MigrationExecutor(connection).migrate(latest)


def migrate_to(target: list[tuple[str, str]]) -> Any:
    """Migrate to `target`; return its historical apps."""
    MigrationExecutor(connection).migrate(target)
    return MigrationExecutor(connection).loader.project_state(target).apps


def old_study(apps: Any, slug: str, **fields: Any) -> Any:
    """Create an intruder study (and its owner, once) in the historical `apps`: the rows a
    migration test starts from, at that migration's schema."""
    owner, _ = apps.get_model("auth", "User").objects.get_or_create(
        username="o", defaults={"password": "x"}
    )
    return apps.get_model("intruder", "Study").objects.create(
        slug=slug, title=slug, kind="intruder", owner=owner, **fields
    )
