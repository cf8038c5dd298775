"""Helper processes of the RQ tests: they run with the worker's settings, not pytest's.

    python -m tests.intruder.operations.rq_scenario start   -> {"run": .., "job": ..}
    python -m tests.intruder.operations.rq_scenario state RUN -> the run's jobs and results
    python -m tests.intruder.operations.rq_scenario wait RUN S -> the state once the run's job
                                                                 ended (or after S seconds)
    python -m tests.intruder.operations.rq_scenario worker  -> `manage.py run_worker`

The database and the backend come from the environment (DATABASE_URL,
INTRUDER_JOB_BACKEND, INTRUDER_REDIS_URL, INTRUDER_RQ_QUEUE), as for a deployed worker.
The worker accepts two test hooks on the attacks it builds, so a test can see folds spread
over workers and kill a worker at a known point:

- INTRUDER_TEST_FIT_DELAY=S: each fit sleeps S seconds first;
- INTRUDER_TEST_BLOCK_AT_FIT=N: fit number N (1-based) writes the file named by
  INTRUDER_TEST_BLOCKED_FILE and then never returns (the test kills the worker).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
    import django

    django.setup()


def start() -> dict[str, Any]:
    """Create the test study and queue a cross-validated run of two cheap attacks on it."""
    import itertools

    from intruder.models import Study
    from intruder.risk.attack_runs import attack_run_start
    from tests.intruder import factories
    from tests.intruder.risk_fixtures import FAST_CONFIG, risk_study

    # Each process starts the factories' numbering afresh: go past this database's names.
    factories._seq = itertools.count(1000 * (Study.objects.count() + 1))
    study = risk_study(per_person=4)
    run = attack_run_start(
        study=study,
        user=study.owner,
        attacks=["tfidf", "bm25"],
        methods=["textwash-model", "clear"],
        folds=int(os.environ.get("INTRUDER_TEST_FOLDS", "4")),
        config=FAST_CONFIG,
    )
    return {"run": run.pk, "job": run.job_id}


def state(run_id: int) -> dict[str, Any]:
    """Return the run's job, its fold jobs and its results in a comparable form."""
    from intruder.models import Job
    from intruder.risk.models import AttackRun

    run = AttackRun.objects.get(pk=run_id)
    job = run.job
    position = {
        pk: n
        for n, pk in enumerate(run.study.descriptions.order_by("pk").values_list("pk", flat=True))
    }
    folds = Job.objects.filter(kind="attack_fold", params__run=run.pk).order_by("pk")
    return {
        "job": {
            "status": job.status,
            "attempts": job.attempts,
            "progress": [job.progress_done, job.progress_total],
            "result": {k: v for k, v in job.result.items() if k != "run"},
            "error": job.error,
        },
        "folds": [
            {"fold": f.params["fold"], "status": f.status, "worker": f.worker} for f in folds
        ],
        "rows": sorted(
            [position[r.description_id], r.method, r.attack, r.fold, r.predicted_key, r.pk]
            for r in run.results.all()
        ),
        "trir": run.summary.get("trir"),
    }


def wait(run_id: int, seconds: float) -> dict[str, Any]:
    """Return the run's state once its job succeeded or failed, or after `seconds`.

    One process polls (a process per poll would start Django every half second).
    """
    deadline = time.monotonic() + seconds
    while True:
        current = state(run_id)
        if current["job"]["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
            return current
        time.sleep(0.25)


def _slow_attacks() -> None:
    """Install the test hooks (see the module docstring) on the attack registry."""
    import attacks.registry

    delay = float(os.environ.get("INTRUDER_TEST_FIT_DELAY", "0"))
    block_at = int(os.environ.get("INTRUDER_TEST_BLOCK_AT_FIT", "0"))
    real = attacks.registry.get_attack
    fits = {"n": 0}

    def get_attack(name: str, config: Any = None) -> Any:
        attack = real(name, config)
        fit = attack.fit

        def hooked_fit(*args: Any, **kwargs: Any) -> Any:
            fits["n"] += 1
            if fits["n"] == block_at:
                Path(os.environ["INTRUDER_TEST_BLOCKED_FILE"]).write_text(str(os.getpid()))
                while True:
                    time.sleep(60)
            time.sleep(delay)
            return fit(*args, **kwargs)

        attack.fit = hooked_fit
        return attack

    attacks.registry.get_attack = get_attack
    # The attack run's module binds the factory at import (it may already be imported when
    # the app registered its parts): the hook goes where the run reads it.
    import intruder.risk.attack_runs

    intruder.risk.attack_runs.get_attack = get_attack


def main(argv: list[str]) -> None:
    _setup()
    command = argv[0]
    if command == "start":
        print(json.dumps(start()))
    elif command == "state":
        print(json.dumps(state(int(argv[1]))))
    elif command == "wait":
        print(json.dumps(wait(int(argv[1]), float(argv[2]))))
    elif command == "worker":
        from django.core.management import call_command

        _slow_attacks()
        call_command("run_worker", *argv[1:])
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
