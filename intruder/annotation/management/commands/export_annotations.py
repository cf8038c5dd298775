"""Export a project's submitted annotations: TAB JSON, doccano JSONL or CSV."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from intruder.annotation.exports import FORMATS, agreement_export, export_bytes
from intruder.annotation.models import Project
from intruder.lookup import by_slug


class Command(BaseCommand):
    help = "Export a project's annotations (TAB standoff JSON, doccano JSONL or CSV)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument("--format", choices=sorted(FORMATS), default="tab")
        parser.add_argument("--out", required=True, help="file to write")
        parser.add_argument(
            "--agreement", default=None, help="also write inter-annotator agreement (.json/.csv)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        project = by_slug(Project, options["project"], "annotation project")
        data = export_bytes(project=project, fmt=options["format"])
        Path(options["out"]).write_bytes(data)
        self.stdout.write(f"wrote {options['out']} ({len(data)} bytes, {options['format']})")
        if options["agreement"]:
            path = Path(options["agreement"])
            fmt = "csv" if path.suffix.lower() == ".csv" else "json"
            path.write_bytes(agreement_export(project=project, fmt=fmt))
            self.stdout.write(f"wrote {path} (agreement, {fmt})")
