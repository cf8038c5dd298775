"""The project installs from a built wheel and serves its pages from there.

The wheel is what a deployment installs; files that only the source checkout has (templates,
static files, the shipped model, the demo data) would pass every other test and fail there.
The wheel is built offline with the project venv's setuptools, installed without
dependencies into a folder put first on `sys.path` (the venv supplies Django and the rest),
and a child process started outside the checkout serves pages through Django's test client.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow
# The top-level packages of pyproject.toml's packages.find, and what a copy leaves out.
_FIND = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
PACKAGES = sorted({pattern.rstrip("*") for pattern in _FIND["find"]["include"]})
SKIP = ("__pycache__", "*.pyc")
# Offline: nothing is fetched, the venv's setuptools builds.
PIP = (sys.executable, "-m", "pip", "--quiet", "--no-input", "--disable-pip-version-check")

# Run in the child: import from the installed folder only, migrate a fresh SQLite database,
# then fetch a public page, a researcher page and a static file, and report what it saw.
SERVE_PAGES = """
import json, sys
import django
from django.conf import settings
django.setup()
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.test import Client
from django.test.utils import setup_test_environment

import anonymize, intruder
from anonymize.model_card import TEMPLATES as CARD_TEMPLATES
from anonymize.model import DEFAULT_MODEL_DIR

setup_test_environment()
call_command("migrate", verbosity=0)
client = Client()
login = client.get("/accounts/login/")
user = get_user_model().objects.create_user("wheel", password="wheel-pass-1234")
client.force_login(user)
studies = client.get("/", follow=True)
print(json.dumps({
    "intruder": intruder.__file__,
    "anonymize": anonymize.__file__,
    "login_status": login.status_code,
    "login_templates": [t.origin.name for t in login.templates if t.origin],
    "studies_status": studies.status_code,
    "studies_templates": [t.origin.name for t in studies.templates if t.origin],
    "static": finders.find("intruder/researcher.js"),
    "model_config": str(DEFAULT_MODEL_DIR / "config.json"),
    "model_config_exists": (DEFAULT_MODEL_DIR / "config.json").is_file(),
    "card_template_exists": (CARD_TEMPLATES / "model_card.md.j2").is_file(),
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the project's wheel once, offline, with the venv's own setuptools.

    The build runs on a copy of what the wheel is made from, so that setuptools' build/ and
    egg-info folders never land in the checkout.
    """
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for package in PACKAGES:
        shutil.copytree(REPO / package, source / package, ignore=shutil.ignore_patterns(*SKIP))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [*PIP, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(out), source],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (built,) = out.glob("intruder_platform-*.whl")
    return built


def test_wheel_ships_the_files_beside_the_code(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "intruder/templates/base.html",
        "intruder/templates/participant/judge.html",
        "intruder/static/intruder/researcher.js",
        "intruder/migrations/0001_initial.py",
        "intruder/demo/targets.jsonl",
        "anonymize/models/textwash-minilm/model.safetensors",
        "anonymize/templates/model_card.md.j2",
    ):
        assert expected in names, f"{expected} missing from {wheel.name}"
    assert not any(name.startswith(("tests/", "benchmarks/", "templates/")) for name in names)


def test_installed_wheel_serves_pages(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [*PIP, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "DJANGO_SETTINGS_MODULE": "intruder.settings",
        "INTRUDER_VAR_DIR": str(tmp_path / "var"),
    }
    env.pop("DATABASE_URL", None)
    child = subprocess.run(
        [sys.executable, "-c", SERVE_PAGES],
        cwd=tmp_path,  # not the checkout, so nothing imports from the source tree
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    for module in ("intruder", "anonymize"):
        assert Path(seen[module]).is_relative_to(site), seen[module]
    assert seen["login_status"] == 200
    assert seen["studies_status"] == 200
    for key in ("login_templates", "studies_templates"):
        assert seen[key], f"{key}: no template rendered"
        # The page's own template from the installed copy (Django's widgets from the venv).
        assert Path(seen[key][0]).is_relative_to(site), seen[key]
        assert not any(Path(name).is_relative_to(REPO / "intruder") for name in seen[key])
    assert seen["static"] and Path(seen["static"]).is_relative_to(site)
    assert seen["model_config_exists"] and Path(seen["model_config"]).is_relative_to(site)
    assert seen["card_template_exists"]
