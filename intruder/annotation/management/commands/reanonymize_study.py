"""Re-anonymize a study's descriptions with a retrained model (closing the annotation loop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from intruder.lookup import by_slug
from intruder.models import Study
from intruder.services import jobs
from intruder.services.anonymization import anonymization_job_start


class Command(BaseCommand):
    help = (
        "Anonymize a study's descriptions with a model folder (e.g. one trained with "
        "`python -m anonymize train --annotations`). The texts are saved as drafts of their "
        "own method, beside the earlier anonymizations; review and release them on the "
        "study's review page. Runs as an anonymize_study job: a crash resumes on rerun."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("study", help="study slug")
        parser.add_argument("--model-dir", required=True, help="the retrained model folder")
        parser.add_argument("--threshold", type=float, default=None, help="P(PSI) threshold")
        parser.add_argument(
            "--method", default=None, help="method name of the new texts (default: model-<folder>)"
        )
        parser.add_argument(
            "--queue", action="store_true", help="leave the job to the worker instead"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        study = by_slug(Study, options["study"], "study")
        model_dir = Path(options["model_dir"])
        if not (model_dir / "config.json").exists():
            raise CommandError(f"no model at {model_dir} (config.json missing)")
        method = (options["method"] or f"model-{model_dir.resolve().name}")[:50]
        params = {"model_dir": str(model_dir.resolve()), "method": method}
        if options["threshold"] is not None:
            params["threshold"] = options["threshold"]
        job, created = anonymization_job_start(study=study, params=params)
        if not created:
            raise CommandError(
                f"anonymization job {job.pk} is already {job.status} for this study; "
                "wait for it or cancel it first"
            )
        if options["queue"]:
            self.stdout.write(f"queued job {job.pk} (method {method})")
            return
        job = jobs.job_execute(job.pk) or job
        if job.status != "succeeded":
            raise CommandError(f"job {job.pk} {job.status}: {job.message}\n{job.error}")
        self.stdout.write(f"job {job.pk}: {job.result}; texts saved as method {method!r} drafts")
