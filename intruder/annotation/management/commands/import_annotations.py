"""Import annotations (TAB JSON, doccano JSONL, mention CSV) into a project as submitted work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from intruder.annotation.exports import IMPORT_ERRORS, import_error_text, parse_annotation_file
from intruder.annotation.models import Project
from intruder.annotation.services import annotations_import
from intruder.lookup import by_slug


class Command(BaseCommand):
    help = (
        "Import annotations into a project: .json (TAB standoff), .jsonl (doccano) or .csv "
        "(one mention per row). Each annotator becomes one annotation layer; documents "
        "missing from the project are created from the file's texts. Nothing is written if "
        "any line is malformed."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument("file", help="annotation file")
        parser.add_argument(
            "--replace", action="store_true", help="replace an annotator's existing work"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        project = by_slug(Project, options["project"], "annotation project")
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"no file {path}")
        try:
            documents = parse_annotation_file(
                project=project, name=path.name, data=path.read_bytes()
            )
            counts = annotations_import(
                project=project, documents=documents, replace=options["replace"]
            )
        except IMPORT_ERRORS as error:
            reason = import_error_text(error)
            raise CommandError(f"{path.name}: {reason}; nothing imported") from None
        self.stdout.write(f"imported {counts}")
