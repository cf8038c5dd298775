"""Start a rehearsal: check its options, copy the study, and run the rehearsal's process.

One home for what `manage.py rehearse` and the study page's job share. Bad options are
refused in one line before anything starts; the rehearsal itself runs in its own process on
its own database (`runner.py`), so neither caller's database is ever written by it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from intruder.exceptions import IntruderError
from intruder.models import Study
from intruder.rehearsal.bundle import BundleError, study_bundle
from intruder.rehearsal.crowd import MixError, mix_parse
from intruder.rehearsal.runner import DATABASE_FILE, DATABASE_PREFIX, PROGRESS_FILE
from intruder.selectors.participant import catch_trials_per_intruder


class RehearsalRefused(IntruderError):
    """The rehearsal's options do not fit the study (said in one line, nothing started)."""

    status_code = 400


@dataclass
class RehearsalOptions:
    """What a researcher chooses for one rehearsal (defaults: docs/rehearsal.md)."""

    participants: int
    mix: str = ""
    seed: int = 0
    arrival_minutes: float = 10.0
    target_ci: float = 5.0
    report: bool = True
    timeout_minutes: float | None = None  # Prolific's time-out; None: twice the estimate
    faults: list[str] = field(default_factory=list)
    # Served as a deployment is (gunicorn and job workers, `sites.ServedSite`), on an empty
    # PostgreSQL database named rehearsal_... (`database_url`); else embedded, on SQLite.
    served: bool = False
    database_url: str = ""
    job_workers: int = 2


def rehearsal_check(study: Study, options: RehearsalOptions) -> dict[str, Any]:
    """Return the study's bundle, or raise RehearsalRefused saying what does not fit."""
    try:
        mix_parse(options.mix)
        bundle = study_bundle(study)
    except (MixError, BundleError) as error:
        raise RehearsalRefused(str(error)) from None
    if options.participants < 1:
        raise RehearsalRefused("a rehearsal needs at least 1 participant")
    name = options.database_url.rsplit("/", 1)[-1].split("?")[0]
    if options.database_url and not (
        options.database_url.startswith("postgres") and name.startswith(DATABASE_PREFIX)
    ):
        raise RehearsalRefused(
            f"the rehearsal's database must be an empty PostgreSQL database named "
            f"{DATABASE_PREFIX}..., not {options.database_url!r}"
        )
    if options.target_ci <= 0:
        raise RehearsalRefused("the target half-width must be positive")
    # Catch trials hold no places: each participant fills the places of their other texts.
    catch = {target["key"] for target in bundle["targets"] if target["catch"]}
    texts = sum(text["target"] not in catch for text in bundle["texts"])
    places = texts * study.judgments_per_text
    each = study.items_per_participant - catch_trials_per_intruder(study, len(catch))
    if options.participants * each > places:
        raise RehearsalRefused(
            f"{options.participants} participants x {each} texts each (catch trials aside) "
            f"is more than the study's {places} places ({texts} released texts x "
            f"{study.judgments_per_text} judgments): at most {places // each} participants"
        )
    return bundle


def rehearsal_run(
    study: Study,
    options: RehearsalOptions,
    out: Path,
    *,
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[int, dict[str, Any] | None]:
    """Rehearse `study` into the empty folder `out`; return (exit code, rehearsal.json)."""
    bundle = rehearsal_check(study, options)
    if out.exists() and any(out.iterdir()):
        raise RehearsalRefused(f"{out} is not empty: give a new folder")
    out.mkdir(parents=True, exist_ok=True)
    (out / "bundle.json").write_text(json.dumps(bundle), encoding="utf-8")
    env = {
        **os.environ,
        # The rehearsal's own database, never the configured one (the runner checks it).
        "DATABASE_URL": options.database_url or f"sqlite:///{(out / DATABASE_FILE).resolve()}",
        "INTRUDER_VAR_DIR": str(out.resolve()),
        # The players stand behind one proxy (loopback) and each says its own address in
        # X-Forwarded-For, as a deployment's proxy does: the per-client limits see people.
        "INTRUDER_NUM_PROXIES": "1",
        # Its new database starts from the copy the last rehearsal migrated (4 s less).
        # (intruder/management/commands/migrate.py)
        "INTRUDER_MIGRATION_CACHE": os.environ.get("INTRUDER_MIGRATION_CACHE")
        or str(Path(settings.VAR_DIR) / "cache" / "migrated"),
    }
    env.pop("DJANGO_CACHE_URL", None)  # its reports stay in its own database
    command = [
        sys.executable,
        "-m",
        "intruder.rehearsal.runner",
        *("--bundle", str(out / "bundle.json"), "--out", str(out)),
        *("--participants", str(options.participants), "--mix", options.mix),
        *("--seed", str(options.seed)),
        *("--arrival-minutes", str(options.arrival_minutes)),
        *("--target-ci", str(options.target_ci)),
        *([] if options.report else ["--no-report"]),
        *(["--timeout-minutes", str(options.timeout_minutes)] if options.timeout_minutes else []),
        *(arg for fault in options.faults for arg in ("--fault", fault)),
        *(["--served", "--job-workers", str(options.job_workers)] if options.served else []),
    ]
    child = subprocess.Popen(command, env=env)
    while child.poll() is None:
        time.sleep(0.5)
        if progress is not None:
            _progress_from_file(out / PROGRESS_FILE, progress)
    result_file = out / "rehearsal.json"
    result = json.loads(result_file.read_text(encoding="utf-8")) if result_file.exists() else None
    return child.returncode, result


def _progress_from_file(path: Path, progress: Callable[[int, int, str], None]) -> None:
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # not written yet, or caught mid-write: the next poll reads it
    progress(state["done"], state["total"], state["stage"])


def rehearsal_job_start(*, study: Study, user: Any, options: RehearsalOptions) -> tuple[Any, bool]:
    """Queue a rehearsal of `study` (options checked first); (job, created).

    One at a time per study: a queued or running one is returned instead.
    """
    from intruder.models import Job
    from intruder.services.jobs import job_start

    rehearsal_check(study, options)
    params = {
        "participants": options.participants,
        "seed": options.seed,
        "mix": options.mix,
        "target_ci": options.target_ci,
    }
    return job_start(kind=Job.Kind.REHEARSE_STUDY, study=study, params=params, created_by=user)


def rehearsal_execute(*, job: Any, progress: Callable[[int, int, str], None]) -> dict[str, Any]:
    """Run the job's rehearsal into the var folder's rehearsals/<study>/<job>/; return its
    verdict, costs, latencies and plan (the study page shows them)."""
    from django.conf import settings

    options = RehearsalOptions(
        participants=int(job.params["participants"]),
        seed=int(job.params.get("seed", 0)),
        mix=str(job.params.get("mix", "")),
        target_ci=float(job.params.get("target_ci", 5.0)),
    )
    attempt = 1
    base = Path(settings.VAR_DIR) / "rehearsals" / job.study.slug / str(job.pk)
    while (out := base / f"attempt-{attempt}").exists():
        attempt += 1  # a retried job starts a fresh rehearsal beside the first attempt's
    code, result = rehearsal_run(job.study, options, out, progress=progress)
    if result is None:
        raise RuntimeError(f"the rehearsal stopped without a result (exit {code}); see {out}")
    keep = ("participants", "kinds", "outcomes", "violations", "violations_total", "costs")
    return {
        **{key: result[key] for key in keep},
        "latency": result["latency"],
        "plan": result["plan"],
        "folder": str(out),
    }
