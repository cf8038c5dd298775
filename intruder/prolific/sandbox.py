"""The Prolific sandbox: the project's fake Prolific on loopback, with the site pointed at it.

Prolific has no sandbox of its own, so a researcher rehearses here: `manage.py prolific
sandbox` starts the fake (`fake_server`) on a chosen loopback port, points this process's
settings at it (token, API base, workspace, webhook secret) and serves the site, whose
Prolific pages then say they talk to the sandbox. The fake's control page (/sandbox/) makes
simulated participants start, return, time out and complete; each change reaches the site
as a signed webhook, as Prolific's would.
"""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

from intruder.prolific.fake_server import SANDBOX_PREFIX, FakeProlific


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
    """Return the address of the sandbox's control page."""
    return fake.base_url.split("/api/", 1)[0] + SANDBOX_PREFIX
