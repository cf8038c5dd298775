"""Rehearse a study with a simulated crowd on a throwaway copy, before it spends money."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from intruder.lookup import by_slug
from intruder.models import Study
from intruder.rehearsal.launch import RehearsalOptions, RehearsalRefused, rehearsal_run
from intruder.rehearsal.runner import FAULTS


class Command(BaseCommand):
    help = (
        "Play the study with N simulated participants on a throwaway copy (its own SQLite "
        "database, the sandbox Prolific, the site on a loopback port), then do the "
        "researcher's side (sync, approvals, bonus, risk report) and check every invariant. "
        "Writes rehearsal.json and summary.md to --out; exits 1 on any violation."
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
            "--arrival-minutes",
            type=float,
            default=10.0,
            help="Study minutes over which participants arrive, most in the first ones.",
        )
        parser.add_argument(
            "--target-ci",
            type=float,
            default=5.0,
            help="Half-width (points) of the human rate's 95 %% interval to plan for.",
        )
        parser.add_argument(
            "--timeout-minutes",
            type=float,
            default=None,
            help="When the sandbox Prolific times out a participant who stopped answering "
            "(default: twice the study's estimated completion time).",
        )
        parser.add_argument("--no-report", action="store_true", help="Skip the risk report.")
        parser.add_argument(
            "--served",
            action="store_true",
            help="Serve the site with gunicorn and job workers in their own processes.",
        )
        parser.add_argument(
            "--database-url",
            default="",
            help="An empty PostgreSQL database named rehearsal_... (default: a SQLite file).",
        )
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
        choice = RehearsalOptions(
            participants=int(options["participants"]),  # type: ignore[arg-type]
            mix=str(options["mix"]),
            seed=int(options["seed"]),  # type: ignore[arg-type]
            arrival_minutes=float(options["arrival_minutes"]),  # type: ignore[arg-type]
            target_ci=float(options["target_ci"]),  # type: ignore[arg-type]
            report=not options["no_report"],
            timeout_minutes=options["timeout_minutes"],  # type: ignore[arg-type]
            faults=list(options["fault"]),  # type: ignore[call-overload]
            served=bool(options["served"]),
            database_url=str(options["database_url"]),
        )
        self.stdout.write(
            f"Rehearsing {study.slug} with {choice.participants} simulated participants "
            f"on a throwaway copy in {out}"
        )
        try:
            code, result = rehearsal_run(study, choice, out)
        except RehearsalRefused as refusal:
            raise CommandError(str(refusal)) from None
        summary = out / "summary.md"
        if summary.exists():
            self.stdout.write(summary.read_text(encoding="utf-8"))
        if code:
            if result is None:
                raise CommandError(f"the rehearsal stopped (exit {code}); see its output above")
            named = ", ".join(
                f"{v['name']} ({v['count']})" for v in result["violations"] if v["count"]
            )
            raise CommandError(
                f"the rehearsal found violations: {named}; {out}/rehearsal.json names who"
            )
