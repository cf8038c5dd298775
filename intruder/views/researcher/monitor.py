"""Monitoring page of a running study: participants with step and time, recruitment and
judgments-per-text plots, and the "study full" alert."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from intruder.models import Participant
from intruder.prolific.bulk_review import review_counts
from intruder.prolific.services import not_back_on_prolific, prolific_monitor_state
from intruder.reports.cache import cached_for_inputs
from intruder.selectors.monitoring import (
    judgments_per_text,
    participant_rows,
    recruitment_times,
    study_is_full,
    study_progress,
)
from intruder.web.access import study_for

MAX_ROWS = 500


@login_required
@require_GET
def study_participants(request: HttpRequest, slug: str) -> HttpResponse:
    """Show every participant's status, step and time spent, with the study's plots."""
    study, _ = study_for(request, slug)
    status = request.GET.get("status", "")
    rows = participant_rows(study)
    steps: dict[str, int] = {}
    for row in rows:
        steps[row.step] = steps.get(row.step, 0) + 1
    if status in Participant.Status.values:
        rows = [r for r in rows if r.status == status]
    progress = study_progress(study)
    # matplotlib (0.2 s) loads where a page draws, not at every Django process's start.
    from intruder.rendering.monitoring_plots import judgments_histogram, recruitment_plot

    plots = []
    # matplotlib's SVG writer escapes its text; no participant-written text is plotted.
    # Drawn once per state of their inputs (half a second of matplotlib each).
    times = recruitment_times(study)
    made_plots = [cached_for_inputs("recruitment", times, lambda: recruitment_plot(times))]
    if study.kind == "intruder":
        counts = (judgments_per_text(study), study.judgments_per_text)
        made_plots.append(
            cached_for_inputs("judgments-histogram", counts, lambda: judgments_histogram(*counts))
        )
    for made in made_plots:
        if made is not None:
            plots.append({"svg": mark_safe(made[0]), "alt": made[1]})
    context = {
        "study": study,
        "rows": rows[:MAX_ROWS],
        "more": max(0, len(rows) - MAX_ROWS),
        "steps": sorted(steps.items()),
        "status": status,
        "statuses": Participant.Status.choices,
        "progress": progress,
        "full": study_is_full(study),
        "plots": plots,
        "prolific_state": prolific_monitor_state(study),
        "prolific_review": review_counts(study),
        "not_back": not_back_on_prolific(study),
    }
    return render(request, "researcher/study_participants.html", context)
