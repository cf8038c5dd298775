"""Write a study's human-vs-machine risk report (HTML, PDF, CSV/JSON tables, plots) to a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from intruder.lookup import by_slug
from intruder.models import Study
from intruder.risk import attack_runs
from intruder.risk.background_uploads import BackgroundUploadError, parse_background_upload
from intruder.risk.models import AttackRun
from intruder.risk.pdf import cached_run_report
from intruder.risk.rendering import write_risk_report
from intruder.risk.selectors import latest_run
from intruder.services.jobs import job_run_or_follow


class Command(BaseCommand):
    help = (
        "Write the risk report of a study's latest attack run (or of --run ID) to --out: "
        "report.html, report.pdf, every table as CSV and JSON, summary.json and SVG plots. "
        "With --attack, first run attacks on the study's texts here (resumable, with progress)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The study's slug.")
        parser.add_argument("--out", required=True, type=Path, help="Folder for the report.")
        parser.add_argument("--run", type=int, help="Report this attack run (default: latest).")
        parser.add_argument(
            "--attack", action="store_true", help="Start a new attack run and run it here first."
        )
        parser.add_argument(
            "--attacks",
            default=",".join(attack_runs.CHEAP_ATTACKS),
            help="With --attack: comma-separated attacks (tria, tfidf, bm25, dense).",
        )
        parser.add_argument(
            "--methods",
            default="",
            help="With --attack: comma-separated methods (default: the study's methods, clear, "
            "spacy-ner).",
        )
        parser.add_argument("--folds", type=int, default=5, help="k of the k-fold background.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--background",
            type=Path,
            help="With --attack: background documents per target (CSV, JSONL, or a .txt named "
            "for its target key); default: the study's own descriptions, k-fold.",
        )
        parser.add_argument(
            "--distractors",
            type=Path,
            help="With --attack: a population of persons not in the study (CSV, JSONL, or a "
            ".txt named for the person), added as candidates to every background.",
        )
        parser.add_argument(
            "--budget",
            type=int,
            default=None,
            help="With --attack: knowledge budget b, descriptions known per person, drawn at "
            "random from the study's own (retrieval attacks only); default: all.",
        )
        parser.add_argument(
            "--resamples", type=int, default=None, help="With --budget: R draws (default 10)."
        )
        parser.add_argument("--no-pdf", action="store_true", help="Skip report.pdf.")

    def handle(self, *args: Any, **options: Any) -> None:
        study = by_slug(Study, options["slug"], "study")
        if options["attack"]:
            run = self._attack(study, options)
        elif options["run"]:
            run = study.attack_runs.filter(pk=options["run"]).first()
            if run is None:
                raise CommandError(f"study {study.slug} has no attack run {options['run']}")
        else:
            run = latest_run(study)
            if run is None:
                raise CommandError(
                    f"study {study.slug} has no attack run yet: start one on its risk page, or "
                    "rerun this command with --attack"
                )
        # The report the risk page shows, stored for the study's current data (the attack
        # job stores it as it ends): one report, not a second build of the same numbers.
        report = cached_run_report(run)
        title = f"Human vs machine re-identification risk: {study.title}"
        written = write_risk_report(report, options["out"], title=title, pdf=not options["no_pdf"])
        for warning in report.warnings:
            self.stderr.write(self.style.WARNING(f"warning: {warning}"))
        for paragraph in report.paragraphs:
            self.stdout.write(paragraph)
        self.stdout.write(f"wrote {len(written)} files to {options['out']}")

    def _attack(self, study: Study, options: dict[str, Any]) -> AttackRun:
        from tqdm import tqdm

        methods = [m for m in options["methods"].split(",") if m] or [
            *attack_runs.study_methods(study),
            attack_runs.CLEAR,
            attack_runs.SPACY_NER,
        ]
        documents: dict[str, str] = {}
        background = AttackRun.Background.CROSS_VALIDATED
        if options["background"]:
            path: Path = options["background"]
            try:
                documents = parse_background_upload(path.read_bytes(), path.name)
            except (OSError, BackgroundUploadError) as error:
                raise CommandError(str(error)) from None
            background = AttackRun.Background.UPLOADED
        distractors: dict[str, str] = {}
        if options.get("distractors"):
            path = options["distractors"]
            try:
                distractors = parse_background_upload(path.read_bytes(), path.name)
            except (OSError, BackgroundUploadError) as error:
                raise CommandError(str(error)) from None
        try:
            run = attack_runs.attack_run_start(
                study=study,
                user=None,
                attacks=[a for a in options["attacks"].split(",") if a],
                methods=methods,
                background=background,
                background_documents=documents,
                distractor_documents=distractors,
                folds=options["folds"],
                seed=options["seed"],
                knowledge_budget=options["budget"],
                budget_resamples=options["resamples"],
            )
        except attack_runs.AttackRunError as error:
            raise CommandError(str(error)) from None
        bar = tqdm(total=0, unit="result", desc=f"attack run {run.pk}")

        def echo(done: int, total: int, message: str) -> None:
            bar.total, bar.n = total, done
            bar.set_postfix_str(message[:60])
            bar.refresh()

        try:
            job_run_or_follow(run.job.pk, echo=echo)
        finally:
            bar.close()
        run.refresh_from_db()
        if run.job.status != "succeeded":
            raise CommandError(
                f"attack run {run.pk} {run.job.status}: {run.job.message}\n{run.job.error}\n"
                f"Retry it (study page or API); it resumes from the {run.results.count()} "
                "stored results."
            )
        return run
