"""Run a study's Prolific side from the command line (the study page does the same).

Every subcommand takes --dry-run: the Prolific calls are printed (method, URL, body; never
the token) and nothing is sent or stored.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from intruder.lookup import by_slug
from intruder.models import Study
from intruder.prolific.bonuses import bonus_select
from intruder.prolific.client import ProlificError, client_from_settings
from intruder.prolific.models import ProlificAction
from intruder.prolific.services import (
    ProlificActionRefused,
    bonuses_pay,
    study_draft_create,
    study_sync,
    study_transition,
    submissions_review,
)

EVENT_TYPES = ("submission.status.change", "study.status.change")


class Command(BaseCommand):
    help = (
        "Prolific from the platform: create the draft, publish/pause/resume/stop, sync "
        "status and submissions, approve/reject, pay bonuses, subscribe the webhook. Needs "
        "PROLIFIC_API_TOKEN (except with --dry-run). Every subcommand takes --dry-run."
    )

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)

        def command(name: str, help_text: str, *, study: bool = True):
            p = sub.add_parser(name, help=help_text)
            p.add_argument("--dry-run", action="store_true", help="Print the calls; send none.")
            if study:
                p.add_argument("--study", required=True, help="The study's slug.")
            return p

        draft = command("draft", "Create the Prolific draft and store its study ID.")
        draft.add_argument("--entry-url", required=True, help="The study's public entry URL.")
        draft.add_argument("--places", type=int, required=True)
        draft.add_argument("--reward", type=int, required=True, help="In pence/cents.")
        draft.add_argument("--minutes", type=int, required=True, help="Estimated time.")
        draft.add_argument(
            "--completion-action",
            choices=["AUTOMATICALLY_APPROVE", "MANUALLY_REVIEW"],
            default="MANUALLY_REVIEW",
        )
        for name in ("publish", "pause", "resume", "stop"):
            command(name, f"{name.capitalize()} the Prolific study.")
        command("sync", "Read Prolific's status, counts and submissions.")
        approve = command("approve", "Approve submissions.")
        approve.add_argument("pids", nargs="+")
        approve.add_argument(
            "--override",
            default="",
            help="Why to approve participants who did not complete here (needed for them).",
        )
        reject = command("reject", "Reject submissions (a reason of 100+ characters).")
        reject.add_argument("pids", nargs="+")
        reject.add_argument("--reason", required=True)
        reject.add_argument("--category", default="OTHER")
        bonus = command(
            "bonus",
            "Pay a bonus per identified text: submissions of the study who completed, for "
            "answers the exclusion rules keep and no other label paid.",
        )
        bonus.add_argument("--per-identified", required=True, help="e.g. 0.50 (major units)")
        bonus.add_argument("--label", default="identification", help="Idempotency label.")
        bonus.add_argument(
            "--include",
            action="append",
            default=[],
            metavar="PID",
            help="Also pay this participant, outside the default rule (needs --include-reason).",
        )
        bonus.add_argument("--include-reason", default="", help="Why (10+ characters).")
        subscribe = command(
            "subscribe", "Create the secret and webhook subscriptions.", study=False
        )
        subscribe.add_argument("--target-url", required=True)
        sandbox = command(
            "sandbox",
            "Rehearse: the fake Prolific on a loopback port, and the site pointed at it.",
            study=False,
        )
        sandbox.add_argument("--port", type=int, default=8765, help="The fake's port.")
        sandbox.add_argument(
            "--site-port",
            type=int,
            default=8010,
            help="The site's port (not the demo's 8000, so both can run side by side).",
        )
        sandbox.add_argument(
            "--throwaway-database",
            action="store_true",
            help="The configured database is a throwaway: rehearse on it as it is (otherwise "
            "a SQLite database is copied first and any other database is refused).",
        )
        sandbox.add_argument(
            "--no-worker", action="store_true", help="Do not start a background worker."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "sandbox":
            self._sandbox(options)
            return
        dry_run = options["dry_run"]
        client = client_from_settings(dry_run=dry_run, echo=self.stdout.write)
        if not dry_run and not settings.PROLIFIC_API_TOKEN:
            raise CommandError("PROLIFIC_API_TOKEN is not set (or use --dry-run).")
        try:
            self._run(options, client)
        except (ProlificActionRefused, ProlificError) as error:
            raise CommandError(str(error)) from error
        finally:
            client.close()

    def _run(self, options: dict, client) -> None:
        action = options["action"]
        if action == "subscribe":
            self._subscribe(options, client)
            return
        study = by_slug(Study, options["study"], "study")
        if action == "draft":
            created = study_draft_create(
                study=study,
                client=client,
                entry_url=options["entry_url"],
                places=options["places"],
                reward_minor=options["reward"],
                estimated_minutes=options["minutes"],
                completion_action=options["completion_action"],
            )
            if not created.get("dry_run"):
                self.stdout.write(f"draft {created['id']} created; study ID stored")
        elif action in ("publish", "pause", "resume", "stop"):
            answer = study_transition(study=study, client=client, action=action)
            self.stdout.write(f"Prolific status: {answer.get('status', '(dry run)')}")
        elif action == "sync":
            state = study_sync(study=study, client=client)
            if state is not None:
                self.stdout.write(f"Prolific status: {state.status}; counts: {state.counts}")
        elif action in ("approve", "reject"):
            done = submissions_review(
                study=study,
                client=client,
                pids=options["pids"],
                kind=ProlificAction.Kind.APPROVE if action == "approve" else "reject",
                reason=options.get("reason", ""),
                category=options.get("category", "OTHER"),
                override=options.get("override", ""),
            )
            for a in done:
                self.stdout.write(f"{a.prolific_pid}: {a.kind} {a.status}")
        elif action == "bonus":
            try:
                per = Decimal(options["per_identified"])
            except InvalidOperation:
                raise CommandError("--per-identified must be a number, e.g. 0.50") from None
            try:
                chosen = bonus_select(
                    study=study,
                    per_identified=per,
                    label=options["label"],
                    include=options["include"],
                    include_reason=options["include_reason"],
                )
            except ValueError as error:
                raise CommandError(str(error)) from None
            for candidate in chosen.candidates:
                if candidate.prolific_pid not in chosen.amounts:
                    self.stdout.write(f"{candidate.prolific_pid}: not paid ({candidate.why_not})")
            for a in bonuses_pay(
                study=study,
                client=client,
                amounts=chosen.amounts,
                label=options["label"],
                judgments=chosen.judgments,
                overrides=chosen.overrides,
            ):
                self.stdout.write(f"{a.prolific_pid}: bonus {a.amount} {a.status}")

    def _sandbox(self, options: dict) -> None:
        """Start the fake, a worker and the site, on a database that may be written to."""
        from django.core.management import call_command

        from intruder.checks import PUBLIC_SECRET_KEY_MESSAGE, public_secret_key_in_use
        from intruder.prolific.sandbox import (
            SandboxRefused,
            controls_url,
            sandbox_database,
            sandbox_start,
        )

        if public_secret_key_in_use():  # the site would refuse to start; say so first
            raise CommandError(f"{PUBLIC_SECRET_KEY_MESSAGE} (Or DJANGO_DEBUG=1 to rehearse.)")
        try:
            database = sandbox_database(
                throwaway=options["throwaway_database"], copies_dir=settings.VAR_DIR / "sandbox"
            )
        except SandboxRefused as refusal:
            raise CommandError(str(refusal)) from None
        # A rehearsal on a copy: the demo account's well-known password logs in, as in the demo.
        settings.INTRUDER_DEMO = True
        site = f"http://127.0.0.1:{options['site_port']}"
        try:
            fake = sandbox_start(port=options["port"], site_url=site)
        except OSError as error:
            raise CommandError(f"Cannot use port {options['port']}: {error}") from None
        worker = None if options["no_worker"] else self._sandbox_worker()
        self.stdout.write(
            "Prolific SANDBOX (a rehearsal: nothing reaches Prolific, nobody is paid)\n"
            f"  database:       {database}\n"
            f"  the site:       {site}/ (log in as usual; the demo account researcher / "
            "intruder-demo works here too)\n"
            f"  fake API base:  {fake.base_url}\n"
            f"  participants:   {controls_url(fake)} (start, return, time out, complete; "
            "the address holds a secret: open it from here)\n"
            f"  worker:         {f'pid {worker.pid}' if worker else 'not started'}\n"
            "Create the Prolific draft on a study's Prolific page, publish it, then make "
            "participants act from the control page. Ctrl-C stops everything."
        )
        try:
            call_command("runserver", f"127.0.0.1:{options['site_port']}", use_reloader=False)
        finally:
            fake.stop()
            if worker is not None:
                worker.terminate()
                worker.wait(10)

    def _sandbox_worker(self):
        """Start `run_worker` on the sandbox's database (it runs the study's jobs)."""
        import os
        import subprocess
        import sys

        database = settings.DATABASES["default"]
        env = dict(os.environ, INTRUDER_DEMO="1")
        if database["ENGINE"].endswith("sqlite3"):
            env["DATABASE_URL"] = f"sqlite:///{database['NAME']}"
        return subprocess.Popen(
            [sys.executable, str(settings.BASE_DIR / "manage.py"), "run_worker"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _subscribe(self, options: dict, client) -> None:
        workspace = settings.PROLIFIC_WORKSPACE_ID
        if not workspace:
            raise CommandError("PROLIFIC_WORKSPACE_ID is not set.")
        secret = client.hook_secret_create(workspace)
        for event_type in EVENT_TYPES:
            subscription, hook_secret = client.hook_subscribe(
                workspace_id=workspace, event_type=event_type, target_url=options["target_url"]
            )
            client.hook_confirm(
                subscription.get("id", "<subscription id>"), hook_secret or "<X-Hook-Secret>"
            )
        if not secret.get("dry_run"):
            # Shown once to the operator, as Prolific shows it; the platform does not store it.
            self.stdout.write(
                "Subscribed and confirmed. Set this as PROLIFIC_WEBHOOK_SECRET on the server:\n"
                f"{secret.get('value', '')}"
            )
