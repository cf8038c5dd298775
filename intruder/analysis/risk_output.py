"""Write a risk report: every table as CSV and JSON, summary.json, SVG plots, HTML and PDF."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd

from intruder.analysis.report import records
from intruder.analysis.risk import RISK_TABLE_TITLES, RiskReport
from intruder.analysis.risk_plots import PLOT_TITLES, risk_figures, risk_svgs

# Tables printed in the PDF (the long per-text ones are in the CSV/JSON files).
PDF_TABLES = ("trir_by_method", "rates_group", "rates_target", "agreement")
PDF_ROWS_PER_PAGE = 28


def table_json(frame: pd.DataFrame) -> str:
    """Return a table as a JSON array of row objects (NaN -> null)."""
    return json.dumps(records(frame), indent=1, ensure_ascii=False)


def summary_json(report: RiskReport) -> str:
    """Return the report's headline numbers as JSON."""
    return json.dumps(report.summary(), indent=1, ensure_ascii=False, default=str)


def html_table(frame: pd.DataFrame) -> str:
    """Return `frame` as an escaped HTML table."""
    return frame.to_html(
        index=False,
        escape=True,
        na_rep="—",
        float_format=lambda v: f"{v:.3g}" if abs(v) < 1 else f"{v:.1f}",
        border=0,
        classes="analysis-table",
    )


def report_context(report: RiskReport) -> dict[str, Any]:
    """Return what the report templates show: summary, plots and tables (all escaped)."""
    from django.utils.safestring import mark_safe

    # matplotlib's SVG writer escapes its text; tables are escaped by to_html.
    return {
        "risk": report,
        "risk_summary": report.summary(),
        "risk_plots": [
            {"name": name, "title": PLOT_TITLES[name], "svg": mark_safe(svg)}
            for name, svg in risk_svgs(report).items()
        ],
        "risk_tables": [
            {
                "name": name,
                "title": RISK_TABLE_TITLES[name],
                "html": mark_safe(html_table(frame)),
                "rows": len(frame),
                "folded": name in ("per_text", "machine_per_text", "rates_target"),
            }
            for name, frame in report.tables.items()
        ],
    }


def standalone_html(report: RiskReport, title: str) -> str:
    """Return the report as one self-contained HTML file (inline CSS and SVG)."""
    from django.template.loader import render_to_string

    return render_to_string(
        "risk/report_standalone.html", {"title": title, **report_context(report)}
    )


def pdf_bytes(report: RiskReport, title: str) -> bytes:
    """Return the report as a PDF: summary page, plots, then the main tables."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    buffer = io.BytesIO()
    with PdfPages(buffer) as pdf:
        pdf.savefig(_text_page(report, title))
        for name, figure in risk_figures(report).items():
            figure.suptitle(PLOT_TITLES[name], fontsize=10)
            pdf.savefig(figure, bbox_inches="tight")
            plt.close(figure)
        for name in PDF_TABLES:
            frame = report.tables.get(name)
            if frame is None or frame.empty:
                continue
            for start in range(0, len(frame), PDF_ROWS_PER_PAGE):
                page = _table_page(frame.iloc[start : start + PDF_ROWS_PER_PAGE], name)
                pdf.savefig(page, bbox_inches="tight")
                plt.close(page)
    return buffer.getvalue()


def _text_page(report: RiskReport, title: str) -> Any:
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(8.27, 11.69))  # A4
    lines = [title, ""]
    settings = report.settings
    lines.append(
        f"attacks: {', '.join(settings.get('attacks', []))}; background: "
        f"{settings.get('background')}"
        + (f" (k = {settings['k']} folds)" if settings.get("k") else "")
    )
    lines.append(f"methods: {', '.join(settings.get('methods', []))}")
    lines.append("")
    for paragraph in [*report.warnings, *report.paragraphs]:
        lines += [*textwrap.wrap(paragraph, 95), ""]
    figure.text(0.06, 0.96, "\n".join(lines), va="top", ha="left", fontsize=8.5, family="serif")
    return figure


def _table_page(frame: pd.DataFrame, name: str) -> Any:
    import matplotlib.pyplot as plt

    shown = frame.drop(columns=[c for c in ("roc", "note", "label") if c in frame.columns])
    cells = [[_cell(v) for v in row] for row in shown.itertuples(index=False)]
    figure, axes = plt.subplots(figsize=(11.69, 0.3 * len(cells) + 1.2))
    axes.axis("off")
    axes.set_title(RISK_TABLE_TITLES[name], fontsize=10)
    table = axes.table(cellText=cells, colLabels=list(shown.columns), loc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(6.5)
    return figure


def _cell(value: Any) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1 else f"{value:.1f}"
    return str(value)[:28]


def write_risk_report(
    report: RiskReport, out_dir: Path | str, *, title: str, html: bool = True, pdf: bool = True
) -> list[Path]:
    """Write every table (CSV, JSON), summary.json, the plots (SVG), report.html and report.pdf."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, frame in report.tables.items():
        (out / f"{name}.csv").write_text(frame.to_csv(index=False), encoding="utf-8")
        (out / f"{name}.json").write_text(table_json(frame), encoding="utf-8")
        written += [out / f"{name}.csv", out / f"{name}.json"]
    (out / "summary.json").write_text(summary_json(report), encoding="utf-8")
    written.append(out / "summary.json")
    for name, svg in risk_svgs(report).items():
        (out / f"{name}.svg").write_text(svg, encoding="utf-8")
        written.append(out / f"{name}.svg")
    if html:
        (out / "report.html").write_text(standalone_html(report, title), encoding="utf-8")
        written.append(out / "report.html")
    if pdf:
        (out / "report.pdf").write_bytes(pdf_bytes(report, title))
        written.append(out / "report.pdf")
    return written
