"""The rehearsal's own process: a throwaway database, the site, the sandbox Prolific, the crowd.

Started by `manage.py rehearse` (`python -m intruder.rehearsal.runner --bundle ... --out
DIR`) with DATABASE_URL pointing at a new SQLite file inside DIR, or at an empty PostgreSQL
database whose name starts with `rehearsal_`; it refuses any other database, so nothing it
does can reach the configured one. It migrates that database, loads the study's copy
(`bundle.py`), serves the site on a loopback port (Django's threaded server in this process,
or with `--served` gunicorn and job workers as a deployment runs them, on the rehearsal's
clock through `clock.SharedOffset`: `sites.py`) and the sandbox Prolific beside it,
publishes the study there, plays the crowd through real HTTP on the rehearsal's clock
(`clock.py`), then does the researcher's side as a researcher would:
sync, approvals under the study's rules, the identification bonus under its rule (and the
same bonus pressed again under another label), the analysis and the risk report with a cheap
attack. It writes `rehearsal.json` and `summary.md` to DIR and exits 1 on any violation.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

DATABASE_FILE = "rehearsal.sqlite3"
# A PostgreSQL database the rehearsal may use: named so, and empty when it starts.
DATABASE_PREFIX = "rehearsal_"
CLOCK_FILE = "clock.bin"
# What the sandbox points this process's settings at; a served site's processes get them too.
SANDBOX_SETTINGS = (
    "PROLIFIC_API_TOKEN",
    "PROLIFIC_API_URL",
    "PROLIFIC_WORKSPACE_ID",
    "PROLIFIC_WEBHOOK_SECRET",
)
REPO = Path(__file__).resolve().parents[2]
PROGRESS_FILE = "progress.json"  # {"done", "total", "stage"}: read by the job that started it
BONUS_PER_IDENTIFIED = Decimal("0.50")
BONUS_LABEL = "Identification bonus"
# The researcher presses pay again under another label: the same judgments must not be paid
# twice (a rehearsal that never tries it cannot show it holds).
SECOND_BONUS_LABEL = "Identification bonus (sent again)"
# Prolific's service fee as a share of rewards and bonuses: an assumed 33.3 % (not checked
# against Prolific, unreachable here); the summary tells the researcher to check their terms.
PROLIFIC_FEE_SHARE = Decimal("0.333")
FAULTS = ("bonus_to_excluded", "drop_judgment", "hide_submission", "change_report_number")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--participants", type=int, required=True)
    parser.add_argument("--mix", default="")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--arrival-minutes", type=float, default=10.0)
    parser.add_argument("--target-ci", type=float, default=5.0)
    parser.add_argument("--timeout-minutes", type=float, default=None)
    parser.add_argument("--no-report", action="store_true")
    parser.add_argument("--fault", choices=FAULTS, action="append", default=[])
    parser.add_argument(
        "--served", action="store_true", help="Serve with gunicorn and job workers."
    )
    parser.add_argument("--job-workers", type=int, default=2, help="With --served.")
    return parser.parse_args(argv)


def database_check(out: Path) -> None:
    """Refuse to run on any database but the throwaway file in `out` or an empty PostgreSQL
    database named `rehearsal_...` (checked for tables once Django is set up)."""
    url = os.environ.get("DATABASE_URL", "")
    expected = f"sqlite:///{(out / DATABASE_FILE).resolve()}"
    name = url.rsplit("/", 1)[-1].split("?")[0]
    if url == expected or (url.startswith("postgres") and name.startswith(DATABASE_PREFIX)):
        return
    raise SystemExit(
        f"rehearsal: refusing to run on {url!r}: the rehearsal runs only on its own throwaway "
        f"database ({expected}, or an empty PostgreSQL database named {DATABASE_PREFIX}...)"
    )


def database_empty_check() -> None:
    """Refuse a database that already holds tables: a rehearsal's is new."""
    from django.db import connection

    if connection.vendor != "sqlite" and connection.introspection.table_names():
        raise SystemExit(
            f"rehearsal: refusing to run on {connection.settings_dict['NAME']!r}: it already "
            "holds tables, and the rehearsal's database must be a new, empty one"
        )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    database_check(args.out)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "intruder.settings")
    import django

    django.setup()
    import logging

    logging.getLogger("intruder.prolific").setLevel(logging.ERROR)
    logging.getLogger("django.request").setLevel(logging.CRITICAL)
    from django.core.management import call_command

    database_empty_check()
    call_command("migrate", verbosity=0)
    from intruder.rehearsal.clock import SharedOffset, VirtualClock, clock_install

    shared = SharedOffset(args.out / CLOCK_FILE, create=True) if args.served else None
    clock = VirtualClock(publish=shared.write if shared else None)
    clock_install(clock)
    return Rehearsal(args, clock).run()


class Rehearsal:
    """One rehearsal, from the empty database to its verdict."""

    def __init__(self, args: argparse.Namespace, clock: Any) -> None:
        self.args = args
        self.clock = clock
        self.started = time.monotonic()

    def progress(self, done: int, total: int, stage: str) -> None:
        """Write where the rehearsal stands, atomically (a reader never sees half a file)."""
        path = self.args.out / PROGRESS_FILE
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps({"done": done, "total": total, "stage": stage}))
        partial.replace(path)

    def run(self) -> int:
        from intruder.rehearsal.bundle import bundle_load
        from intruder.rehearsal.crowd import mix_for, mix_parse

        bundle = json.loads(self.args.bundle.read_text(encoding="utf-8"))
        self.mix = mix_for(
            mix_parse(self.args.mix),
            catch_trials=any(target["catch"] for target in bundle["targets"]),
            default=not self.args.mix.strip(),
        )
        total = self.args.participants
        self.progress(0, total, "copying the study into the rehearsal's database")
        self.study = bundle_load(bundle)
        try:
            self._serve()
            self._publish()
            records = self._play_crowd()
            self.progress(total, total, "the researcher's side: sync, approvals, bonus, report")
            researcher = self._researcher_side(records)
            result = self._verdict(records, researcher)
        finally:  # a served site's processes never outlive the rehearsal
            if hasattr(self, "stage"):
                self.stage.stop()
            if hasattr(self, "fake"):
                self.fake.stop()
        (self.args.out / "rehearsal.json").write_text(json.dumps(result, indent=2, default=str))
        from intruder.rehearsal.summary import summary_markdown

        (self.args.out / "summary.md").write_text(summary_markdown(result), encoding="utf-8")
        return 1 if result["violations_total"] else 0

    # --- the stage --------------------------------------------------------------------------

    def _serve(self) -> None:
        from django.conf import settings

        from intruder.prolific.sandbox import sandbox_start
        from intruder.rehearsal.sites import EmbeddedSite, ServedSite

        if self.args.served:
            self.stage = ServedSite(self.args.out / CLOCK_FILE, self.args.job_workers)
        else:
            self.stage = EmbeddedSite()
        self.site = self.stage.url
        self.fake = sandbox_start(port=0, site_url=self.site)
        self.stage.start({name: str(getattr(settings, name)) for name in SANDBOX_SETTINGS})
        self._deliveries_act()
        import httpx

        httpx.get(f"{self.site}/prolific/webhook/", timeout=300)  # imports the URLconf once

    def _deliveries_act(self) -> None:
        """Count each webhook on its way as acting: the clock must not skip past a signed
        delivery before the site has it (its timestamp would read as a replay)."""
        fake, clock = self.fake, self.clock
        send, make = fake._deliver, fake._event

        def event(event_type: str, resource: dict) -> dict:
            clock.arrivals(1)  # before its sender thread starts
            return make(event_type, resource)

        def deliver(event_record: dict) -> None:
            try:
                send(event_record)
            finally:
                clock.arrived()

        fake._event, fake._deliver = event, deliver

    def _publish(self) -> None:
        from intruder.prolific.client import client_from_settings
        from intruder.prolific.services import study_draft_create, study_transition

        self.client = client_from_settings(echo=lambda line: None)
        # Prolific times a submission out some time after its estimated completion time; the
        # rehearsal's assumption (documented) is twice the estimate unless told otherwise.
        terms = json.loads(self.args.bundle.read_text(encoding="utf-8"))["prolific"]
        self.terms = terms
        self.timeout_minutes = self.args.timeout_minutes or 2 * terms["estimated_minutes"]
        study_draft_create(
            study=self.study,
            client=self.client,
            entry_url=f"{self.site}/s/{self.study.slug}/",
            places=self.args.participants,
            reward_minor=terms["reward_minor"],
            estimated_minutes=terms["estimated_minutes"],
        )
        study_transition(study=self.study, client=self.client, action="publish")
        self.study.refresh_from_db()

    # --- the crowd --------------------------------------------------------------------------

    def _truth(self) -> Any:
        from django.db import connection

        from intruder.models import Assignment

        persons = list(self.study.targets.filter(catch=False).values_list("name", flat=True))
        cache: dict[int, tuple[str, str, list[str], bool]] = {}
        lock = threading.Lock()

        def person_of(assignment_id: int) -> tuple[str, str, list[str], bool]:
            with lock:
                if assignment_id not in cache:
                    target = (
                        Assignment.objects.select_related("text__description__target")
                        .get(pk=assignment_id)
                        .text.description.target
                    )
                    # A player's thread lives minutes; holding its connection that long would
                    # take one of the database's for every participant at once (PostgreSQL
                    # refuses past max_connections: measured at 500).
                    connection.close()
                    others = [p for p in persons if p != target.name]
                    cache[assignment_id] = (target.name, target.group, others, target.catch)
                return cache[assignment_id]

        return person_of

    def _play_crowd(self) -> list[Any]:
        from django.db import connections

        from intruder.rehearsal.crowd import TEXTWASH_RIGHT_RATE, crowd_draw
        from intruder.rehearsal.players import Latencies, Player, Stage

        self.latencies = Latencies()
        stage = Stage(
            site=self.site,
            slug=self.study.slug,
            prolific_study_id=self.study.prolific_study_id,
            fake=self.fake,
            clock=self.clock,
            latencies=self.latencies,
            person_of=self._truth(),
            right_rate=dict(TEXTWASH_RIGHT_RATE),
            timeout_s=60 * self.timeout_minutes,
        )
        kinds = crowd_draw(self.mix, self.args.participants, self.args.seed)
        # A launch: most arrive in the first minutes (exponential gaps, a third of the window
        # on average), as Prolific's notified participants do.
        rng = random.Random(self.args.seed)
        scale = 60 * self.args.arrival_minutes / 3
        arrivals = sorted(
            min(rng.expovariate(1 / scale), 60 * self.args.arrival_minutes) for _ in kinds
        )
        t0 = self.clock.seconds()

        records: list[Any] = [None] * len(kinds)
        lock = threading.Lock()

        def play(index: int) -> None:
            # One thread per participant, counted as acting from its arrival to its end, so
            # the clock skips only while every participant reads, types or is away.
            try:
                records[index] = Player(stage, kinds[index], index, self.args.seed).play()
            finally:
                connections.close_all()
                with lock:
                    done = sum(record is not None for record in records)
                    self.progress(done, len(kinds), "the simulated crowd is playing")
                self.clock.arrived()

        threads = []
        cpu_before = time.process_time()
        site_before = self.stage.cpu_seconds()
        with self.clock.acting():
            for index, at in enumerate(arrivals):
                self.clock.sleep(t0 + at - self.clock.seconds())
                self.clock.arrivals(1)
                thread = threading.Thread(target=play, args=(index,), daemon=True)
                thread.start()
                threads.append(thread)
        for thread in threads:
            thread.join()
        self.crowd_process_cpu = time.process_time() - cpu_before
        self.site_cpu = None if site_before is None else self.stage.cpu_seconds() - site_before
        self.fake.wait_deliveries()
        return records

    # --- the researcher ---------------------------------------------------------------------

    def _researcher_side(self, records: list[Any]) -> dict[str, Any]:
        from intruder.evidence.selectors import answer_excluded, study_rules
        from intruder.models import Judgment, Participant
        from intruder.prolific.bonuses import bonus_select
        from intruder.prolific.client import ProlificError
        from intruder.prolific.services import (
            ProlificActionRefused,
            bonuses_pay,
            study_sync,
            submission_rows,
            submissions_review,
        )

        study = self.study
        study_sync(study=study, client=self.client)
        rules = study_rules(study)
        approve = [
            p.prolific_pid
            for p in Participant.objects.filter(
                study=study, status=Participant.Status.COMPLETED
            ).prefetch_related("judgments")
            if any(not answer_excluded(j, rules) for j in p.judgments.all())
        ]
        if approve:
            submissions_review(study=study, client=self.client, pids=approve, kind="approve")
        if "drop_judgment" in self.args.fault:
            Judgment.objects.filter(participant__study=study).order_by("pk").first().delete()
        if "bonus_to_excluded" in self.args.fault:
            # A fault past every check of the platform: money sent straight to a bot.
            bots = [r.pid for r in records if r.kind in ("careless", "script_bot") and r.answers]
            setup = self.client.bonus_setup(study.prolific_study_id, [(bots[0], 0.5)])
            self.client.bonus_pay(setup["id"])
        errors, amounts = [], {}
        for label in (BONUS_LABEL, SECOND_BONUS_LABEL):
            # As the bonus page does: who the study's rule pays, then pay exactly that.
            selection = bonus_select(study=study, per_identified=BONUS_PER_IDENTIFIED, label=label)
            amounts = amounts or selection.amounts
            try:
                if selection.amounts:
                    bonuses_pay(
                        study=study,
                        client=self.client,
                        amounts=selection.amounts,
                        label=label,
                        judgments=selection.judgments,
                        overrides=selection.overrides,
                    )
            except (ProlificActionRefused, ProlificError) as error:  # a finding, not a crash
                errors.append(f"{label}: {error}")
        listed = {row.prolific_pid for row in submission_rows(study)}
        if "hide_submission" in self.args.fault and listed:
            listed.discard(sorted(listed)[0])
        report = {} if self.args.no_report else self._reports()
        if "change_report_number" in self.args.fault and report:
            form = sorted(report)[-1]
            quantity = sorted(report[form])[0]
            report[form][quantity] = "changed"
        return {
            "approved": approve,
            "bonus_amounts": {pid: str(a) for pid, a in amounts.items()},
            "bonus_errors": errors,
            "listed": listed,
            "report_numbers": report,
        }

    def _reports(self) -> dict[str, dict[str, Any]]:
        """Write the analysis and the risk report; return each form's human-rate numbers."""
        from intruder.rehearsal.report_forms import report_numbers

        return report_numbers(self.study, self.args.out)

    # --- the verdict ------------------------------------------------------------------------

    def _verdict(self, records: list[Any], researcher: dict[str, Any]) -> dict[str, Any]:
        from collections import Counter

        from intruder.rehearsal.crowd import TEXTWASH_RIGHT_RATE
        from intruder.rehearsal.invariants import check_invariants
        from intruder.rehearsal.plan import plan_dicts, study_plan

        study_id = self.study.prolific_study_id
        paid: dict[str, list[dict[str, Any]]] = {}
        for study, pid, amount in self.fake.payments:  # money Prolific actually paid
            if study == study_id:
                paid.setdefault(pid, []).append({"amount": amount})
        submissions = {
            s["participant_id"]: s["status"]
            for s in self.fake.submissions.values()
            if s["study_id"] == study_id
        }
        violations = check_invariants(
            study=self.study,
            records=records,
            paid=paid,
            listed_submissions=researcher["listed"],
            prolific_submissions=submissions,
            report_numbers=researcher["report_numbers"],
        )
        kinds = Counter(r.kind.value for r in records)
        reward = Decimal(self.terms["reward_minor"]) / 100
        rewarded = len(researcher["approved"])
        bonus_total = sum(Decimal(str(p["amount"])) for ps in paid.values() for p in ps)
        texts_by_group = Counter(
            self.study.targets.filter(descriptions__anonymizations__status="released").values_list(
                "group", flat=True
            )
        )
        plan = study_plan(
            texts_by_group=dict(texts_by_group),
            q_by_group=TEXTWASH_RIGHT_RATE,
            participants=self.args.participants,
            items=self.study.items_per_participant,
            judgments_per_text=self.study.judgments_per_text,
            rule=self.study.identified_rule,
            target_ci=self.args.target_ci,
        )
        latency = {
            step: {
                "n": len(ms),
                "p50_ms": round(statistics.median(ms), 1),
                "p95_ms": round(_p95(ms), 1),
            }
            for step, ms in sorted(self.latencies.by_step.items())
        }
        return {
            "study": self.study.slug,
            "participants": len(records),
            "players": [
                {
                    "pid": r.pid,
                    "kind": r.kind.value,
                    "completed": r.completed,
                    "answers": len(r.answers),
                    "refused": r.refused,
                    "errors": r.errors,
                }
                for r in records
            ],
            "seed": self.args.seed,
            "study_seconds_skipped": round(self.clock.skipped_seconds, 1),
            "faults_seeded": self.args.fault,
            "kinds": dict(kinds),
            "outcomes": {
                "entered": sum(r.entered for r in records),
                "completed": sum(r.completed for r in records),
                "returned": sum(r.returned for r in records),
                "timed_out": sum(r.timed_out for r in records),
                "refused": sum(bool(r.refused) for r in records),
                "answers": sum(len(r.answers) for r in records),
            },
            "violations": [v.__dict__ for v in violations],
            "violations_total": sum(v.count for v in violations),
            "costs": {
                "currency": "GBP",
                "rewards": str(reward * rewarded),
                "bonuses": str(bonus_total),
                "prolific_fee": str(
                    ((reward * rewarded + bonus_total) * PROLIFIC_FEE_SHARE).quantize(
                        Decimal("0.01")
                    )
                ),
            },
            "latency": latency,
            "plan": {"target_half_width_pct": self.args.target_ci, "groups": plan_dicts(plan)},
            "researcher": {
                "approved": len(researcher["approved"]),
                "bonus_errors": researcher["bonus_errors"],
                "report_numbers": researcher["report_numbers"],
            },
            "wall_seconds": round(time.monotonic() - self.started, 1),
            "cpu": self._cpu(records, latency),
        }

    def _cpu(self, records: list[Any], latency: dict[str, Any]) -> dict[str, Any]:
        """The crowd's CPU (its threads' own) and the site's, apart, while the crowd played.

        Embedded, the site is the rest of this process (with the sandbox); served, it is
        gunicorn's and the job workers' processes, and the rest of this process is the
        sandbox's.
        """
        crowd = sum(r.cpu_seconds for r in records)
        rest = self.crowd_process_cpu - crowd
        site = rest if self.site_cpu is None else self.site_cpu
        return {
            "crowd_seconds": round(crowd, 1),
            "crowd_phase_process_seconds": round(self.crowd_process_cpu, 1),
            "site_seconds": round(site, 1),
            "sandbox_seconds": None if self.site_cpu is None else round(rest, 1),
            "site": self.stage.description,
            "participant_requests": sum(s["n"] for s in latency.values()),
        }


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


if __name__ == "__main__":
    sys.exit(main())
