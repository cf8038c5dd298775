"""Real-browser fixtures: Playwright's Python package driving Debian's /usr/bin/chromium.

The browser is never downloaded (`playwright install` is not used): it is the system
chromium, launched through `executable_path`. Where it is absent the tests skip with a
reason, except under CI (`INTRUDER_REQUIRE_BROWSER=1`, set by scripts/test.sh), where a
missing browser is a failure.
"""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in the test thread; Django then refuses ORM calls
# from that thread ("async unsafe") although they are plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("INTRUDER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Generous per-action timeout: these tests check behaviour, not speed (benchmarks/ time the
# pages), and scripts/test.sh runs two test workers on 2 cores beside the live server.
ACTION_TIMEOUT_MS = 60_000


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under tests/browser as `browser`."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


def _unavailable(reason: str) -> None:
    if os.environ.get("INTRUDER_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests required but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium_browser() -> Iterator[object]:
    """Launch Debian chromium once per test session (headless, no sandbox, no network)."""
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        _unavailable(f"chromium not found at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
    except Exception as exc:
        playwright.stop()
        _unavailable(f"chromium failed to launch: {exc}")
    yield browser
    browser.close()
    playwright.stop()


@pytest.fixture
def page(chromium_browser, live_server) -> Iterator[object]:
    """Return a fresh page (own cookies) whose relative URLs resolve against live_server."""
    context = chromium_browser.new_context(base_url=live_server.url)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()
    yield page
    context.close()
