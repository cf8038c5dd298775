"""Evaluate an anonymizer against a project's annotations with TAB's metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from intruder.annotation.evaluation import EvaluationError, evaluate_project, evaluation_write
from intruder.annotation.models import Project
from intruder.lookup import by_slug


class Command(BaseCommand):
    help = (
        "Score a system's masking against the project's submitted annotations with TAB's "
        "metrics; write metrics.json, system_spans.json (TAB's system-output format), "
        "gold_tab.json and CSV tables to --out."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument(
            "--system",
            required=True,
            help="model (the anonymizer), spacy (spaCy NER) or a system-output FILE.json",
        )
        parser.add_argument("--threshold", type=float, default=None, help="model: P(PSI) cut")
        parser.add_argument(
            "--model-dir", default=None, help="model: a model folder instead of the shipped one"
        )
        parser.add_argument("--out", required=True, help="folder for the results")

    def handle(self, *args: Any, **options: Any) -> None:
        project = by_slug(Project, options["project"], "annotation project")
        system = options["system"]
        upload = None
        if system not in ("model", "spacy"):
            path = Path(system)
            if not path.is_file():
                raise CommandError(f"--system: {system} is neither model, spacy nor a file")
            upload = path.read_bytes()
        try:
            evaluation = evaluate_project(
                project=project,
                system=system,
                threshold=options["threshold"],
                model_dir=options["model_dir"],
                upload=upload,
            )
        except EvaluationError as error:
            raise CommandError(str(error)) from None
        evaluation_write(evaluation, Path(options["out"]))
        m = evaluation.metrics
        self.stdout.write(
            f"{evaluation.system}: ER_di {m['recall_direct_entities']:.3f}, "
            f"ER_qi {m['recall_quasi_entities']:.3f}, token recall {m['token_recall']:.3f}, "
            f"precision {m['token_precision']:.3f} (weighted {m['weighted_token_precision']:.3f})"
            f" on {m['documents']} documents; written to {options['out']}"
        )
