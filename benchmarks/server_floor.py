"""The server CPU floor per request: what gunicorn + Django + PostgreSQL cost on this machine.

    python benchmarks/server_floor.py --out benchmarks/results/server_floor.json

Starts the load benchmark's stack (throwaway PostgreSQL, gunicorn with gunicorn.conf.py and
the production settings, DEBUG off) with three extra URLs, and sends each of them the same
number of requests from a few concurrent keep-alive clients, measuring the CPU seconds of the
gunicorn and PostgreSQL process trees per request (as `load_intruder.py` does):

- `empty`: a view that returns "ok" through the full middleware stack (sessions, CSRF,
  CSP, axes, ...): the cost of a request that does nothing;
- `one_query`: the same, after reading a participant with its study by token (the first
  query of every participant page);
- `item_reload`: a real participant page, an intruder's text page reloaded (the text is
  already claimed: participant, progress, template).

They bound what any participant step can cost: a step of the launch does at least the
`empty` request's work, and the mean over the launch's steps is what the 4 ms target asks.
The extra URLs exist only in this benchmark (`floor_urls`, loaded through
`floor_settings`), never in the app.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import secrets
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import load_intruder  # noqa: E402 - the stack's helpers (PostgreSQL, gunicorn, CPU meter)


async def _hammer(base: str, path: str, *, requests: int, clients: int) -> float:
    """Send `requests` GETs to `path` from `clients` keep-alive clients; return wall seconds."""
    import httpx

    per_client = requests // clients

    async def one() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            for _ in range(per_client):
                response = await client.get(path)
                if response.status_code != 200:
                    raise RuntimeError(f"{path}: HTTP {response.status_code}")

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(clients)))
    return time.perf_counter() - started


def _participant_home(base: str, slug: str) -> str:
    """Enrol one intruder, consent, confirm the instructions, claim a text; return /p/<token>/."""
    import httpx
    from load_intruder import ACTION_RE, HIDDEN_INPUT_RE, NAME_RE, VALUE_RE

    with httpx.Client(base_url=base, timeout=30) as client:
        home = client.get(f"/s/{slug}/?PROLIFIC_PID=FLOOR0001&STUDY_ID=F&SESSION_ID=F")
        home = home.headers["location"]
        for data in ({"decision": "agree"}, {}):
            page = client.get(home).text
            action = ACTION_RE.search(page).group(1)
            fields = {
                NAME_RE.search(tag).group(1): VALUE_RE.search(tag).group(1)
                for tag in HIDDEN_INPUT_RE.findall(page)
                if NAME_RE.search(tag) and VALUE_RE.search(tag)
            }
            client.post(action, data={**fields, **data}, headers={"Origin": base})
        if 'name="assignment_id"' not in client.get(home).text:
            raise RuntimeError("the floor participant did not get a text")
    return home


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--requests", type=int, default=2000, help="per URL and round")
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2, help="URLs interleaved, this often")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)

    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = "floor_settings"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), str(HERE.parent), *filter(None, [env.get("PYTHONPATH")])]
    )
    env["DJANGO_DEBUG"] = "0"
    env.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
    env["INTRUDER_ENROLMENT_RATE"] = ""
    cfg = load_intruder.parse_args(
        ["--out", os.devnull, "--participants", "1"]
        + (["--workers", str(args.workers)] if args.workers else [])
        + (["--threads", str(args.threads)] if args.threads else [])
    )
    postgres = load_intruder.ThrowawayPostgres()
    gunicorn = None
    rows: dict[str, list[dict]] = {}
    try:
        env["DATABASE_URL"] = postgres.start()
        os.environ.update(env)
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        call_command("migrate", verbosity=0)
        study = load_intruder.create_study(cfg, participants=5, title="Floor")
        connection.close()
        gunicorn, base = load_intruder.start_gunicorn(cfg, env)
        home = _participant_home(base, study["slug"])
        token = home.rstrip("/").rsplit("/", 1)[-1]
        paths = {
            "empty": "/floor/empty/",
            "one_query": f"/floor/one-query/{token}/",
            "item_reload": home,
        }
        for path in paths.values():  # warm every worker on every URL
            asyncio.run(_hammer(base, path, requests=200, clients=args.clients))
        for _round in range(args.rounds):
            for name, path in paths.items():
                meter = load_intruder.CpuMeter(gunicorn.pid, postgres.postmaster_pid())
                wall = asyncio.run(
                    _hammer(base, path, requests=args.requests, clients=args.clients)
                )
                done = args.requests // args.clients * args.clients
                cpu = meter.stop(requests=done, wall_s=wall)
                rows.setdefault(name, []).append(
                    {
                        "requests": done,
                        "wall_s": round(wall, 2),
                        "requests_per_s": round(done / wall, 1),
                        "gunicorn_cpu_ms_per_request": round(
                            1000 * cpu["cpu_s"]["gunicorn"] / done, 3
                        ),
                        "postgres_cpu_ms_per_request": round(
                            1000 * cpu["cpu_s"]["postgres"] / done, 3
                        ),
                        "server_cpu_ms_per_request": cpu["server_cpu_ms_per_request"],
                        "other_tenants_cpu_s": cpu["cpu_s"]["other_tenants"],
                        "load_avg_1m": round(os.getloadavg()[0], 2),
                    }
                )
    finally:
        if gunicorn is not None:
            load_intruder.stop_gunicorn(gunicorn)
        postgres.stop()

    from did_work import require_work

    require_work(
        "server_floor", requests=sum(r["requests"] for runs in rows.values() for r in runs)
    )
    result = {
        "benchmark": "server_floor",
        "what": "server CPU (gunicorn + PostgreSQL process trees) per request, by URL",
        "urls": {
            "empty": "a view returning 'ok' through the full middleware stack",
            "one_query": "the same after the participant-by-token query every page makes",
            "item_reload": "an intruder's text page, reloaded (text already claimed)",
        },
        "rounds": rows,
        "best_server_cpu_ms_per_request": {
            name: min(r["server_cpu_ms_per_request"] for r in runs) for name, runs in rows.items()
        },
        "config": {
            "clients": args.clients,
            "requests_per_url_and_round": args.requests,
            "gunicorn": load_intruder._gunicorn_settings(env, cfg),
        },
        "machine": {
            "cpus": os.cpu_count(),
            "shared": "yes: other sessions ran on the same cores (see other_tenants_cpu_s)",
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for name, best in result["best_server_cpu_ms_per_request"].items():
        print(f"{name:12s} server CPU {best:6.2f} ms/request (best of {args.rounds})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
