"""Researcher analysis page of a study: tables, plots and CSV/JSON downloads.

Login required; access as on the other researcher pages (owner, editor, viewer, superuser,
via `selectors.access.study_role`): a user without a role gets 404, so a study's
existence is not revealed. Construct loss runs spaCy over every text (minutes on a paper-sized
study), so it runs as a background job started from the page; the page and the downloads
show the latest successful run.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from csv_safe import frame_csv
from intruder.analysis.page import ANALYSIS_PAGE
from intruder.analysis.paper import PAPER_AGREEMENT
from intruder.analysis.report import TABLE_TITLES, records
from intruder.analysis.services import CONSTRUCT_TABLES, construct_loss_job_start
from intruder.models import Job
from intruder.reports.refresh import page_report, report_current
from intruder.selectors.access import role_can_edit
from intruder.selectors.jobs import study_jobs
from intruder.web.access import study_for
from intruder.web.job_messages import job_start_message


@login_required
@require_GET
def study_analysis(request: HttpRequest, slug: str) -> HttpResponse:
    """Show every analysis of the study, with plots and downloads."""
    study, role = study_for(request, slug)
    # Seconds of statistics and plots: stored per data version, refreshed by a job.
    shown = page_report(study=study, name=ANALYSIS_PAGE, user=request.user)
    parts = shown.value
    if "input_error" in parts:
        return render(
            request,
            "analysis/study_analysis_error.html",
            {
                "study": study,
                "error": parts["input_error"],
                "shown": shown,
                "can_edit": role_can_edit(role),
            },
        )
    report = parts.get("report")
    context: dict[str, Any] = {
        "study": study,
        **parts,
        "shown": shown,
        "construct_jobs": study_jobs(study, limit=3, kinds=(Job.Kind.CONSTRUCT_LOSS,)),
        "can_edit": role_can_edit(role),
        "paper_agreement": PAPER_AGREEMENT.get(report.paper_match.study)
        if report is not None and report.paper_match
        else None,
    }
    return render(request, "analysis/study_analysis.html", context)


@login_required
@require_GET
def analysis_table(request: HttpRequest, slug: str, table: str, fmt: str) -> HttpResponse:
    """Download one analysis table as CSV or JSON (or summary.json)."""
    study, _ = study_for(request, slug)
    if fmt not in ("csv", "json") or (table not in TABLE_TITLES and table != "summary"):
        raise Http404("no such table")
    # Downloads are of the current data, never an older stored report.
    parts = report_current(study, ANALYSIS_PAGE)
    if "input_error" in parts:
        return HttpResponse(
            parts["input_error"], status=409, content_type="text/plain; charset=utf-8"
        )
    report = parts["report"]
    if table == "summary":
        if fmt != "json":
            raise Http404("the summary is JSON only")
        body, frame = json.dumps(report.summary(), indent=1), None
    else:
        frame = report.tables.get(table)
        if frame is None and table in CONSTRUCT_TABLES:
            raise Http404("construct loss has not been computed yet: start it on the page")
        if frame is None:
            raise Http404("this study's data do not support that table (see the warnings)")
        body = (
            frame_csv(frame)
            if fmt == "csv"
            else json.dumps(records(frame), indent=1, ensure_ascii=False)
        )
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/json"
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{table}.{fmt}"'
    return response


@login_required
@require_POST
def construct_loss_start(request: HttpRequest, slug: str) -> HttpResponse:
    """Queue the construct loss job (spaCy over every text) unless one is under way."""
    study, _ = study_for(request, slug, edit=True)
    job, created = construct_loss_job_start(study=study, user=request.user)
    job_start_message(
        request, job=job, created=created, name="Construct loss", queued="progress below"
    )
    return redirect(f"{reverse('analysis-study', kwargs={'slug': study.slug})}#construct-loss")
