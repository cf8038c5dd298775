"""Load the demo studies (idempotent) and print how to use them."""

from __future__ import annotations

import os
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from intruder.auth import DEMO_PASSWORD
from intruder.demo import load_demo
from intruder.models import AnonymizedText


class Command(BaseCommand):
    help = (
        "Create the demo researcher account, a description-collection study and an intruder "
        "study whose descriptions are anonymized by the shipped model and released."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--password",
            default=os.environ.get("DEMO_RESEARCHER_PASSWORD", DEMO_PASSWORD),
            help="Password of the demo researcher (env DEMO_RESEARCHER_PASSWORD). The default, "
            "well-known one logs in only with INTRUDER_DEMO=1 (scripts/demo.sh).",
        )
        parser.add_argument(
            "--base-url",
            default=os.environ.get("DEMO_BASE_URL", "http://127.0.0.1:8000"),
            help="Where the site is served, for the printed links.",
        )
        parser.add_argument(
            "--no-attacks",
            action="store_true",
            help="Skip the demo's risk check and attack run (cheap attacks, ~1 minute).",
        )
        parser.add_argument(
            "--no-anonymize",
            action="store_true",
            help="Leave anonymization to the worker (manage.py run_worker).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()

        def say(line: str) -> None:
            self.stdout.write(f"  [{time.monotonic() - started:5.0f} s] {line} ...")

        demo = load_demo(
            password=options["password"],
            anonymize=not options["no_anonymize"],
            attacks=not options["no_attacks"],
            say=say,
            echo=self._progress_printer(),
        )
        job = demo.anonymization_job
        if job is not None:
            if job.status != "succeeded":
                raise CommandError(
                    f"anonymization job {job.pk} {job.status}: {job.message}\n{job.error}\n"
                    "Fix the cause (is the model at anonymize/models/?), then run "
                    "`manage.py load_demo` again: it resumes where it stopped."
                )
            self.stdout.write(f"anonymized: {job.result}")
        for what, counts in demo.imported.items():
            if counts:
                self.stdout.write(f"imported {what}: {counts}")
        intruder = demo.intruder
        for run in (demo.risk_check, demo.risk_report):
            if run is not None and run.job.status != "succeeded":
                raise CommandError(
                    f"attack run {run.pk} {run.job.status}: {run.job.message}\n{run.job.error}\n"
                    "Run `manage.py load_demo` again: it resumes where it stopped."
                )
        released = AnonymizedText.objects.filter(
            description__study=intruder, status=AnonymizedText.Status.RELEASED
        ).count()
        drafts = AnonymizedText.objects.filter(
            description__study=intruder, status=AnonymizedText.Status.DRAFT
        ).count()
        say(f"done in {time.monotonic() - started:.0f} s")
        base = options["base_url"].rstrip("/")
        self.stdout.write(
            "\n".join(
                [
                    "",
                    "Demo ready.",
                    f"  Researcher pages: {base}/r/   (admin: {base}/admin/)",
                    f"    username: {demo.username}",
                    f"    password: {demo.password}"
                    + (
                        "   (works only with INTRUDER_DEMO=1, as scripts/demo.sh sets)"
                        if demo.password == DEMO_PASSWORD and not settings.INTRUDER_DEMO
                        else ""
                    ),
                    "  Writer (description collection), one link per made-up Prolific ID:",
                    f"    {base}/s/{demo.collection.slug}/"
                    "?PROLIFIC_PID=DEMOWRITER01&STUDY_ID=demo&SESSION_ID=w1",
                    f"  Intruder test ({released} texts released, {drafts} drafts to review):",
                    f"    {base}/s/{intruder.slug}/"
                    "?PROLIFIC_PID=DEMOINTRUDER01&STUDY_ID=demo&SESSION_ID=i1",
                    "  Change the PROLIFIC_PID to play another participant.",
                    f"  Risk report (humans vs machine): {base}/r/{intruder.slug}/risk/",
                    f"  Risk flags before release: {base}/r/{intruder.slug}/review/",
                    f"  PSI annotation project: {base}/annotate/demo-annotation/",
                ]
            )
        )

    def _progress_printer(self, every_s: float = 3.0) -> Any:
        """Return echo(done, total, message): a line at most every `every_s` and at the end."""
        last = {"at": -every_s}

        def echo(done: int, total: int, message: str = "") -> None:
            now = time.monotonic()
            if now - last["at"] < every_s and done < total:
                return
            last["at"] = now
            share = f"{100 * done / total:3.0f} %" if total else "  ..."
            self.stdout.write(f"          {share}  {done}/{total}  {message}")

        return echo
