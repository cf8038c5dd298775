"""Swagger UI and Redoc render with every other host unreachable (no CDN needed)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_api_docs_render_offline(page, live_server) -> None:
    get_user_model().objects.create_user("ada", "ada@example.org", "correct horse 42")
    blocked: list[str] = []

    def offline(route) -> None:
        blocked.append(route.request.url)
        route.abort()

    # Everything not served by this site fails, as it would on a machine without internet.
    page.route(re.compile(r"^(?!" + re.escape(live_server.url) + r").*"), offline)
    page.goto("/accounts/login/?next=/api/docs/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "correct horse 42")
    page.click("button[type=submit]")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Intruder platform API")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible()

    page.goto("/api/redoc/")
    expect(page.locator("h1").first).to_contain_text("Intruder platform API", timeout=30_000)
    # Only Redoc's "API docs by Redocly" badge image is fetched from elsewhere; offline it
    # hides itself. No script, stylesheet or font comes from another host.
    assert [url for url in blocked if not url.endswith("/redoc/logo-mini.svg")] == []
