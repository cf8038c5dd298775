"""Risk's parts of the review pages (`intruder.views.researcher.review_parts`): the guard's
panel on the review list, and the texts the pre-release risk check flags before a release."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from intruder.models import Study
from intruder.risk.flags import latest_risk_check, risk_flags
from intruder.risk.guard_views import guard_form, guard_skipped_reasons, latest_guard_results
from intruder.views.researcher.review_parts import ReviewParts, register


def guard_panel(study: Study) -> tuple[dict[str, Any], Mapping[int, Any]]:
    """Return the review list's guard context (form, latest run, its job) and its rows."""
    run, job, rows = latest_guard_results(study)
    context = {
        "guard_run": run,
        "guard_job": job,
        "guard_form": guard_form(study),
        "guard_skipped": guard_skipped_reasons(run),
    }
    return context, rows


def machine_flags(study: Study) -> Collection[int]:
    """Return the ids of the texts the latest risk check's attacks ranked first."""
    return set(risk_flags(latest_risk_check(study)))


def register_review_parts() -> None:
    register(ReviewParts(guard_panel=guard_panel, machine_flags=machine_flags))
