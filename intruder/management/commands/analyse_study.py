"""Write every analysis table (CSV + JSON), a summary and the plots of one study."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from intruder.analysis.frames import AnalysisInputError
from intruder.analysis.report_files import write_report
from intruder.analysis.selectors import study_report
from intruder.lookup import by_slug
from intruder.models import Study


class Command(BaseCommand):
    help = (
        "Analyse a study's judgments as the Textwash paper did: per text, per person and group "
        "(Tables 3/4/7), self-report agreement, leakage n-grams (Tables 5/6/8), "
        "anonymisability (Table 9) and construct loss (Table 2)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="The study's slug.")
        parser.add_argument("--out", required=True, type=Path, help="Folder for the tables.")
        parser.add_argument(
            "--threshold",
            type=float,
            default=None,
            help="Cosine cut-off for 'identified' (default: the study's).",
        )
        parser.add_argument(
            "--no-construct-loss",
            action="store_true",
            help="Skip the spaCy POS analysis (Table 2), the slowest part.",
        )
        parser.add_argument("--no-plots", action="store_true", help="Write no SVG plots.")

    def handle(self, *args: Any, **options: Any) -> None:
        study = by_slug(Study, options["slug"], "study")
        threshold = options["threshold"]
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise CommandError(f"--threshold must lie in [0, 1], got {threshold}")
        try:
            report = study_report(
                study,
                include_construct_loss=not options["no_construct_loss"],
                threshold=threshold,
            )
        except AnalysisInputError as error:
            raise CommandError(f"the study's data cannot be analysed: {error}") from None
        written = write_report(report, options["out"], plots=not options["no_plots"])
        for warning in report.warnings:
            self.stderr.write(self.style.WARNING(f"warning: {warning}"))
        summary = report.summary()
        overall = summary.get("overall")
        if overall:
            self.stdout.write(
                f"{overall['n']} judged texts, {overall['n_judgments']} judgments: "
                f"{summary['overall_text']} texts identified ({summary['identification_rule']} "
                f"rule), mean cosine {overall['mean_cosine']:.2f}; "
                f"{overall['n_named_other']} judgment(s) named another person of the study"
            )
        self.stdout.write(self.style.SUCCESS(f"wrote {len(written)} files to {options['out']}"))
