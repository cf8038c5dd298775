"""Run background jobs: poll the Job table (default) or serve the RQ queue.

The polling worker also releases expired assignments every --sweep-interval seconds (the
same sweep as `manage.py release_expired`, which RQ setups run from cron instead).
"""

from __future__ import annotations

import signal
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from intruder.exchange.imports import imports_roll_back_abandoned
from intruder.services import jobs
from intruder.services.assignment import studies_release_expired


def sweep_expired() -> str | None:
    """Run the expiry sweep; return a log line when it changed anything."""
    sweep = studies_release_expired()
    if not (sweep.released or sweep.timed_out):
        return None
    return (
        f"released {sweep.released} expired assignment(s), "
        f"{sweep.timed_out} participant(s) timed out"
    )


class Command(BaseCommand):
    help = (
        "Run queued background jobs (batch anonymization, ...). With INTRUDER_JOB_BACKEND=db "
        "(default) it polls the Job table; with 'rq' it serves the Redis queue."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--once", action="store_true", help="Drain the queue, then exit.")
        parser.add_argument("--poll", type=float, default=1.0, help="Seconds between polls.")
        parser.add_argument(
            "--max-jobs", type=int, default=None, help="Exit after running this many jobs."
        )
        parser.add_argument(
            "--sweep-interval",
            type=float,
            default=60.0,
            help="Seconds between sweeps that release assignments past the study's time "
            "limit and time out their participants (0: no sweep). Runs between jobs.",
        )
        parser.add_argument(
            "--queues",
            default="",
            help="RQ backend: comma-separated queues to serve, in order (default: "
            "INTRUDER_RQ_QUEUE). A GPU host: --queues intruder-gpu,intruder.",
        )

    def handle(self, *args: Any, **options: Any) -> None:

        # What a crashed import left behind goes at start (the next import would do it too).
        rolled_back = imports_roll_back_abandoned()
        if rolled_back:
            self.stdout.write(f"rolled back {rolled_back} crashed import(s)")
        backend = jobs.job_backend()
        if backend == "rq":
            queues = [q.strip() for q in options["queues"].split(",") if q.strip()] or None
            self.stdout.write(
                f"worker {jobs.worker_name()} serving the RQ queue(s) "
                + ", ".join(queues or [settings.INTRUDER_RQ_QUEUE])
            )
            jobs.run_rq_worker(burst=options["once"], queues=queues)
            return
        stopping = {"now": False}

        def stop(signum: int, frame: object) -> None:
            # First signal: finish the running job, then stop. Second: stop at once (the
            # job's stored results survive and a retry resumes from them).
            if stopping["now"]:
                raise KeyboardInterrupt
            stopping["now"] = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        self.stdout.write(f"worker {jobs.worker_name()} polling the Job table")
        ran = jobs.run_db_worker(
            once=options["once"],
            poll_interval_s=options["poll"],
            max_jobs=options["max_jobs"],
            should_stop=lambda: stopping["now"],
            log=lambda line: self.stdout.write(line),
            periodic=sweep_expired if options["sweep_interval"] > 0 else None,
            periodic_interval_s=options["sweep_interval"],
        )
        self.stdout.write(f"worker stopped after {ran} job(s)")
