"""404, 403 and 500 pages come in the site's style and say what to do next."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory
from django.urls import path
from django.views.defaults import server_error

from tests.intruder.factories import make_member, make_study

pytestmark = pytest.mark.django_db


def test_unknown_address_gets_the_sites_404_page():
    response = Client().get("/p/no-such-token/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "<h1>Page not found</h1>" in page
    assert "intruder/site.css" in page
    assert "open the study again from Prolific" in page


def test_viewer_who_tries_to_edit_gets_the_sites_403_page():
    study = make_study()
    client = Client()
    client.force_login(make_member(study=study))
    response = client.get(f"/r/{study.slug}/edit/")
    assert response.status_code == 403
    assert "<h1>Not allowed</h1>" in response.content.decode()


def test_server_error_page_renders_without_a_request_context():
    # Django renders 500.html with an empty context: the template must not need one.
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    page = response.content.decode()
    assert "<h1>Something went wrong</h1>" in page and "intruder/site.css" in page


def crashing_view(request, token):
    raise RuntimeError(f"boom while serving /p/{token}/judge/")


# This module is the URLconf of the logging test: one participant-like URL that crashes.
urlpatterns = [path("p/<str:token>/", crashing_view)]


def test_a_server_error_leaves_its_traceback_in_the_log_with_tokens_redacted(settings):
    import logging

    settings.DEBUG = False
    settings.ROOT_URLCONF = __name__
    token = "tok-secret-0123456789"
    handler = next(h for h in logging.getLogger("django").handlers if h.name == "file")
    log = settings.INTRUDER_LOG_DIR / "intruder.log"
    before = log.read_text() if log.exists() else ""
    response = Client(raise_request_exception=False).get(f"/p/{token}/")
    assert response.status_code == 500
    handler.flush()
    written = log.read_text()[len(before) :]
    assert "Traceback (most recent call last)" in written
    assert "RuntimeError: boom while serving /p/[redacted]/judge/" in written
    assert "Internal Server Error: /p/[redacted]/" in written
    assert token not in written
