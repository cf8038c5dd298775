"""Real-browser fixtures: Playwright's Python package driving Debian's /usr/bin/chromium.

The browser is never downloaded (`playwright install` is not used): it is the system
chromium, launched through `executable_path`. Where it is absent the tests skip with a
reason, except under CI (`INTRUDER_REQUIRE_BROWSER=1`, set by scripts/test.sh), where a
missing browser is a failure.
"""

import os
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.test.testcases import QuietWSGIRequestHandler

# Playwright's sync API runs an event loop in the test thread; Django then refuses ORM calls
# from that thread ("async unsafe") although they are plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

# The live server without Nagle's algorithm, as the rehearsal's embedded site
# (intruder/rehearsal/sites.py says why: 40 ms a keep-alive answer otherwise).
QuietWSGIRequestHandler.disable_nagle_algorithm = True

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


class InFlight:
    """The live server's WSGI app, counting the requests it is still answering.

    On SQLite the live server's request threads share the test thread's in-memory connection.
    A request still running when the test ends (a page's poll, a click's last fetch) then
    interleaves with the flush between tests, and its failed query can leave that one shared
    connection inside a broken transaction, failing every later test of the worker.

    Two requests at once share that connection too (a tab's leave beacon beside the answer,
    a second tab's page): their savepoints interleave ("no such savepoint", then every later
    query of the worker refused). On SQLite the requests are therefore answered one at a
    time, as its one writer would anyway; on PostgreSQL each has its own connection and they
    run at once.
    """

    def __init__(self, app: Callable) -> None:
        self.app = app
        self.running = 0
        self.holds = 0
        self.idle = threading.Condition()
        self.one_at_a_time = threading.Lock()

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        from django.db import connection

        with self.idle:
            self.idle.wait_for(lambda: self.holds == 0)
            self.running += 1
        try:
            if connection.vendor != "sqlite":
                return self.app(environ, start_response)
            with self.one_at_a_time:
                return self.app(environ, start_response)
        finally:
            with self.idle:
                self.running -= 1
                self.idle.notify_all()

    def wait_idle(self, timeout_s: float = ACTION_TIMEOUT_MS / 1000) -> None:
        """Return once no request is running; fail the test if one never ends."""
        with self.idle:
            if not self.idle.wait_for(lambda: self.running == 0, timeout=timeout_s):
                pytest.fail(f"{self.running} live-server request(s) still running at teardown")

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Hold the page's new requests (its polls) while the test itself writes.

        The test thread running a job while a poll reads the same tables fails on SQLite's
        shared in-memory database ("database table is locked").
        """
        with self.idle:
            self.holds += 1
        try:
            self.wait_idle()
            yield
        finally:
            with self.idle:
                self.holds -= 1
                self.idle.notify_all()

    @classmethod
    def around(cls, live_server) -> "InFlight":
        """Wrap the (session-wide) live server's app once and return the wrapper."""
        httpd = live_server.thread.httpd
        if not isinstance(httpd.get_app(), cls):
            httpd.set_app(cls(httpd.get_app()))
        return httpd.get_app()


@pytest.fixture
def live_requests(live_server) -> InFlight:
    """The live server's request counter: wait on it after closing a browser context."""
    return InFlight.around(live_server)


@pytest.fixture
def page(chromium_browser, live_server, live_requests) -> Iterator[object]:
    """Return a fresh page (own cookies) whose relative URLs resolve against live_server.

    At teardown the page is closed and its last requests are waited for, so none of them
    runs into the next test's database.
    """
    context = chromium_browser.new_context(base_url=live_server.url)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()
    yield page
    context.close()
    live_requests.wait_idle()
