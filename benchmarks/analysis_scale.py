"""Analyses on a paper-sized study: time of the analysis page's tables and of the construct loss
job, and whether the Bayes factors stay defined.

    flock /tmp/heavy.lock python benchmarks/analysis_scale.py [--texts 1080 --judgments 3]

A throwaway SQLite database (a temporary folder) gets one made-up intruder study: N texts
written from templates about invented persons, each anonymized the way the model writes
(names, places, numbers and pronouns as placeholders), each judged J times. Timed:
`study_report` (what the analysis page computes in the request) and `construct_loss_compute`
(the background job, the real spaCy tagger). Writes benchmarks/results/analysis_scale.json.
Before the Bayes factor moved to log space, construct loss raised ZeroDivisionError on such
a study (pingouin.bayesfactor_ttest for |t| beyond about 40 at n = 1080).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

FIRST = ["Mira", "Lars", "Odile", "Bram", "Ines", "Tomas", "Wren", "Nell", "Ivo", "Ada"]
LAST = ["Tollund", "Pemberton", "Farrant", "Okonjo", "Calloway", "Hellberg", "Halloway"]
PLACES = ["Bergen", "Tromso", "Cork", "Hobart", "Valparaiso", "Dakar", "Gdansk"]
JOBS = ["lighthouse keeper", "ferry captain", "radio host", "glass blower", "beekeeper"]


def made_up_text(rng: random.Random) -> tuple[str, str, str]:
    """Return (name, original, anonymized) of one invented person's description."""
    first, last, place, job = (
        rng.choice(FIRST),
        rng.choice(LAST),
        rng.choice(PLACES),
        rng.choice(JOBS),
    )
    age, year = rng.randint(25, 80), rng.randint(1950, 2000)
    he = rng.choice(["He", "She"])
    extra = " ".join(
        f"{he} likes long walks and old maps, and {he.lower()} writes letters every week."
        for _ in range(rng.randint(1, 4))
    )
    original = (
        f"{first} {last} is a {age} year old {job} from {place}. {he} was born in {year} and "
        f"still lives near the harbour. {extra} {he} is known for a quiet voice."
    )
    anonymized = (
        "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 is a NUMERIC_1 year old OCCUPATION_1 from "
        "LOCATION_1. PRONOUN was born in DATE_1 and still lives near the harbour. "
        + extra.replace(f"{he} ", "PRONOUN ").replace(f"{he.lower()} ", "PRONOUN ")
        + " PRONOUN is known for a quiet voice."
    )
    return f"{first} {last}", original, anonymized


def build_study(texts: int, judgments: int, seed: int):
    """Create the study in the configured (temporary) database."""
    from intruder.models import Study
    from tests.intruder import factories as f

    rng = random.Random(seed)
    study = f.make_study(slug="scale", judgments_per_text=judgments, kind=Study.Kind.INTRUDER)
    participants = [f.make_participant(study=study) for _ in range(judgments)]
    for n in range(texts):
        name, original, anonymized = made_up_text(rng)
        target = f.make_target(study=study, name=f"{name} {n}", key=f"person-{n}")
        text = f.make_text(
            study=study,
            description=f.make_description(study=study, target=target, text=original),
            text=anonymized,
        )
        for slot, participant in enumerate(participants, start=1):
            guess = name if rng.random() < 0.3 else ""
            f.make_judgment(
                participant=participant,
                text=text,
                position=n + 1,
                slot=slot,
                self_identified=bool(guess),
                guessed_name=guess,
                other_knowledge="" if guess else "a person by the sea",
            )
    return study


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=1080)
    parser.add_argument("--judgments", type=int, default=3)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/analysis_scale.json")
    args = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="analysis-scale-")
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/scale.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from intruder.analysis.selectors import study_report
    from intruder.analysis.services import construct_loss_compute

    started = time.perf_counter()
    study = build_study(args.texts, args.judgments, args.seed)
    built_s = time.perf_counter() - started

    started = time.perf_counter()
    report = study_report(study)
    page_s = time.perf_counter() - started

    steps: list[int] = []
    started = time.perf_counter()
    result = construct_loss_compute(
        study=study, progress=lambda done, total, msg="": steps.append(done)
    )
    construct_s = time.perf_counter() - started
    rows = result["tables"]["construct_loss"]
    overflowing = [r["pos"] for r in rows if r["bf10"] is None and r["log10_bf10"] is not None]
    from did_work import require_work

    require_work(
        "analysis_scale",
        analysis_tables=len(report.tables),
        construct_loss_rows=len(rows),
        construct_loss_progress_calls=len(steps),
    )
    out = {
        "texts": args.texts,
        "judgments_per_text": args.judgments,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "build_database_s": round(built_s, 1),
        "analysis_page_tables_s": round(page_s, 2),
        "analysis_page_tables": sorted(report.tables),
        "construct_loss_job_s": round(construct_s, 1),
        "construct_loss_progress_calls": len(steps),
        "bf10_beyond_float_for": overflowing,
        "max_abs_t": max(abs(r["t"]) for r in rows if r["t"] is not None),
        "log10_bf10_by_pos": {
            r["pos"]: None if r["log10_bf10"] is None else round(r["log10_bf10"], 1) for r in rows
        },
        "all_log10_bf10_finite": all(
            r["log10_bf10"] is None or math.isfinite(r["log10_bf10"]) for r in rows
        ),
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
