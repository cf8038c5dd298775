"""The analysis page's computed part (tables, paper layouts, plots), registered with the
report store (`intruder.reports`), which keeps it per version of the study's data."""

from __future__ import annotations

from typing import Any

import pandas as pd
from django.utils.safestring import SafeString, mark_safe

from intruder.analysis.frames import AnalysisInputError
from intruder.analysis.layouts import LAYOUT_TITLES, paper_layouts
from intruder.analysis.report import TABLE_TITLES
from intruder.analysis.selectors import study_report
from intruder.analysis.services import construct_loss_latest
from intruder.models import Study
from intruder.reports.registry import register_page

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
    # matplotlib (0.2 s) loads where a page draws, not at every Django process's start.
    from intruder.analysis.plots import PLOT_TEXT, report_plots

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


ANALYSIS_PAGE = register_page("analysis-page", analysis_page_parts)
