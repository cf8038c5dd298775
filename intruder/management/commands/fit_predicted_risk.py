"""Refit the predicted-human-risk model on your own studies with intruder data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from intruder.lookup import by_slug
from intruder.models import Study
from intruder.risk import predicted
from intruder.risk.calibration import CalibrationError, calibration_fit


class Command(BaseCommand):
    help = (
        "Fit the predicted-human-risk model (2 parameters) on studies with intruder judgments "
        "and a finished attack run, and write the calibration to --out; point "
        "INTRUDER_PREDICTED_CALIBRATION at it to use it instead of the shipped one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slugs", nargs="+", help="The studies' slugs.")
        parser.add_argument("--out", required=True, type=Path, help="Calibration JSON to write.")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the bootstrap draws.")

    def handle(self, *args: Any, **options: Any) -> None:
        studies = []
        for slug in options["slugs"]:
            studies.append(by_slug(Study, slug, "study"))
        try:
            calibration = calibration_fit(studies, seed=options["seed"])
        except CalibrationError as error:
            raise CommandError(str(error)) from None
        options["out"].parent.mkdir(parents=True, exist_ok=True)
        predicted.save_calibrations([calibration], options["out"])
        self.stdout.write(
            f"fitted on {calibration.fitted_on} at N = {calibration.n_candidates}: "
            f"a = {calibration.a:.3f}, b = {calibration.b:.3f}; wrote {options['out']}"
        )
