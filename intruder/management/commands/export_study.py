"""Export a study's tables as CSV and JSONL files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from intruder.exchange.exports import FORMATS, export_study
from intruder.lookup import by_slug
from intruder.models import Study


class Command(BaseCommand):
    help = (
        "Write judgments, descriptions, anonymized texts, participants and targets of a study "
        "as <slug>_<table>.csv and .jsonl files."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("slug")
        parser.add_argument("--out", type=Path, required=True, help="Output directory.")
        parser.add_argument("--format", choices=FORMATS, help="Only this format.")

    def handle(self, *args: Any, **options: Any) -> None:
        study = by_slug(Study, options["slug"], "study")
        formats = (options["format"],) if options["format"] else FORMATS
        for path in export_study(study, options["out"], formats):
            self.stdout.write(str(path))
