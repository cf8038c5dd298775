"""Where a rehearsal's site runs: in the rehearsal's process, or served as a deployment is.

`EmbeddedSite` is Django's threaded server inside the rehearsal's process (the default: one
process, any database, nothing to install). `ServedSite` is gunicorn with the project's
`gunicorn.conf.py` and `manage.py run_worker` job workers (RQ where INTRUDER_JOB_BACKEND=rq),
each its own process on the rehearsal's clock (`clock.CLOCK_ENV`), so a rehearsal meets the
server, the worker processes and the database a study will meet (issue 49's benchmark runs
it on PostgreSQL and Redis). Both know their loopback URL once made (the sandbox Prolific
delivers its webhooks there) and answer `start(settings)`, `cpu_seconds()` and `stop()`;
`settings` are the ones the sandbox points the rehearsal's process at, which a served site's
processes read from their environment.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from intruder.rehearsal.clock import CLOCK_ENV
from intruder.rehearsal.processes import process_tree_cpu_s

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 120


class EmbeddedSite:
    """Django's threaded server in this process."""

    description = "Django's threaded server in the rehearsal's process"

    def __init__(self) -> None:
        from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

        class QuietHandler(WSGIRequestHandler):
            # Keep-alive answers go out in two writes (headers, body): with Nagle's algorithm
            # the body waits for the client's delayed ACK, 40 ms a response (measured: a page
            # 48 ms at p50 with it, 5.6 ms without). gunicorn sets TCP_NODELAY itself.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self, settings: dict[str, str]) -> None:
        """Serve; `settings` are this process's already."""
        from django.core.wsgi import get_wsgi_application

        self.server.set_app(get_wsgi_application())
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def cpu_seconds(self) -> float | None:
        """None: the site's CPU is this process's, apart from the crowd's threads."""
        return None

    def stop(self) -> None:
        self.server.shutdown()


class ServedSite:
    """gunicorn and job workers in their own processes, on the rehearsal's clock."""

    def __init__(self, clock_file: Path, job_workers: int) -> None:
        self.clock_file = clock_file
        self.job_workers = job_workers
        self.processes: list[subprocess.Popen] = []
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        # A throwaway site's own key (its sessions live as long as the rehearsal).
        self.secret_key = os.environ.get("DJANGO_SECRET_KEY") or secrets.token_urlsafe(50)
        backend = os.environ.get("INTRUDER_JOB_BACKEND", "db")
        self.description = (
            f"gunicorn (gunicorn.conf.py) and {job_workers} {backend} job worker(s), "
            "each its own process"
        )

    def _env(self, settings: dict[str, str], **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            **settings,
            CLOCK_ENV: str(self.clock_file),
            "DJANGO_SECRET_KEY": self.secret_key,
            **extra,
        }

    def _spawn(self, command: list[str], env: dict[str, str], log: str) -> subprocess.Popen:
        # The logs go to /tmp, not next to the results: they are for debugging a run.
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the process
            "w", prefix=f"rehearsal.{log}.", suffix=".log", delete=False
        )
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        self.processes.append(process)
        return process

    def start(self, settings: dict[str, str]) -> None:
        """Start gunicorn and the job workers with `settings` in their environment."""
        env = self._env(settings, GUNICORN_BIND=f"127.0.0.1:{self.port}", GUNICORN_ACCESSLOG="")
        command = [sys.executable, "-m", "gunicorn", "-c", str(REPO / "gunicorn.conf.py")]
        self.gunicorn = self._spawn([*command, "intruder.rehearsal.wsgi"], env, "gunicorn")
        for number in range(self.job_workers):
            worker = [sys.executable, "-m", "intruder.rehearsal.worker", "--poll", "0.5"]
            self._spawn(worker, self._env(settings), f"worker{number}")
        self._wait(self.url)

    def _wait(self, url: str) -> None:
        import httpx

        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.gunicorn.poll() is not None:
                raise SystemExit("rehearsal: gunicorn exited at start (its log is in /tmp)")
            try:
                httpx.get(f"{url}/prolific/webhook/", timeout=5)
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise SystemExit(f"rehearsal: gunicorn did not answer within {START_TIMEOUT_S} s")

    def cpu_seconds(self) -> float:
        """CPU seconds of gunicorn's master and workers and of the job workers, so far."""
        return sum(process_tree_cpu_s(p.pid) or 0.0 for p in self.processes)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
