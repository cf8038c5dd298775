"""The computed part of the researcher report pages (risk, analysis, annotation agreement).

Each is a pure function of the study's rows and its arguments that costs seconds of
statistics and plotting; `intruder.services.report_refresh` runs them in the request (a
first view) or in the `refresh_reports` job and stores what they return. The functions
live here, not in the views, so that the worker computes exactly what the page shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
from django.utils.safestring import SafeString, mark_safe

from intruder.analysis.frames import AnalysisInputError
from intruder.analysis.report import TABLE_TITLES
from intruder.models import AttackRun, Study
from intruder.rendering.layouts import LAYOUT_TITLES, paper_layouts
from intruder.rendering.plots import PLOT_TEXT, report_plots
from intruder.selectors.analysis import study_report
from intruder.services.analysis_jobs import construct_loss_latest

ANALYSIS_PAGE = "analysis-page"
RISK_PAGE = "risk-page"
AGREEMENT_PAGE = "agreement-page"
RISK_REPORT = "risk-report"  # not a page: the report behind the risk page and its downloads
# Tables shown folded on the analysis page (long, or for downloading more than reading).
FOLDED_TABLES = frozenset({"per_text", "anonymisability_features", "rates_target"})


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


def _report_with_construct_loss(study: Study) -> tuple[Any, Any]:
    """Return the study's report with the latest construct loss tables, and that job."""
    report = study_report(study)
    _, done, tables = construct_loss_latest(study)
    report.tables.update(tables)
    report.tables = {n: report.tables[n] for n in TABLE_TITLES if n in report.tables}
    return report, done


def analysis_page_parts(study: Study, args: tuple[Any, ...] = ()) -> dict[str, Any]:
    """Return the computed part of the analysis page; data it cannot analyse give
    {"input_error": why} (the page says why instead of a report)."""
    try:
        report, construct_job = _report_with_construct_loss(study)
    except AnalysisInputError as error:
        return {"input_error": str(error)}
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


def risk_page_parts(study: Study, args: tuple[Any, ...], report: Any) -> dict[str, Any]:
    """Return the computed part of the risk page for the run `args[0]` of the study, drawn
    from that run's `report` (DRAWN_FROM)."""
    from intruder.risk.rendering import report_context

    return report_context(report)


def agreement_page_result(project: Any, args: tuple[Any, ...] = ()) -> dict[str, Any]:
    """Return an annotation project's inter-annotator agreement (the gold layer left out)."""
    from anonymize.annotations.agreement import project_agreement
    from intruder.annotation.selectors import project_gold

    return project_agreement(project_gold(project=project, include_adjudicated=False))


def risk_report(study: Study, args: tuple[Any, ...]) -> Any:
    """Return the human-vs-machine report of the run `args[0]` (the risk downloads' source)."""
    from intruder.risk.selectors import run_report

    return run_report(study.attack_runs.select_related("job", "study").get(pk=args[0]))


# name -> compute(study or annotation project, args[, report]): every report the refresh job
# can make.
PAGE_REPORTS: dict[str, Callable[..., Any]] = {
    ANALYSIS_PAGE: analysis_page_parts,
    RISK_PAGE: risk_page_parts,
    RISK_REPORT: risk_report,
    AGREEMENT_PAGE: agreement_page_result,
}

# A page drawn from another stored report (same arguments) gets it as a third argument, so
# the report behind the risk page is stored too and the downloads read it.
DRAWN_FROM = {RISK_PAGE: RISK_REPORT}

# A report whose arguments name a row that is gone (a deleted run) is dropped, not failed.
GONE_ERRORS: tuple[type[Exception], ...] = (AttackRun.DoesNotExist,)
