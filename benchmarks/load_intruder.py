"""Load benchmark: N simulated intruders do the whole flow at once against gunicorn + PostgreSQL.

    python benchmarks/load_intruder.py --participants 100 --out benchmarks/results/x.json

Without --url it starts everything itself on loopback: a throwaway PostgreSQL cluster (unless
DATABASE_URL already points at PostgreSQL), migrations, a study with enough released texts,
and gunicorn with gunicorn.conf.py. With --url it drives a running server; DATABASE_URL must
then name that server's database (setup and the final checks use the ORM).

Each participant behaves like a browser: follows the Prolific entry link, keeps cookies,
sends the CSRF token of each form, and walks consent -> instructions -> every item ->
debrief -> completion redirect. Every request is one timed step; loops are bounded (each
participant has a request budget and every request a timeout). "Busy" answers (503) are
counted as errors and retried after a pause, so the flow can still finish.

Afterwards the database is checked: no text holds more active+completed assignments than
`judgments_per_text`, every completed assignment has exactly one judgment, judgments per
participant equal their completed items, and every judgment a client saw accepted is stored.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import html
import json
import math
import os
import platform
import random
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from intruder.rehearsal.processes import CLOCK_TICKS, process_tree_cpu_s  # noqa: E402

HIDDEN_INPUT_RE = re.compile(r'<input[^>]*type="hidden"[^>]*>')
NAME_RE = re.compile(r'name="([^"]+)"')
VALUE_RE = re.compile(r'value="([^"]*)"')
ACTION_RE = re.compile(r'<form method="post" action="([^"]+)"')
ASSIGNMENT_RE = re.compile(r'name="assignment_id" value="(\d+)"')
GROUPS = ("famous", "semifamous", "fictitious")


@dataclass
class Config:
    participants: int
    out: Path
    url: str
    items: int
    judgments_per_text: int
    text_margin: float
    think_ms: tuple[int, int]
    ramp_s: float
    request_timeout_s: float
    workers: int | None
    threads: int | None
    seed: int
    warmup: int
    pg_statements: int = 0
    analyze: bool = False
    note: str = ""


@dataclass
class Outcome:
    """What one simulated participant did and saw."""

    pid: str
    completed: bool = False
    accepted_judgments: int = 0
    requests: int = 0
    errors: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- CPU accounting


def machine_busy_cpu_s() -> float:
    """Return the CPU seconds all cores spent busy since boot (every tenant of the machine)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / CLOCK_TICKS


def self_cpu_s() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class CpuMeter:
    """CPU seconds spent during a phase by the load generator, gunicorn, PostgreSQL and all."""

    def __init__(self, gunicorn_pid: int | None, postgres_pid: int | None) -> None:
        self.pids = {"gunicorn": gunicorn_pid, "postgres": postgres_pid}
        self.start = self._sample()

    def _sample(self) -> dict[str, float | None]:
        sample = {name: process_tree_cpu_s(pid) for name, pid in self.pids.items()}
        sample["load_generator"] = self_cpu_s()
        sample["machine_busy"] = machine_busy_cpu_s()
        return sample

    def stop(self, *, requests: int, wall_s: float) -> dict[str, Any]:
        end = self._sample()
        used = {
            name: round(end[name] - self.start[name], 2)
            for name in end
            if end[name] is not None and self.start[name] is not None
        }
        ours = sum(used.get(k, 0.0) for k in ("gunicorn", "postgres", "load_generator"))
        used["other_tenants"] = round(max(0.0, used["machine_busy"] - ours), 2)
        server = used.get("gunicorn", 0.0) + used.get("postgres", 0.0)
        cores = os.cpu_count() or 1
        return {
            "cpu_s": used,
            "server_cpu_ms_per_request": round(1000 * server / requests, 2) if requests else None,
            "load_generator_share_of_machine_busy": round(
                used["load_generator"] / used["machine_busy"], 3
            )
            if used.get("machine_busy")
            else None,
            "machine_utilisation": round(used["machine_busy"] / (wall_s * cores), 3),
        }


# --------------------------------------------------------------------------- servers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ThrowawayPostgres:
    """A PostgreSQL cluster in a temp dir on a loopback port, removed on stop()."""

    def __init__(self, *, statements: bool = False, database: str = "intruder_bench") -> None:
        self.statements = statements
        self.database = database
        bindirs = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: p.parent.name)
        if not bindirs:
            raise SystemExit("PostgreSQL server binaries not found (apt-get install postgresql)")
        self.bindir = bindirs[-1]
        self.dir = Path(tempfile.mkdtemp(prefix="intruder-bench-pg."))
        self.port = free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # initdb refuses root: run the cluster as the postgres user
            shutil.chown(self.dir, user="postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]

    def run(self, *args: str) -> None:
        subprocess.run([*self.as_user, *args], check=True, capture_output=True, text=True)

    def start(self) -> str:
        data = self.dir / "data"
        self.run(str(self.bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust")
        self.run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(self.dir / "server.log"),
            "-w",
            "start",
            "-o",
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=200"
            + (" -c shared_preload_libraries=pg_stat_statements" if self.statements else ""),
        )
        self.run(
            str(self.bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U",
            "postgres", self.database,
        )  # fmt: skip
        return f"postgres://postgres@127.0.0.1:{self.port}/{self.database}"

    def postmaster_pid(self) -> int | None:
        pidfile = self.dir / "data" / "postmaster.pid"
        with contextlib.suppress(OSError, ValueError):
            return int(pidfile.read_text().split()[0])
        return None

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.run(
                str(self.bindir / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "fast", "stop"
            )
        shutil.rmtree(self.dir, ignore_errors=True)


class ThrowawayRedis:
    """A redis-server on a loopback port, in memory only, stopped by stop()."""

    def start(self) -> str:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(binary).exists():
            raise SystemExit("redis-server not found (apt-get install redis-server)")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        url = f"redis://127.0.0.1:{self.port}/0"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=1),
            ):
                return url
            time.sleep(0.1)
        raise SystemExit("redis-server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def start_gunicorn(cfg: Config, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**env, "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_ACCESSLOG": ""}
    if cfg.workers:
        env["GUNICORN_WORKERS"] = str(cfg.workers)
    if cfg.threads:
        env["GUNICORN_THREADS"] = str(cfg.threads)
    # The server log goes to /tmp, not next to the results: it is for debugging a run.
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the server
        "w", prefix="load_intruder.gunicorn.", suffix=".log", delete=False
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(REPO / "gunicorn.conf.py"), "intruder.wsgi"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited; see {log.name}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    raise SystemExit("gunicorn did not start listening within 60 s")


def stop_gunicorn(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


# --------------------------------------------------------------------------- study data


def create_study(cfg: Config, *, participants: int, title: str) -> dict[str, Any]:
    """Create an intruder study with enough released texts for every participant's items."""
    from django.contrib.auth import get_user_model

    from intruder.models import AnonymizedText, Description, Study, TargetPerson

    slots_needed = participants * cfg.items
    n_texts = math.ceil(cfg.text_margin * slots_needed / cfg.judgments_per_text)
    per_group = math.ceil(n_texts / len(GROUPS))
    owner, _ = get_user_model().objects.get_or_create(username="load-bench")
    study = Study.objects.create(
        slug=f"load-{int(time.time())}-{random.randrange(10**6)}",
        title=title,
        kind=Study.Kind.INTRUDER,
        owner=owner,
        items_per_participant=cfg.items,
        judgments_per_text=cfg.judgments_per_text,
        consent_text="Benchmark consent.",
        completion_code="LOADBENCH",
        is_open=True,  # studies start closed (issue 26)
    )
    targets = TargetPerson.objects.bulk_create(
        TargetPerson(study=study, key=f"{group}_{i}", name=f"Person {group} {i}", group=group)
        for group in GROUPS
        for i in range(per_group)
    )
    descriptions = Description.objects.bulk_create(
        Description(
            study=study,
            target=target,
            external_id=target.key,
            text=f"{target.name} is a made-up person who keeps bees and sails. " * 6,
        )
        for target in targets
    )
    AnonymizedText.objects.bulk_create(
        AnonymizedText(
            description=d,
            method="load-bench",
            text=d.text.replace(d.target.name, "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1"),
            status=AnonymizedText.Status.RELEASED,
        )
        for d in descriptions
    )
    return {"slug": study.slug, "id": study.pk, "texts": len(descriptions)}


def statements_reset() -> None:
    """Create pg_stat_statements (once) and zero its counters before the measured phase."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        cursor.execute("SELECT pg_stat_statements_reset()")
    connection.close()


def statements_top(n: int) -> dict[str, Any]:
    """Return the totals of pg_stat_statements and its `n` statements with the most time."""
    from django.db import connection

    columns = "calls, total_exec_time, rows, shared_blks_hit + shared_blks_read"
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), sum(calls), sum(total_exec_time) FROM pg_stat_statements")
        kinds, calls, total_ms = cursor.fetchone()
        cursor.execute(
            f"SELECT {columns}, query FROM pg_stat_statements "
            "WHERE query NOT LIKE '%%pg_stat_statements%%' "
            "ORDER BY total_exec_time DESC LIMIT %s",
            [n],
        )
        top = [
            {
                "calls": calls_,
                "total_ms": round(total, 1),
                "mean_ms": round(total / calls_, 3) if calls_ else None,
                "rows": rows,
                "blocks": blocks,
                "query": " ".join(query.split())[:600],
            }
            for calls_, total, rows, blocks, query in cursor.fetchall()
        ]
    connection.close()
    return {
        "statements": kinds,
        "calls": int(calls or 0),
        "total_exec_ms": round(float(total_ms or 0), 1),
        "top": top,
    }


# --------------------------------------------------------------------------- participants


class Recorder:
    def __init__(self) -> None:
        self.latencies: dict[str, list[float]] = defaultdict(list)

    def summary(self) -> dict[str, dict[str, float]]:
        out = {}
        for step, values in sorted(self.latencies.items()):
            ordered = sorted(values)
            p95_index = min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)
            out[step] = {
                "count": len(ordered),
                "p50_ms": round(statistics.median(ordered), 1),
                "p95_ms": round(ordered[p95_index], 1),
                "max_ms": round(ordered[-1], 1),
            }
        return out


class Participant:
    """One simulated intruder with its own cookie jar (like one browser)."""

    def __init__(self, cfg: Config, base: str, slug: str, index: int, rec: Recorder) -> None:
        import httpx

        self.cfg = cfg
        self.base = base
        self.slug = slug
        self.rec = rec
        self.rng = random.Random(cfg.seed * 100_003 + index)
        self.outcome = Outcome(pid=f"{index:04d}{self.rng.getrandbits(80):020x}")
        self.client = httpx.AsyncClient(
            base_url=base,
            timeout=cfg.request_timeout_s,
            follow_redirects=False,
            headers={"User-Agent": "intruder-load-benchmark"},
        )
        self.budget = 4 * cfg.items + 40  # bounded: a participant never loops forever

    async def request(self, step: str, method: str, url: str, **kwargs: Any) -> Any:
        if self.outcome.requests >= self.budget:
            raise RuntimeError("request budget exhausted")
        self.outcome.requests += 1
        started = time.perf_counter()
        try:
            response = await self.client.request(method, url, **kwargs)
        except Exception as exc:
            self.outcome.errors.append(f"{step}: {type(exc).__name__}")
            raise
        finally:
            self.rec.latencies[step].append((time.perf_counter() - started) * 1000)
        return response

    async def think(self) -> None:
        low, high = self.cfg.think_ms
        if high > 0:
            await asyncio.sleep(self.rng.uniform(low, high) / 1000)

    async def get_page(self, step: str, url: str) -> Any:
        """GET a participant page, retrying 'Busy' (503) a bounded number of times."""
        for attempt in range(5):
            response = await self.request(step, "GET", url)
            if response.status_code == 200:
                return response
            self.outcome.errors.append(f"{step}: HTTP {response.status_code}")
            if response.status_code != 503:
                raise RuntimeError(f"{step}: HTTP {response.status_code}")
            await asyncio.sleep(0.5 * (attempt + 1))
        raise RuntimeError(f"{step}: still busy after 5 attempts")

    async def post_form(self, step: str, page: Any, data: dict[str, str]) -> str:
        """Submit the page's form as a browser would (hidden fields, CSRF token, Origin)."""
        action = ACTION_RE.search(page.text)
        if not action:
            raise RuntimeError(f"{step}: no form on the page")
        fields = {}
        for tag in HIDDEN_INPUT_RE.findall(page.text[action.start() :]):
            name, value = NAME_RE.search(tag), VALUE_RE.search(tag)
            if name:
                fields[html.unescape(name.group(1))] = html.unescape(
                    value.group(1) if value else ""
                )
        if "csrfmiddlewaretoken" not in fields:
            raise RuntimeError(f"{step}: form without a CSRF token")
        response = await self.request(
            step,
            "POST",
            html.unescape(action.group(1)),
            data={**fields, **data},
            headers={"Origin": self.base, "Referer": str(page.url)},
        )
        if response.status_code != 302:
            raise RuntimeError(f"{step}: HTTP {response.status_code}")
        return response.headers["location"]

    async def run(self) -> Outcome:
        try:
            await asyncio.sleep(self.rng.uniform(0, self.cfg.ramp_s))
            query = f"PROLIFIC_PID={self.outcome.pid}&STUDY_ID=BENCH&SESSION_ID=S{self.outcome.pid}"
            entry = await self.request("entry", "GET", f"/s/{self.slug}/?{query}")
            if entry.status_code != 302:
                raise RuntimeError(f"entry: HTTP {entry.status_code}")
            home = entry.headers["location"]
            page = await self.get_page("consent_page", home)
            await self.think()
            await self.post_form("consent_submit", page, {"decision": "agree"})
            page = await self.get_page("instructions_page", home)
            await self.think()
            await self.post_form("instructions_submit", page, {})
            for _ in range(self.cfg.items + 2):
                page = await self.get_page("item_page", home)
                if "/finish/" in page.text:
                    break
                if not ASSIGNMENT_RE.search(page.text):
                    raise RuntimeError("item_page: neither an item nor the debrief")
                await self.think()
                await self.post_form("item_submit", page, self.answer())
                self.outcome.accepted_judgments += 1
            else:
                raise RuntimeError("more items than the study has")
            # The last "item_page" request turned out to show the debrief: file it as such.
            self.rec.latencies["debrief_page"].append(self.rec.latencies["item_page"].pop())
            await self.think()
            location = await self.post_form("finish", page, {})
            if "app.prolific.com/submissions/complete?cc=" not in location:
                raise RuntimeError(f"finish: redirected to {location}")
            self.outcome.completed = True
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            if not self.outcome.errors or self.outcome.errors[-1] not in message:
                self.outcome.errors.append(message)
        finally:
            await self.client.aclose()
        return self.outcome

    def answer(self) -> dict[str, str]:
        if self.rng.random() < 0.3:
            return {
                "self_identified": "yes",
                "guessed_name": "Person famous 1",
                "revealing_text": "the bees",
                "client_ms": str(self.rng.randrange(2000, 30000)),
            }
        return {
            "self_identified": "no",
            "other_knowledge": "Keeps bees and sails.",
            "client_ms": str(self.rng.randrange(2000, 30000)),
        }


async def drive(
    cfg: Config, base: str, slug: str, participants: int
) -> tuple[list[Outcome], Recorder, float]:
    rec = Recorder()
    people = [Participant(cfg, base, slug, i, rec) for i in range(participants)]
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(p.run() for p in people))
    return list(outcomes), rec, time.perf_counter() - started


# --------------------------------------------------------------------------- checks


def check_invariants(study_id: int, outcomes: list[Outcome]) -> tuple[list[str], list[str]]:
    """Return the invariant violations found in the DB, and the short completions.

    A short completion (a participant sent to the debrief with fewer items than the study
    asks for, because no unseen text of their group had a free slot) breaks no invariant,
    but it is reported: it shows how the pool ran out under this load.
    """
    from django.db import connections
    from django.db.models import Count, Q

    from intruder.models import AnonymizedText, Assignment, Judgment, Participant, Study

    connections.close_all()
    study = Study.objects.get(pk=study_id)
    held = Q(assignments__status__in=[Assignment.Status.ACTIVE, Assignment.Status.COMPLETED])
    violations = [
        f"text {t.pk} over-assigned: {t.n} active+completed > {study.judgments_per_text}"
        for t in AnonymizedText.objects.filter(description__study=study)
        .annotate(n=Count("assignments", filter=held))
        .filter(n__gt=study.judgments_per_text)
    ]
    completed = Assignment.objects.filter(
        participant__study=study, status=Assignment.Status.COMPLETED
    )
    violations += [
        f"completed assignment {a.pk} has {a.n} judgments"
        for a in completed.annotate(n=Count("judgment")).exclude(n=1)
    ]
    violations += [
        f"judgment {j.pk} belongs to a {j.assignment.status} assignment"
        for j in Judgment.objects.filter(participant__study=study)
        .exclude(assignment__status=Assignment.Status.COMPLETED)
        .select_related("assignment")
    ]
    violations += [
        f"judgment {j.pk} disagrees with its assignment on participant or text"
        for j in Judgment.objects.filter(participant__study=study).select_related("assignment")
        if (j.participant_id, j.text_id) != (j.assignment.participant_id, j.assignment.text_id)
    ]
    by_pid = {o.pid: o for o in outcomes}
    short: list[str] = []
    for p in Participant.objects.filter(study=study).annotate(
        judged=Count("judgments", distinct=True),
        done=Count(
            "assignments",
            filter=Q(assignments__status=Assignment.Status.COMPLETED),
            distinct=True,
        ),
    ):
        if p.judged != p.done:
            violations.append(f"participant {p.pk}: {p.judged} judgments != {p.done} completed")
        outcome = by_pid.get(p.prolific_pid)
        if outcome and p.judged != outcome.accepted_judgments:
            violations.append(
                f"participant {p.pk}: {outcome.accepted_judgments} judgments accepted by the "
                f"server but {p.judged} stored"
            )
        if p.status == Participant.Status.COMPLETED and p.judged != study.items_per_participant:
            short.append(
                f"participant {p.pk} completed with {p.judged} of "
                f"{study.items_per_participant} judgments ({p.group})"
            )
    return violations, short


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> Config:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=100, help="simulated intruders")
    parser.add_argument("--out", type=Path, required=True, help="JSON result file")
    parser.add_argument("--url", default="", help="drive this server instead of starting one")
    parser.add_argument("--items", type=int, default=10, help="items per participant")
    parser.add_argument("--judgments-per-text", type=int, default=3)
    parser.add_argument(
        "--text-margin", type=float, default=1.25, help="texts = margin x slots needed"
    )
    parser.add_argument(
        "--think-ms",
        default="500:2000",
        help="pause before each form submit, uniform LOW:HIGH ms (0:0 = stress, no pauses)",
    )
    parser.add_argument("--ramp-s", type=float, default=2.0, help="arrivals spread over this")
    parser.add_argument("--request-timeout-s", type=float, default=30.0)
    parser.add_argument("--workers", type=int, default=None, help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=None, help="gunicorn threads per worker")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--note", default="", help="stored in the JSON as is (e.g. 'shared machine', the commit)"
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=20,
        help="participants run first on a separate study, unmeasured (warms workers, caches)",
    )
    parser.add_argument(
        "--analyze",
        action="store_true",
        help="ANALYZE the database after creating the studies (the planner statistics that "
        "autovacuum gathers about a minute after texts are stored; by default a launch right "
        "after the texts, on tables without statistics)",
    )
    parser.add_argument(
        "--pg-statements",
        type=int,
        default=0,
        metavar="N",
        help="load pg_stat_statements in the throwaway cluster and report the N statements "
        "that took the most time in the measured phase",
    )
    args = parser.parse_args(argv)
    low, high = (int(x) for x in args.think_ms.split(":"))
    if args.participants < 1 or args.items < 1 or low > high:
        parser.error("need --participants >= 1, --items >= 1 and LOW <= HIGH")
    return Config(
        participants=args.participants,
        out=args.out,
        url=args.url.rstrip("/"),
        items=args.items,
        judgments_per_text=args.judgments_per_text,
        text_margin=args.text_margin,
        think_ms=(low, high),
        ramp_s=args.ramp_s,
        request_timeout_s=args.request_timeout_s,
        workers=args.workers,
        threads=args.threads,
        seed=args.seed,
        warmup=args.warmup,
        pg_statements=max(0, args.pg_statements),
        analyze=args.analyze,
        note=args.note,
    )


def main(argv: list[str] | None = None) -> int:
    cfg = parse_args(argv)
    random.seed(cfg.seed)
    cfg.out.parent.mkdir(parents=True, exist_ok=True)
    postgres = None
    gunicorn = None
    statements: dict[str, Any] | None = None
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
    env["DJANGO_DEBUG"] = "0"
    # The server refuses the public default key with DEBUG off; the benchmark's own is fine.
    env.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
    # Every simulated participant comes from 127.0.0.1: the per-client limit would stop them.
    env["INTRUDER_ENROLMENT_RATE"] = ""
    try:
        if not env.get("DATABASE_URL", "").startswith("postgres"):
            if cfg.url:
                raise SystemExit("--url needs DATABASE_URL of that server's PostgreSQL database")
            postgres = ThrowawayPostgres(statements=cfg.pg_statements > 0)
            env["DATABASE_URL"] = postgres.start()
        elif cfg.pg_statements:
            raise SystemExit("--pg-statements needs the throwaway cluster (no DATABASE_URL)")
        os.environ.update(env)
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        call_command("migrate", verbosity=0)
        study = create_study(cfg, participants=cfg.participants, title="Load benchmark")
        warmup = create_study(cfg, participants=max(cfg.warmup, 1), title="Load warm-up")
        if cfg.analyze and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        server_info = {"db": connection.vendor, "db_version": connection.pg_version}
        connection.close()
        base = cfg.url
        if not base:
            gunicorn, base = start_gunicorn(cfg, env)
            server_info["gunicorn"] = _gunicorn_settings(env, cfg)
        warm_outcomes: list[Outcome] = []
        if cfg.warmup:
            warm_outcomes, _, _ = asyncio.run(drive(cfg, base, warmup["slug"], cfg.warmup))
        if cfg.pg_statements:
            statements_reset()
        load_at_start = os.getloadavg()[0]
        meter = CpuMeter(
            gunicorn.pid if gunicorn is not None else None,
            postgres.postmaster_pid() if postgres is not None else None,
        )
        outcomes, rec, wall_s = asyncio.run(drive(cfg, base, study["slug"], cfg.participants))
        cpu = meter.stop(requests=sum(o.requests for o in outcomes), wall_s=wall_s)
        if cfg.pg_statements:
            statements = statements_top(cfg.pg_statements)
        violations, short = check_invariants(study["id"], outcomes)
    finally:
        if gunicorn is not None:
            stop_gunicorn(gunicorn)
        if postgres is not None:
            postgres.stop()

    steps = rec.summary()
    errors = [e for o in outcomes for e in o.errors]
    total_requests = sum(o.requests for o in outcomes)
    from did_work import require_work

    require_work(
        "load_intruder",
        requests=total_requests,
        accepted_judgments=sum(o.accepted_judgments for o in outcomes),
        completed=sum(o.completed for o in outcomes),
    )
    result = {
        "benchmark": "load_intruder",
        "note": cfg.note,
        "participants": cfg.participants,
        "completed": sum(o.completed for o in outcomes),
        "steps": steps,
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:20],
        "violations": len(violations),
        "violation_samples": violations[:20],
        "short_completions": len(short),
        "short_completion_samples": short[:20],
        "warmup": {
            "participants": cfg.warmup,
            "completed": sum(o.completed for o in warm_outcomes),
            "errors": sum(len(o.errors) for o in warm_outcomes),
        },
        "worst_step_p95_ms": max(s["p95_ms"] for s in steps.values()) if steps else None,
        "targets": {"p95_ms_per_step": 200, "errors": 0, "violations": 0},
        "requests": total_requests,
        "wall_s": round(wall_s, 1),
        "requests_per_s": round(total_requests / wall_s, 1) if wall_s else None,
        # Measured phase only. other_tenants: CPU of everything else on the machine meanwhile
        # (e.g. model training by teammates), the noise these latencies include.
        "cpu": cpu,
        # Measured phase only: PostgreSQL's own time per statement (wall time in the server,
        # which includes waiting for locks and for a core), with --pg-statements.
        "pg_statements": statements,
        "config": {
            "items_per_participant": cfg.items,
            "judgments_per_text": cfg.judgments_per_text,
            "texts": study["texts"],
            "think_ms": list(cfg.think_ms),
            "ramp_s": cfg.ramp_s,
            "analyzed_before_run": cfg.analyze,
            "url": cfg.url or "started here (loopback)",
            **server_info,
        },
        "machine": {
            "cpus": os.cpu_count(),
            "load_avg_1m_at_start": round(load_at_start, 2),
            "load_avg_1m_at_end": round(os.getloadavg()[0], 2),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
    }
    cfg.out.write_text(json.dumps(result, indent=2) + "\n")
    worst = result["worst_step_p95_ms"]
    print(
        f"{result['completed']}/{cfg.participants} completed, {result['errors']} errors, "
        f"{result['violations']} violations, worst step p95 {worst} ms -> {cfg.out}"
    )
    return 0 if not errors and not violations else 1


def _gunicorn_settings(env: dict[str, str], cfg: Config) -> dict[str, Any]:
    threads = int(env.get("GUNICORN_THREADS", cfg.threads or 4))
    default_workers = (os.cpu_count() or 1) * 2 + 1
    return {
        "workers": cfg.workers or int(env.get("GUNICORN_WORKERS", default_workers)),
        "threads": cfg.threads or threads,
    }


if __name__ == "__main__":
    raise SystemExit(main())
