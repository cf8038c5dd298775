"""Helpers for the threaded race tests (assignment, annotation): real PostgreSQL only."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from django.db import connection, connections

# SQLite serialises writers with a database-wide lock, so races only happen on PostgreSQL;
# there the constraints are tested directly instead.
POSTGRES_RACES = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="threaded race test needs PostgreSQL (set DATABASE_URL); SQLite locks writers",
    ),
]


def run_threads(target: Callable[..., Any], args_list: Sequence[tuple]) -> list[str]:
    """Start one thread per argument tuple at the same instant; return the errors raised."""
    barrier = threading.Barrier(len(args_list))
    errors: list[str] = []

    def wrapped(*args: Any) -> None:
        try:
            barrier.wait()
            target(*args)
        except Exception as error:  # collected and asserted on by the caller
            errors.append(repr(error))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=wrapped, args=args) for args in args_list]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    return errors
