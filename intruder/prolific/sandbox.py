"""The Prolific sandbox: the project's fake Prolific on loopback, with the site pointed at it.

Prolific has no sandbox of its own, so a researcher rehearses here: `manage.py prolific
sandbox` starts the fake (`fake_server`) on a chosen loopback port, points this process's
settings at it (token, API base, workspace, webhook secret) and serves the site, whose
Prolific pages then say they talk to the sandbox. The fake's control page
(/sandbox/<secret>/) makes simulated participants start, return, time out and complete; each
change reaches the site as a signed webhook, as Prolific's would.

A rehearsal writes sandbox Prolific IDs, submissions and webhook effects into the studies it
touches, so it never runs on the configured database unless told that it is a throwaway:
on SQLite it makes its own copy (and says where), elsewhere it refuses.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.db import connections
from django.urls import reverse

from intruder.prolific.fake_server import FakeProlific


class SandboxRefused(Exception):
    """The sandbox would run on data it must not touch."""


def sandbox_start(*, port: int, site_url: str) -> FakeProlific:
    """Serve the fake on 127.0.0.1:`port` and point this process's settings at it."""
    fake = FakeProlific(deliver_to=site_url.rstrip("/") + reverse("prolific-webhook"))
    fake.serve(port)
    fake._secret_create({})
    settings.PROLIFIC_API_TOKEN = fake.token
    settings.PROLIFIC_API_URL = fake.base_url
    settings.PROLIFIC_WORKSPACE_ID = fake.workspace_id
    settings.PROLIFIC_WEBHOOK_SECRET = fake.webhook_secret
    return fake


def controls_url(fake: FakeProlific) -> str:
    """Return the address of the control page (its secret included)."""
    return fake.origin + fake.controls_path


def sandbox_database(*, throwaway: bool, copies_dir: Path) -> str:
    """Make sure the rehearsal cannot touch real data; return what it runs on, in words.

    `throwaway`: the operator says the configured database is one (used as it is).
    Otherwise a SQLite database is copied (the online backup API: a consistent copy while
    the site may be running) into `copies_dir` and this process switched to the copy before
    any request; any other database is refused.
    """
    database = settings.DATABASES["default"]
    if throwaway:
        return f"the configured database ({database['ENGINE'].rsplit('.', 1)[-1]}), as asked"
    if not database["ENGINE"].endswith("sqlite3"):
        raise SandboxRefused(
            "The sandbox writes sandbox Prolific IDs and webhook effects into the studies it "
            "touches, and it cannot copy this database. Point DATABASE_URL at a throwaway "
            "database and pass --throwaway-database, or run it on SQLite (it then works on "
            "a copy of its own)."
        )
    source = str(database["NAME"])
    if not Path(source).is_file():
        raise SandboxRefused(f"No database at {source}: run `manage.py migrate` first.")
    copies_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    copy = copies_dir / f"sandbox-{stamp}.sqlite3"
    connections["default"].close()
    with sqlite3.connect(source) as real, sqlite3.connect(copy) as target:
        real.backup(target)
    database["NAME"] = str(copy)  # the same dict the connection handler reads
    connections["default"].close()
    return f"a copy of {source} made now at {copy} (the real database is not touched)"
