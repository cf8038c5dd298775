"""/api/docs/ and /api/redoc/ load Swagger UI and Redoc from our own static files, no CDN."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.test import Client

from tests.intruder.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("path", "bundle"),
    [("/api/docs/", "swagger-ui-bundle.js"), ("/api/redoc/", "redoc.standalone.js")],
)
def test_api_docs_load_their_scripts_from_the_sites_own_static_files(path, bundle):
    client = Client()
    client.force_login(make_user())
    html = client.get(path).content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+\.(?:js|css|png))"', html)
    assert any(asset.endswith(bundle) for asset in assets), assets
    for asset in assets:
        # Same site, under STATIC_URL, and shipped by an installed app (the sidecar package).
        assert not re.match(r"^(https?:)?//", asset), f"{asset} comes from another host"
        relative = asset.split(settings.STATIC_URL, 1)[1]
        assert finders.find(relative), f"{relative} is not a static file of this site"
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html
    assert "fonts.googleapis.com" not in html
