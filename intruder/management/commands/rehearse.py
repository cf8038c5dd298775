"""Rehearse a study with a simulated crowd on a throwaway copy, before it spends money."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from intruder.lookup import by_slug
from intruder.models import Study
from intruder.rehearsal.bundle import BundleError, study_bundle
from intruder.rehearsal.crowd import MixError, mix_parse
from intruder.rehearsal.runner import DATABASE_FILE, FAULTS


class Command(BaseCommand):
    help = (
        "Play the study with N simulated participants on a throwaway copy (its own SQLite "
        "database, the sandbox Prolific, the site on a loopback port), then do the "
        "researcher's side (sync, approvals, bonus, analysis, risk report) and check every "
        "invariant. Writes rehearsal.json and summary.md to --out; exits 1 on any violation."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The study to rehearse (an intruder test).")
        parser.add_argument("--participants", type=int, required=True)
        parser.add_argument("--out", type=Path, required=True, help="A new or empty folder.")
        parser.add_argument(
            "--mix", default="", help="kind=share,... summing to 1 (default: docs/rehearsal.md)."
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--speed",
            type=float,
            default=60.0,
            help="The study's time runs this many times faster than the wall (default 60).",
        )
        parser.add_argument(
            "--arrival-minutes",
            type=float,
            default=10.0,
            help="Study minutes over which participants arrive, most in the first ones.",
        )
        parser.add_argument("--concurrency", type=int, default=8, help="Participants at once.")
        parser.add_argument(
            "--target-ci",
            type=float,
            default=5.0,
            help="Half-width (points) of the human rate's 95 %% interval to plan for.",
        )
        parser.add_argument("--no-report", action="store_true", help="Skip the report forms.")
        parser.add_argument(
            "--fault",
            choices=FAULTS,
            action="append",
            default=[],
            help="Seed a fault the invariants must catch (tests of the rehearsal itself).",
        )

    def handle(self, *args: object, **options: object) -> None:
        study = by_slug(Study, str(options["slug"]), "study")
        out: Path = options["out"]  # type: ignore[assignment]
        participants = int(options["participants"])  # type: ignore[arg-type]
        try:
            mix_parse(str(options["mix"]))
            bundle = study_bundle(study)
        except (MixError, BundleError) as error:
            raise CommandError(str(error)) from None
        places = len(bundle["texts"]) * study.judgments_per_text
        needed = participants * study.items_per_participant
        if participants < 1:
            raise CommandError("--participants must be at least 1")
        if needed > places:
            raise CommandError(
                f"--participants {participants} x {study.items_per_participant} texts each "
                f"is more than the study's {places} places ({len(bundle['texts'])} released "
                f"texts x {study.judgments_per_text} judgments): at most "
                f"{places // study.items_per_participant} participants"
            )
        if out.exists() and any(out.iterdir()):
            raise CommandError(f"{out} is not empty: give a new folder")
        out.mkdir(parents=True, exist_ok=True)
        (out / "bundle.json").write_text(json.dumps(bundle), encoding="utf-8")
        env = {
            **os.environ,
            # The rehearsal's own database, never the configured one (the runner checks).
            "DATABASE_URL": f"sqlite:///{(out / DATABASE_FILE).resolve()}",
            "INTRUDER_VAR_DIR": str(out.resolve()),
        }
        env.pop("DJANGO_CACHE_URL", None)
        command = [
            sys.executable,
            "-m",
            "intruder.rehearsal.runner",
            "--bundle",
            str(out / "bundle.json"),
            "--out",
            str(out),
            "--participants",
            str(participants),
            "--mix",
            str(options["mix"]),
            "--seed",
            str(options["seed"]),
            "--speed",
            str(options["speed"]),
            "--arrival-minutes",
            str(options["arrival_minutes"]),
            "--concurrency",
            str(options["concurrency"]),
            "--target-ci",
            str(options["target_ci"]),
            *(["--no-report"] if options["no_report"] else []),
            *(arg for fault in options["fault"] for arg in ("--fault", fault)),  # type: ignore[attr-defined]
        ]
        self.stdout.write(f"Rehearsing {study.slug} with {participants} simulated participants")
        code = subprocess.run(command, env=env, check=False).returncode
        summary = out / "summary.md"
        if summary.exists():
            self.stdout.write(summary.read_text(encoding="utf-8"))
        if code:
            raise CommandError(
                "the rehearsal found violations (above; rehearsal.json names the participants)"
                if summary.exists()
                else f"the rehearsal stopped (exit {code})"
            )
