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

import pandas as pd
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_POST

from intruder.analysis.frames import AnalysisInputError
from intruder.analysis.paper import PAPER_AGREEMENT
from intruder.analysis.report import TABLE_TITLES, records
from intruder.models import Job, Study
from intruder.rendering.layouts import LAYOUT_TITLES, paper_layouts
from intruder.rendering.plots import PLOT_TEXT, report_plots
from intruder.selectors.access import role_can_edit
from intruder.selectors.analysis import study_report
from intruder.selectors.jobs import study_jobs
from intruder.selectors.report_cache import cached_for_study
from intruder.services.analysis_jobs import (
    CONSTRUCT_TABLES,
    construct_loss_job_start,
    construct_loss_latest,
)
from intruder.views.access import study_for

# Tables shown folded on the page (long, or for downloading more than reading).
FOLDED_TABLES = frozenset({"per_text", "anonymisability_features", "rates_target"})


def _report_with_construct_loss(study: Study) -> tuple[Any, Any]:
    """Return the study's report with the latest construct loss tables, and that job."""
    report = study_report(study)
    _, done, tables = construct_loss_latest(study)
    report.tables.update(tables)
    report.tables = {n: report.tables[n] for n in TABLE_TITLES if n in report.tables}
    return report, done


def html_table(frame: pd.DataFrame) -> SafeString:
    """Return `frame` as an HTML table; every cell is escaped (participants wrote some)."""
    html = frame.to_html(
        index=False,
        escape=True,
        na_rep="—",
        float_format=lambda value: f"{value:.4g}" if abs(value) >= 1e4 else f"{value:.2f}",
        border=0,
        classes="analysis-table",
    )
    # to_html(escape=True) escaped every cell.
    return mark_safe(html)


def _page_parts(study: Study) -> dict[str, Any]:
    """Return the computed part of the analysis page (cached per study data version)."""
    report, construct_job = _report_with_construct_loss(study)
    sections = [
        {
            "name": name,
            "title": TABLE_TITLES[name],
            "table": html_table(table),
            "folded": name in FOLDED_TABLES,
            "rows": len(table),
        }
        for name, table in report.tables.items()
    ]
    layouts = [
        {"name": name, "title": LAYOUT_TITLES[name], "table": html_table(frame)}
        for name, frame in paper_layouts(report).items()
    ]
    # matplotlib's SVG writer escapes text (target names); no participant text is plotted.
    plots = [
        {"name": name, "title": PLOT_TEXT[name][0], "svg": mark_safe(svg)}
        for name, svg in report_plots(report).items()
    ]
    return {
        "report": report,
        "summary": report.summary(),
        "sections": sections,
        "layouts": layouts,
        "plots": plots,
        "construct_job": construct_job,
    }


@login_required
@require_GET
def study_analysis(request: HttpRequest, slug: str) -> HttpResponse:
    """Show every analysis of the study, with plots and downloads."""
    study, role = study_for(request, slug)
    try:
        parts = cached_for_study(study, "analysis-page", (), lambda: _page_parts(study))
    except AnalysisInputError as error:
        return render(
            request, "analysis/study_analysis_error.html", {"study": study, "error": error}
        )
    report = parts["report"]
    context: dict[str, Any] = {
        "study": study,
        **parts,
        "construct_jobs": study_jobs(study, limit=3, kinds=(Job.Kind.CONSTRUCT_LOSS,)),
        "can_edit": role_can_edit(role),
        "paper_agreement": PAPER_AGREEMENT.get(report.paper_match.study)
        if report.paper_match
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
    try:
        report = cached_for_study(study, "analysis-page", (), lambda: _page_parts(study))["report"]
    except AnalysisInputError as error:
        return HttpResponse(str(error), status=409, content_type="text/plain; charset=utf-8")
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
            frame.to_csv(index=False)
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
    if created:
        messages.success(request, f"Construct loss job {job.pk} queued; progress below.")
    else:
        messages.info(request, f"Construct loss job {job.pk} is already {job.status}.")
    return redirect(f"{reverse('analysis-study', kwargs={'slug': study.slug})}#construct-loss")
