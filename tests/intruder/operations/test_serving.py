"""The deployment pieces: gunicorn's config file and static files served by whitenoise."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from gunicorn.config import Config

REPO = Path(__file__).resolve().parents[3]


def test_gunicorn_conf_sets_only_settings_gunicorn_knows() -> None:
    namespace = runpy.run_path(str(REPO / "gunicorn.conf.py"))
    config = Config()
    settings = {k: v for k, v in namespace.items() if k in config.settings}

    for name, value in settings.items():
        config.set(name, value)

    assert config.workers >= 3
    assert config.worker_class_str == "gthread"
    assert 0 < config.timeout <= 60
    assert config.max_requests > 0


def test_gunicorn_conf_reads_overrides_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GUNICORN_WORKERS", "2")
    monkeypatch.setenv("GUNICORN_THREADS", "1")
    monkeypatch.setenv("GUNICORN_ACCESSLOG", "")

    namespace = runpy.run_path(str(REPO / "gunicorn.conf.py"))

    assert (namespace["workers"], namespace["worker_class"]) == (2, "sync")
    assert namespace["accesslog"] is None


def test_collected_static_files_are_served_by_whitenoise(settings, tmp_path: Path) -> None:
    settings.STATIC_ROOT = tmp_path
    call_command("collectstatic", "--noinput", verbosity=0)

    response = Client().get("/static/intruder/site.css")

    assert response.status_code == 200
    assert (tmp_path / "intruder" / "site.css.gz").exists()
    assert b".placeholder" in b"".join(response.streaming_content)
