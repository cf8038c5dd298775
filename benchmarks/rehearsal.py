"""Rehearse a Textwash-sized study: 500 simulated participants arriving as a Prolific launch.

    nice -n 10 python benchmarks/rehearsal.py --participants 500 \
        --out benchmarks/results/rehearsal_500.json [--data ../shared/data/textwash_study]

A throwaway SQLite database (a temporary folder) gets an intruder study of Textwash study 2's
anonymized texts (20 famous persons, read from the shared data, never copied into the
repository), with places for --participants intruders (5 texts each, 5 judgments per text,
so as many texts as participants). `manage.py rehearse`'s machinery then plays the study on
a deployment's stack: a throwaway PostgreSQL cluster (the rehearsal's database), a throwaway
Redis with RQ job workers, gunicorn with the project's `gunicorn.conf.py` (`--embedded`:
Django's threaded server in the rehearsal's process, on SQLite, as `manage.py rehearse`
does by default), the sandbox Prolific, the default crowd mix, arrivals over
--arrival-minutes, then approvals, the bonus and the risk report (TF-IDF). Writes the
rehearsal's verdict, per-step latency p95, the wall time, and, while the crowd played, the
crowd's CPU (its threads' own) apart from the site's (gunicorn and the workers), per
request, with PostgreSQL's and Redis's over the whole run; exits 1 on a violation or a
missed target, 3 when nothing was played.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from did_work import require_work  # noqa: E402 - beside this script

from intruder.rehearsal.processes import process_tree_cpu_s  # noqa: E402

TARGET_WALL_S = 15 * 60
TARGET_STEP_P95_MS = 500.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=500)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=None, help="The textwash_study folder.")
    parser.add_argument("--arrival-minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-report", action="store_true")
    parser.add_argument("--mix", default="", help="The crowd's kinds (default: the rehearsal's).")
    parser.add_argument(
        "--embedded", action="store_true", help="SQLite and Django's server in one process."
    )
    return parser.parse_args()


def study_rows(data: Path, texts: int) -> list[dict]:
    """Return `texts` study-2 records, as even across its 20 persons as the file allows."""
    from research_data.json_lines import read_json_lines

    rows = [row for _, row in read_json_lines(data / "study2.jsonl")]
    by_person: dict[str, list[dict]] = {}
    for row in rows:
        by_person.setdefault(row["person"], []).append(row)
    chosen: list[dict] = []
    while len(chosen) < texts and any(by_person.values()):
        for person in sorted(by_person):
            if by_person[person] and len(chosen) < texts:
                chosen.append(by_person[person].pop(0))
    return chosen


@contextmanager
def deployment_services(options: Any) -> Iterator[dict[str, int | None]]:
    """Start a throwaway PostgreSQL cluster (database rehearsal_bench) and Redis for the
    served rehearsal; yield their process ids; stop both on the way out."""
    from load_intruder import ThrowawayPostgres, ThrowawayRedis

    postgres, redis = ThrowawayPostgres(database="rehearsal_bench"), ThrowawayRedis()
    try:
        options.database_url = postgres.start()
        os.environ.update(INTRUDER_JOB_BACKEND="rq", INTRUDER_REDIS_URL=redis.start())
        yield {"postgres": postgres.postmaster_pid(), "redis": redis.proc.pid}
    finally:
        os.environ.pop("INTRUDER_JOB_BACKEND", None)
        if hasattr(redis, "proc"):
            redis.stop()
        postgres.stop()


def main() -> int:
    args = parse_args()
    from research_data import missing_reason, textwash_study_dir

    data = args.data or textwash_study_dir()
    if not (data / "study2.jsonl").exists():
        print(f"rehearsal: {missing_reason() or data} (no study2.jsonl)", file=sys.stderr)
        return 2
    var = Path(tempfile.mkdtemp(prefix="rehearsal_bench_"))
    os.environ.update(INTRUDER_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="intruder.settings")
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from intruder.models import AnonymizedText, Description, Study, TargetPerson
    from intruder.rehearsal.launch import RehearsalOptions, rehearsal_run

    call_command("migrate", verbosity=0)
    owner = get_user_model().objects.create_user(username="bench", password=None)
    study = Study.objects.create(
        slug="rehearsal-bench",
        title="Rehearsal benchmark (Textwash study 2 texts)",
        kind=Study.Kind.INTRUDER,
        owner=owner,
        consent_text="A rehearsal: no person takes part.",
        items_per_participant=5,
        judgments_per_text=5,
        groups=["famous"],
    )
    targets: dict[str, TargetPerson] = {}
    for number, row in enumerate(study_rows(data, args.participants)):
        person = row["person"]
        if person not in targets:
            targets[person] = TargetPerson.objects.create(
                study=study, key=f"p{len(targets)}", name=person.title(), group="famous"
            )
        description = Description.objects.create(
            study=study,
            target=targets[person],
            text=row.get("original") or row["textwash"],
            external_id=f"t{number}",
        )
        AnonymizedText.objects.create(
            description=description, text=row["textwash"], status=AnonymizedText.Status.RELEASED
        )
    options = RehearsalOptions(
        participants=args.participants,
        seed=args.seed,
        mix=args.mix,
        arrival_minutes=args.arrival_minutes,
        report=not args.no_report,
        served=not args.embedded,
    )
    with ExitStack() as stack:
        services = {} if args.embedded else stack.enter_context(deployment_services(options))
        started = time.monotonic()
        before = {name: process_tree_cpu_s(pid) for name, pid in services.items()}
        code, result = rehearsal_run(study, options, var / "rehearsal")
        wall = time.monotonic() - started
        service_cpu = {
            f"{name}_seconds": round((process_tree_cpu_s(pid) or 0) - (before[name] or 0), 1)
            for name, pid in services.items()
        }
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    require_work(
        "rehearsal",
        participants=result and result["outcomes"]["entered"],
        answers=result and result["outcomes"]["answers"],
    )
    worst = max(step["p95_ms"] for step in result["latency"].values())
    out = {
        "participants": args.participants,
        "texts": study.descriptions.count(),
        "persons": len(targets),
        "exit_code": code,
        "wall_seconds": round(wall, 1),
        "rehearsal_cpu_seconds": round(cpu.ru_utime + cpu.ru_stime, 1),
        # While the crowd played: the site's (and the sandbox's) CPU and the crowd's, apart.
        "crowd_phase_cpu": result["cpu"],
        # Over the whole rehearsal (copy, crowd, researcher's side, report), not the crowd only.
        "service_cpu": service_cpu,
        "site_cpu_ms_per_request": round(
            1000 * result["cpu"]["site_seconds"] / result["cpu"]["participant_requests"], 2
        ),
        "crowd_cpu_ms_per_request": round(
            1000 * result["cpu"]["crowd_seconds"] / result["cpu"]["participant_requests"], 2
        ),
        "violations_total": result["violations_total"],
        "violations": {v["name"]: v["count"] for v in result["violations"]},
        "outcomes": result["outcomes"],
        "latency": result["latency"],
        "worst_step_p95_ms": worst,
        "study_seconds_skipped": result["study_seconds_skipped"],
        "targets": {
            "violations": 0,
            "wall_seconds": TARGET_WALL_S,
            "step_p95_ms": TARGET_STEP_P95_MS,
        },
        "met": {
            "violations": result["violations_total"] == 0,
            "wall_seconds": wall <= TARGET_WALL_S,
            "step_p95_ms": worst <= TARGET_STEP_P95_MS,
        },
        "setup": (
            "SQLite, Django's threaded server in the rehearsal's process"
            if args.embedded
            else "a throwaway PostgreSQL cluster, a throwaway Redis, " + result["cpu"]["site"]
        )
        + "; the sandbox Prolific and the crowd's threads in the rehearsal's process (the "
        "crowd's CPU measured per thread)",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_average": os.getloadavg(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2), encoding="utf-8")
    print(json.dumps({k: out[k] for k in ("wall_seconds", "violations", "met")}, indent=2))
    return 0 if all(out["met"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
