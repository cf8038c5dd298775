"""Release assignments past their study's time limit and time out their participants."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from intruder.lookup import by_slug
from intruder.models import Study
from intruder.services.assignment import studies_release_expired, study_release_expired


class Command(BaseCommand):
    help = (
        "Release intruder assignments left active past the study's time limit (their slots "
        "go to the next participants) and mark their participants timed out, as well as "
        "intruders who never got a text and were last seen before the limit. `run_worker` "
        "does this every minute; run this from cron where no polling worker runs (RQ)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--study", help="Only this study (slug); default: every study.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["study"]:
            study = by_slug(Study, options["study"], "study")
            sweep = study_release_expired(study=study)
        else:
            sweep = studies_release_expired()
        self.stdout.write(
            f"released {sweep.released} expired assignment(s), "
            f"{sweep.timed_out} participant(s) timed out"
        )
