"""The Prolific sandbox walked as docs/participants.md says, in a real browser (issue 47).

`DJANGO_DEBUG=1 python manage.py prolific sandbox --port … --site-port …` is started as a
process on a database holding the demo account, exactly as written (no INTRUDER_DEMO), and
walked at desktop and phone width: the demo login, the draft and its publication, the
control page (a participant starts, then enters the code without opening the study), and
the submission listed as "never started here". The real database is never written to.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser import screenshots

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SETUP = (
    "from django.contrib.auth import get_user_model;"
    "from intruder.models import PersonGroup;"
    "from tests.intruder.factories import make_study, make_texts;"
    "u = get_user_model().objects.create_superuser('researcher', password='intruder-demo');"
    "s = make_study(owner=u, slug='rehearsal', items_per_participant=1);"
    "make_texts(study=s, count=2, group=PersonGroup.FAMOUS)"
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def _reload_until(page, url: str, selector: str, text: str, *, within: float = 60) -> None:
    """Open `url` again until `selector` holds `text`, as a researcher would reload."""
    deadline = time.monotonic() + within
    while True:
        page.goto(url)
        if text in page.locator(selector).inner_text() or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    expect(page.locator(selector)).to_contain_text(text)


@pytest.fixture
def sandbox_process(tmp_path):
    """The sandbox started as the docs say, on a var dir with the demo account; its output."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "INTRUDER_DEMO")}
    env.update(INTRUDER_VAR_DIR=str(tmp_path / "var"), DJANGO_SETTINGS_MODULE="intruder.settings")
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v", "0"], cwd=ROOT, env=env, check=True, timeout=300)
    subprocess.run([*manage, "shell", "-c", SETUP], cwd=ROOT, env=env, check=True, timeout=120)
    port, site_port = _free_port(), _free_port()
    process = subprocess.Popen(
        [*manage, "prolific", "sandbox", "--port", str(port), "--site-port", str(site_port)],
        cwd=ROOT,
        env={**env, "DJANGO_DEBUG": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    banner, site = [], f"http://127.0.0.1:{site_port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any("worker:" in line for line in banner):
        banner.append(process.stdout.readline())
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{site}/accounts/login/", timeout=2)
            break
        except httpx.HTTPError:
            time.sleep(0.3)
    text = "".join(banner)
    worker = re.search(r"worker:\s+pid (\d+)", text)
    yield {"site": site, "banner": text, "db": tmp_path / "var" / "db.sqlite3"}
    process.send_signal(signal.SIGINT)  # Ctrl-C, as the banner says: stops all three
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
    if worker:
        try:
            os.kill(int(worker[1]), 0)
        except OSError:
            pass
        else:  # left running: a failure below, and never an orphan
            os.kill(int(worker[1]), signal.SIGTERM)
            pytest.fail("the sandbox's worker outlived it")


@pytest.mark.parametrize("width", [1280, 390])
def test_the_sandbox_walk_as_the_docs_say(chromium_browser, sandbox_process, width) -> None:
    site, banner = sandbox_process["site"], sandbox_process["banner"]
    assert "database:       a copy of" in banner and "worker:         pid" in banner
    controls = re.search(r"participants:\s+(\S+)", banner)[1]
    context = chromium_browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{site}/accounts/login/")
        page.fill("input[name=username]", "researcher")
        page.fill("input[name=password]", "intruder-demo")  # the demo login, as documented
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_url("**/r/**")
        page.goto(f"{site}/r/rehearsal/prolific/")
        expect(page.locator("[data-testid=prolific-sandbox]")).to_be_visible()
        expect(page.locator("label[for=id_reward_minor]")).to_contain_text("GBP pence")
        page.fill("input[name=name]", "Who is it?")
        page.fill("textarea[name=description]", "Read a short text and say whom you recognise.")
        page.fill("input[name=reward_minor]", "150")
        page.click('button:has-text("Preview the Prolific draft")')
        page.click("[data-testid=confirm-send]")
        page.click("button[value=publish]")
        page.click("[data-testid=confirm-send]")
        expect(page.locator("[data-testid=prolific-status]")).to_contain_text("ACTIVE")
        assert _overflow(page) <= 1
        # The control page, from its printed (secret) address: a participant starts, then
        # enters the code on Prolific without ever opening the study here.
        page.goto(controls)
        assert _overflow(page) <= 1
        page.click('button:has-text("A participant starts")')
        expect(page.locator("table")).to_contain_text("ACTIVE")
        assert _overflow(page) <= 1
        screenshots.keep(page, f"prolific_sandbox_controls_{width}")
        page.click('button:has-text("completes (enters the code)")')
        expect(page.locator("table")).to_contain_text("AWAITING REVIEW")
        # The code reaches the site as a webhook sent from its own thread, as Prolific's
        # does: the researcher reloads until it has arrived (CI once loaded the page first).
        _reload_until(page, f"{site}/r/rehearsal/prolific/", "#submissions", "never started here")
        assert _overflow(page) <= 1
        screenshots.keep(page, f"prolific_sandbox_site_{width}")
    finally:
        context.close()
    # The rehearsal ran on its copy: the real database holds no Prolific ID or submission.
    with sqlite3.connect(sandbox_process["db"]) as real:
        assert real.execute("select prolific_study_id from intruder_study").fetchall() == [("",)]
        assert real.execute("select count(*) from intruder_prolificsubmission").fetchone() == (0,)
