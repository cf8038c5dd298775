"""Import target persons and descriptions into a study from a CSV or JSONL file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from intruder.exchange.imports import ImportValidationError, detect_format, import_study_data
from intruder.lookup import by_slug
from intruder.models import Study


class Command(BaseCommand):
    help = (
        "Import targets and descriptions (CSV or JSONL, including the Textwash study files) "
        "into a study. All rows are validated first; any error imports nothing."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("slug", help="Slug of the study to import into.")
        parser.add_argument("path", type=Path, help="A .csv or .jsonl file.")
        parser.add_argument("--format", choices=["csv", "jsonl"], help="Override the suffix.")

    def handle(self, *args: Any, **options: Any) -> None:
        study = by_slug(Study, options["slug"], "study")
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"no file {path}")
        try:
            fmt = options["format"] or detect_format(path.name)
            tally = import_study_data(study=study, content=path.read_bytes(), fmt=fmt)
        except ImportValidationError as exc:
            for error in exc.errors:
                self.stderr.write(str(error))
            raise CommandError(f"{len(exc.errors)} error(s); nothing was imported") from None
        self.stdout.write(
            f"imported into {study.slug}: {tally.targets_created} targets created "
            f"({tally.targets_reused} reused), {tally.descriptions_created} descriptions, "
            f"{tally.anonymized_created} Textwash anonymized texts"
        )
