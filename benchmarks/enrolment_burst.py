"""Enrolment burst: many intruders enrol in one study at the same moment (the study lock).

    python benchmarks/enrolment_burst.py --participants 100 --threads 12 --rounds 3 \
        --out /tmp/enrolment_burst.json

Every enrolment of an intruder study takes the study's lock to choose a group, so a crowd
arriving at once queues there: the time each holds the lock is what the next ones wait. This
calls the enrolment service from `--threads` threads in one process (one database connection
each, as gunicorn's threads have) against PostgreSQL, `--participants` new PIDs per round, and
reports the wall time of each burst, its CPU in this process and the latencies. Each round
creates a fresh study like the load benchmark's (`load_intruder.create_study`) in the same
database, so later rounds run on a database that holds the earlier studies too.

Runs on a throwaway PostgreSQL cluster unless DATABASE_URL names a PostgreSQL database. The
latencies include this machine's other load: compare trees with interleaved runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import load_intruder  # noqa: E402 - the throwaway cluster and the study builder


def burst(study_id: int, *, participants: int, threads: int, tag: str) -> dict[str, float]:
    """Enrol `participants` new PIDs from `threads` threads at once; return the timings."""
    from django.db import connections

    from intruder.models import Study
    from intruder.services.participants import participant_enroll

    study = Study.objects.get(pk=study_id)
    latencies: list[float] = []
    guard = threading.Lock()
    counter = iter(range(participants))

    def work() -> None:
        try:
            while True:
                with guard:
                    i = next(counter, None)
                if i is None:
                    return
                started = time.perf_counter()
                participant_enroll(study=study, prolific_pid=f"{tag}{i:016d}")
                with guard:
                    latencies.append(time.perf_counter() - started)
        finally:
            connections.close_all()

    cpu = time.process_time()
    started = time.perf_counter()
    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wall = time.perf_counter() - started
    latencies.sort()
    return {
        "enrolled": len(latencies),
        "wall_s": round(wall, 3),
        "cpu_s": round(time.process_time() - cpu, 3),
        "p50_ms": round(1000 * statistics.median(latencies), 1),
        "p95_ms": round(1000 * latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))], 1),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=100, help="new PIDs per round")
    parser.add_argument("--threads", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True, help="JSON result file")
    parser.add_argument("--note", default="", help="stored in the JSON as is")
    args = parser.parse_args(argv)
    postgres = None
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
    try:
        if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
            postgres = load_intruder.ThrowawayPostgres()
            os.environ["DATABASE_URL"] = postgres.start()
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        call_command("migrate", verbosity=0)
        cfg = load_intruder.parse_args(
            ["--participants", str(args.participants), "--out", str(args.out)]
        )
        rounds = []
        for n in range(args.rounds):
            study = load_intruder.create_study(cfg, participants=args.participants, title="Burst")
            connection.close()
            tag = f"burst{n}x{time.time_ns() % 10**6}"
            rounds.append(
                burst(study["id"], participants=args.participants, threads=args.threads, tag=tag)
            )
            print(f"round {n + 1}: {rounds[-1]}")
    finally:
        if postgres is not None:
            postgres.stop()
    from did_work import require_work

    require_work("enrolment_burst", enrolled=sum(r["enrolled"] for r in rounds))
    result = {
        "benchmark": "enrolment_burst",
        "note": args.note,
        "participants": args.participants,
        "threads": args.threads,
        "rounds": rounds,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
