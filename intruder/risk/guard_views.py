"""The guard's pages: queue a guard run from the review page, and its rows while it runs.

Access as on the review page (`intruder.web.access.study_for`): editors queue, readers
watch. The review list shows the guard's panel through `intruder.risk.researcher_parts`.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from intruder.exceptions import errors_as_messages
from intruder.models import Job, Study
from intruder.risk.forms import GuardForm
from intruder.risk.guarding import (
    guard_candidates,
    guard_run_results,
    guard_run_start,
    guard_run_undo,
    latest_guard_run,
)
from intruder.risk.models import GuardResult, GuardRun, StudyRun
from intruder.services import jobs
from intruder.web.access import study_for
from intruder.web.job_messages import job_start_message


def guard_form(study: Study, *args: object) -> GuardForm:
    """Return the guard's form, its rank bounded by the study's own persons."""
    return GuardForm(*args, candidates=guard_candidates(study, StudyRun.Background.CROSS_VALIDATED))


def latest_guard_results(
    study: Study,
) -> tuple[GuardRun | None, Job | None, dict[int, GuardResult]]:
    """Return the study's latest guard run, its job and its rows by text id, so far while it
    runs (none for a failed job: the page shows its error, and a retry resumes)."""
    run = latest_guard_run(study)
    if run is None:
        return None, None, {}
    if run.job is not None and run.job.status == Job.Status.FAILED:
        return run, run.job, {}
    return run, run.job, guard_run_results(run)


def guard_skipped_reasons(run: GuardRun | None) -> dict[int, str]:
    """Return why the run left each text it did not guard, by text id (a finished run's)."""
    if run is None:
        return {}
    return {int(pk): why for pk, why in (run.summary or {}).get("skipped_texts", {}).items()}


@login_required
@require_POST
@errors_as_messages("researcher-review", prefix="Not queued: ")
def study_guard(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue a job that masks what lets the machine attacks rank each draft's person."""
    study, _ = study_for(request, slug, edit=True)
    form = guard_form(study, request.POST, request.FILES)
    if not form.is_valid():
        errors = "; ".join(
            f"{form.fields[field].label if field in form.fields else 'form'}: {' '.join(e)}"
            for field, e in form.errors.items()
        )
        messages.error(request, f"Not queued: {errors}")
        return redirect("researcher-review", slug=study.slug)
    data = form.cleaned_data
    run, created = guard_run_start(
        study=study,
        user=request.user,
        rank=data["rank"],
        budget=data["budget"],
        background=data["background"],
        background_documents=data["documents"],
        folds=data["folds"],
    )
    job_start_message(
        request, job=run.job, created=created, name="Guard", queued="a worker runs it"
    )
    return redirect("researcher-review", slug=study.slug)


@login_required
@require_POST
@errors_as_messages("researcher-review", prefix="Not undone: ")
def study_guard_undo(request: HttpRequest, slug: str) -> HttpResponse:
    """Take the latest guard run's masks off every text it changed, in one click."""
    study, _ = study_for(request, slug, edit=True)
    run = latest_guard_run(study)
    if run is None or str(run.pk) != request.POST.get("run", ""):
        messages.error(request, "Not undone: that is not the study's latest guard run.")
        return redirect("researcher-review", slug=study.slug)
    counts = guard_run_undo(run=run, user=request.user)
    kept = counts["released"] + counts["edited"]
    messages.success(
        request,
        f"Guard run undone: {counts['restored']} text{'s' if counts['restored'] != 1 else ''} "
        f"restored to their spans before it"
        + (
            f"; {kept} kept as they are ({counts['released']} released, "
            f"{counts['edited']} edited since)."
            if kept
            else "."
        ),
    )
    return redirect("researcher-review", slug=study.slug)


@login_required
@require_GET
def study_guard_rows(request: HttpRequest, slug: str) -> JsonResponse:
    """Return the latest guard run's progress and its per-text rows so far (polled live)."""
    study, _ = study_for(request, slug)
    run, guard_job, guarded = latest_guard_results(study)
    if run is None:
        return JsonResponse({"job": None, "rows": {}})
    rows = {
        str(text_id): {
            "ranks": row.ranks,
            "masked_words": row.masked_words,
            "residual_words": row.residual_words,
            "review_url": reverse("researcher-review-text", args=[study.slug, text_id]),
            "flagged": row.flagged,
            "reason": row.reason,
        }
        for text_id, row in guarded.items()
    }
    # A run whose job is gone (never deleted by the app) counts as finished.
    status = guard_job.status if guard_job is not None else Job.Status.SUCCEEDED
    return JsonResponse(
        {
            "job": run.job_id,
            "run": run.pk,
            "status": status,
            # A cancelled job stops too: the page stops polling (its rows so far stay).
            "finished": status not in jobs.ACTIVE_STATUSES,
            "progress_done": guard_job.progress_done if guard_job is not None else len(rows),
            "progress_total": guard_job.progress_total if guard_job is not None else len(rows),
            "message": guard_job.message if guard_job is not None else "",
            "rows": rows,
        }
    )
