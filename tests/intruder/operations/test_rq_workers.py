"""Jobs through real RQ workers on a real Redis: folds shared, a killed worker's job resumed.

Every process here is a real one: `manage.py run_worker` with INTRUDER_JOB_BACKEND=rq on a
Redis server (scripts/test.sh starts a throwaway one and sets INTRUDER_TEST_REDIS_URL), and
a fresh PostgreSQL database of their own, which the workers and the test's helper processes
share. They run in the PostgreSQL pass only: RQ is the scale-out setup, documented with
PostgreSQL (docs/operations.md, "Beyond one machine"); on SQLite they took 40 CPU seconds
of the test command (issue 50) for a combination no deployment uses.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.redis_server import redis_url

# Slow (child processes, tens of seconds), but they depend on the database: the PostgreSQL
# pass of scripts/test.sh runs `redis` tests although it skips `slow` ones.
pytestmark = [pytest.mark.slow, pytest.mark.redis]

ROOT = Path(__file__).resolve().parents[3]
SCENARIO = "tests.intruder.operations.rq_scenario"
# Generous: two to four Django processes share two cores with the rest of the suite.
WAIT_S = 180.0


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """Yield the URL of a migrated database the worker processes share."""
    main = os.environ.get("DATABASE_URL", "")
    if not main.startswith(("postgres://", "postgresql://")):
        pytest.skip(
            "RQ workers run on PostgreSQL (set DATABASE_URL; scripts/test.sh's second pass)"
        )
    redis_url(need_rq=True)  # skip before paying for the migrations
    import psycopg

    name = f"intruder_rq_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(main, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    url = main.rsplit("/", 1)[0] + "/" + name
    env = {**os.environ, "DATABASE_URL": url}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"], env=env, cwd=ROOT, check=True, timeout=300
    )
    yield url
    with psycopg.connect(main, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def env(database: str) -> Iterator[dict[str, str]]:
    """Yield the environment of a worker host: this database, Redis, a queue of its own."""
    import redis

    url = redis_url(need_rq=True)
    queue = f"intruder-test-{uuid.uuid4().hex[:8]}"
    yield {
        **os.environ,
        "DATABASE_URL": database,
        "INTRUDER_JOB_BACKEND": "rq",
        "INTRUDER_REDIS_URL": url,
        "INTRUDER_RQ_QUEUE": queue,
        "PYTHONUNBUFFERED": "1",
    }
    connection = redis.Redis.from_url(url)
    for key in connection.scan_iter(f"*{queue}*"):
        connection.delete(key)


def scenario(env: dict[str, str], *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", SCENARIO, *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


class Workers:
    """Worker processes started by a test, stopped (killed if need be) at its end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.processes: list[subprocess.Popen] = []

    def start(self, env: dict[str, str], *args: str, **hooks: str) -> subprocess.Popen:
        log = (self.folder / f"worker{len(self.processes)}.log").open("w")
        process = subprocess.Popen(
            [sys.executable, "-m", SCENARIO, "worker", *args],
            env={**env, **hooks},
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.processes.append(process)
        return process

    def logs(self) -> str:
        return "\n".join(p.read_text()[-2000:] for p in sorted(self.folder.glob("worker*.log")))

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Workers]:
    started = Workers(tmp_path)
    yield started
    started.stop()


def wait_for(check: Callable[[], Any], what: str, workers: Workers) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}; worker logs:\n{workers.logs()}")


def finished(env: dict[str, str], run: int, workers: Workers) -> dict[str, Any]:
    """Return the run's state once its job succeeded; fail with the worker logs otherwise."""
    state = scenario(env, "wait", str(run), str(WAIT_S - 10))
    status = state["job"]["status"]
    if status != "succeeded":
        pytest.fail(f"run {run} ended {status}: {state['job']['error']}\n{workers.logs()}")
    return state


def comparable(state: dict[str, Any]) -> dict[str, Any]:
    """The run's outcome without row ids and worker names."""
    return {
        "progress": state["job"]["progress"],
        "result": state["job"]["result"],
        "rows": [row[:-1] for row in state["rows"]],
        "trir": state["trir"],
    }


def test_two_rq_workers_share_an_attack_run_by_fold_with_the_embedded_workers_outcome(
    env, workers
) -> None:
    # Each fit sleeps half a second: the second worker takes folds while the first runs one.
    for _ in range(2):
        workers.start(env, INTRUDER_TEST_FIT_DELAY="0.5")
    started = scenario(env, "start")
    shared = finished(env, started["run"], workers)

    folds = shared["folds"]
    assert [f["fold"] for f in folds] == [0, 1, 2, 3]
    assert all(f["status"] == "succeeded" for f in folds)
    assert len({f["worker"] for f in folds}) == 2, folds  # both workers ran folds
    keys = [tuple(row[:3]) for row in shared["rows"]]
    assert len(keys) == len(set(keys)) == 16 * 2 * 2  # texts x methods x attacks, once each
    done, total = shared["job"]["progress"]
    assert done == total == len(keys) == shared["job"]["result"]["results"]

    # The same run by the embedded worker (the db backend, one process).
    embedded_env = {**env, "INTRUDER_JOB_BACKEND": "db"}
    started = scenario(embedded_env, "start")
    subprocess.run(
        [sys.executable, "-m", SCENARIO, "worker", "--once", "--sweep-interval", "0"],
        env=embedded_env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=WAIT_S,
    )
    embedded = scenario(env, "state", str(started["run"]))
    assert embedded["job"]["status"] == "succeeded", embedded["job"]["error"]
    assert comparable(shared) == comparable(embedded)


def test_a_killed_rq_workers_run_is_retried_by_another_and_resumes_without_duplicates(
    env, workers, tmp_path
) -> None:
    blocked = tmp_path / "blocked"
    # The first worker stores folds 1 and 2 (two attacks each) and hangs in fold 3's first fit.
    first = workers.start(
        env, INTRUDER_TEST_BLOCK_AT_FIT="5", INTRUDER_TEST_BLOCKED_FILE=str(blocked)
    )
    started = scenario(env, "start")
    wait_for(blocked.exists, "the first worker to reach fold 3", workers)
    before = scenario(env, "state", str(started["run"]))
    assert before["job"]["status"] == "running" and before["job"]["attempts"] == 1
    stored_before = {tuple(row[:3]): row[-1] for row in before["rows"]}
    assert {row[3] for row in before["rows"]} == {0, 1}  # two folds stored
    first.kill()  # SIGKILL: no clean-up, the job rows stay "running"
    first.wait()

    # A fresh worker sees the stale heartbeats (after 3 s here), re-queues the jobs onto the
    # RQ queue and runs them, skipping what the dead worker stored.
    workers.start(env, INTRUDER_JOB_STALE_MINUTES="0.05")
    after = finished(env, started["run"], workers)

    assert after["job"]["attempts"] == 2
    keys = [tuple(row[:3]) for row in after["rows"]]
    assert len(keys) == len(set(keys)) == 16 * 2 * 2
    assert after["job"]["progress"] == [len(keys), len(keys)]
    # The rows stored before the kill are the same rows: resumed, not redone.
    ids_after = {tuple(row[:3]): row[-1] for row in after["rows"]}
    assert all(ids_after[key] == pk for key, pk in stored_before.items())
    assert all(f["status"] == "succeeded" for f in after["folds"])
