"""Profile the intruder flow step by step: SQL queries and CPU per request, in process.

    python scripts/profile_intruder_steps.py --participants 10 --out /tmp/steps.json
    python scripts/profile_intruder_steps.py --cprofile item_page     # + top functions

Walks N participants through the whole intruder flow (entry, consent, instructions, every
item, debrief, finish) with Django's test client, one after the other, so that each number
is the cost of one request without contention: the queries it sends (counted with
CaptureQueriesContext, BEGIN/COMMIT included where the database reports them) and the CPU
time of this process (the app's share; the database server's CPU is not in it). Use it to
find where a step spends its time; latency under load comes from benchmarks/load_intruder.py.

Runs on a throwaway PostgreSQL cluster unless DATABASE_URL already names a PostgreSQL
database, like the load benchmark, whose study builder and form parsing it reuses.
"""

from __future__ import annotations

import argparse
import cProfile
import html
import io
import json
import os
import pstats
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import load_intruder  # noqa: E402 - the benchmark's study builder and form regexes


class StepRecorder:
    """Run requests as named steps, recording queries and CPU (and profiling one step)."""

    def __init__(self, profile_step: str = "") -> None:
        self.rows: dict[str, list[tuple[int, float]]] = defaultdict(list)
        self.profile_step = profile_step
        # CPU time, not wall time: waits on the database are the server's, not this process's.
        self.profiler = cProfile.Profile(time.process_time)

    def __call__(self, step: str, request: Callable[[], Any]) -> Any:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            started = time.process_time()
            if step == self.profile_step:
                self.profiler.enable()
            try:
                response = request()
            finally:
                if step == self.profile_step:
                    self.profiler.disable()
            cpu_ms = (time.process_time() - started) * 1000
        self.rows[step].append((len(queries.captured_queries), cpu_ms))
        return response

    def summary(self) -> dict[str, dict[str, float]]:
        out = {}
        for step, rows in self.rows.items():
            queries = [q for q, _ in rows]
            cpu = [c for _, c in rows]
            out[step] = {
                "count": len(rows),
                "queries_mean": round(statistics.mean(queries), 2),
                "queries_max": max(queries),
                "cpu_ms_median": round(statistics.median(cpu), 2),
                "cpu_ms_mean": round(statistics.mean(cpu), 2),
            }
        return out

    def profile_text(self, limit: int) -> str:
        stream = io.StringIO()
        pstats.Stats(self.profiler, stream=stream).sort_stats("cumulative").print_stats(limit)
        return stream.getvalue()


def form_of(page: Any) -> tuple[str, dict[str, str]]:
    """Return the action and hidden fields of the page's form (CSRF token included)."""
    text = page.content.decode()
    action = load_intruder.ACTION_RE.search(text)
    if not action:
        raise RuntimeError(f"no form on the page: {text[:200]!r}")
    fields = {}
    for tag in load_intruder.HIDDEN_INPUT_RE.findall(text[action.start() :]):
        name, value = load_intruder.NAME_RE.search(tag), load_intruder.VALUE_RE.search(tag)
        if name:
            fields[html.unescape(name.group(1))] = html.unescape(value.group(1) if value else "")
    return html.unescape(action.group(1)), fields


def walk_participant(record: StepRecorder, slug: str, index: int, items: int) -> None:
    """Take one participant through the flow as a browser would (cookies, CSRF)."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    query = f"PROLIFIC_PID=PROFILE{index:05d}&STUDY_ID=PROF&SESSION_ID=S{index}"
    home = record("entry", lambda: client.get(f"/s/{slug}/?{query}"))["Location"]
    page = record("consent_page", lambda: client.get(home))
    action, fields = form_of(page)
    record("consent_submit", lambda: client.post(action, {**fields, "decision": "agree"}))
    page = record("instructions_page", lambda: client.get(home))
    action, fields = form_of(page)
    record("instructions_submit", lambda: client.post(action, fields))
    for _ in range(items + 1):
        page = record("item_page", lambda: client.get(home))
        if b"/finish/" in page.content:
            # That request showed the debrief, not an item: file it as such.
            record.rows["debrief_page"].append(record.rows["item_page"].pop())
            break
        action, fields = form_of(page)
        answer = {"self_identified": "no", "other_knowledge": "Keeps bees.", "client_ms": "3000"}
        response = record("item_submit", partial(client.post, action, {**fields, **answer}))
        if response.status_code != 302:
            raise RuntimeError(f"item_submit: HTTP {response.status_code}")
    action, fields = form_of(page)
    response = record("finish", lambda: client.post(action, fields))
    if "app.prolific.com" not in response["Location"]:
        raise RuntimeError(f"finish redirected to {response['Location']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=10)
    parser.add_argument("--items", type=int, default=10, help="items per participant")
    parser.add_argument("--out", type=Path, help="write the per-step summary here (JSON)")
    parser.add_argument("--cprofile", default="", help="print the top functions of this step")
    parser.add_argument("--cprofile-lines", type=int, default=40)
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
    os.environ["DJANGO_DEBUG"] = "0"
    postgres = None
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        postgres = load_intruder.ThrowawayPostgres()
        os.environ["DATABASE_URL"] = postgres.start()
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        call_command("migrate", verbosity=0)
        cfg = load_intruder.parse_args(
            ["--out", os.devnull, "--participants", str(args.participants)]
        )
        cfg.items = args.items
        study = load_intruder.create_study(cfg, participants=args.participants, title="Profile")
        from django.urls import get_resolver

        get_resolver().url_patterns  # noqa: B018 - import every view now, as gunicorn does
        record = StepRecorder(profile_step=args.cprofile)
        for index in range(args.participants):
            walk_participant(record, study["slug"], index, args.items)
        summary = {
            "benchmark": "profile_intruder_steps",
            "participants": args.participants,
            "items_per_participant": args.items,
            "db": connection.vendor,
            "db_options": sorted(connection.settings_dict.get("OPTIONS", {})),
            "steps": record.summary(),
            "note": "in-process CPU of the app per request (database server CPU excluded), "
            "requests one at a time; CPU times are inflated when other jobs share the cores "
            "(see load_avg_1m), query counts are exact",
            "load_avg_1m": round(os.getloadavg()[0], 2),
        }
    finally:
        if postgres is not None:
            from django.db import connections

            connections.close_all()
            postgres.stop()
    for step, row in summary["steps"].items():
        print(
            f"{step:20s} n={row['count']:4d}  queries {row['queries_mean']:5.1f} "
            f"(max {row['queries_max']:2d})  cpu {row['cpu_ms_median']:6.2f} ms median"
        )
    if args.cprofile:
        print(record.profile_text(args.cprofile_lines))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
