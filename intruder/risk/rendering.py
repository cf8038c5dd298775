"""Write a risk report: every table as CSV and JSON, summary.json, SVG plots, HTML and PDF."""

from __future__ import annotations

import io
import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from intruder.analysis.report import records
from intruder.risk.plots import PLOT_TITLES, plain_text, risk_figures, risk_svgs
from intruder.risk.report import RISK_TABLE_TITLES, RiskReport
from intruder.risk.stats import NOT_ENOUGH, p_text

# Tables printed in the PDF (the long per-text ones are in the CSV/JSON files).
PDF_TABLES = (
    "trir_by_method",
    "rates_group",
    "rates_target",
    "sensitivity",
    "coverage",
    "open_world",
    "llm_intruder",
    "agreement",
)
PDF_ROWS_PER_PAGE = 24
# A PDF table page holds the key columns and at most this many others (landscape A4).
PDF_COLUMNS_PER_PAGE = 7
KEY_COLUMNS = ("method", "group", "target_name", "rule", "attack", "texts", "run", "candidates")
DROPPED_FROM_DISPLAY = ("roc", "label", "target_key", "external_id")


# Statistics printed as "needs ..." below their minimum sample, and the column that says why.
STATISTIC_NOTES = {
    "rho": "rho_note",
    "rho_p": "rho_note",
    "kappa": "kappa_note",
    "mcnemar_statistic": "note",
    "mcnemar_p": "note",
    "auc": "note",
}
P_COLUMNS = ("rho_p", "mcnemar_p")


def display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Return `frame` for reading, every cell a string: the one display form of a table.

    Each rate and its Wilson CI share one cell, '12.5 [3.1, 40.2]' (half the columns, none
    cut off at 1280 px), rho its Fisher z interval; p-values read '0.487' or '< 0.001'; a
    statistic below its minimum sample says what it needs ('not enough data: needs 5 persons,
    has 3'), never 'None'. The CSV/JSON files keep the numbers apart.
    """
    shown = frame.copy().astype(object)
    for column, note in STATISTIC_NOTES.items():
        if column not in shown:
            continue
        why = shown[note] if note in shown else pd.Series([""] * len(shown), index=shown.index)
        shown[column] = [
            (str(reason) or NOT_ENOUGH) if _missing(value) else value
            for value, reason in zip(shown[column], why, strict=True)
        ]
    for column in P_COLUMNS:
        if column in shown:
            shown[column] = [
                v if isinstance(v, str) else p_text(v).removeprefix("p = ").removeprefix("p ")
                for v in shown[column]
            ]
    for low in [c for c in frame.columns if c.endswith("ci_low")]:
        prefix = low[: -len("ci_low")]
        high = f"{prefix}ci_high"
        if prefix == "rho_":
            value, digits = "rho", 2
        elif prefix in ("human_", "llm_"):
            value, digits = f"{prefix}pct_identified", 1
        else:
            value, digits = f"trir_{prefix[:-1]}", 1
        if value not in shown or high not in shown:
            continue
        shown[value] = [
            _with_ci(v, lo, hi, digits)
            for v, lo, hi in zip(shown[value], shown[low], shown[high], strict=True)
        ]
        shown = shown.drop(columns=[low, high])
        shown = shown.rename(columns={value: f"{value} [95 % CI]"})
    drop = [
        c for c in DROPPED_FROM_DISPLAY if c in shown and ("target_name" in shown or c == "roc")
    ]
    drop += [c for c in ("rho_note", "kappa_note") if c in shown]
    shown = shown.drop(columns=drop)
    return shown.map(_display_value)


def _missing(value: Any) -> bool:
    return value is None or (not isinstance(value, str) and pd.isna(value))


def _display_value(value: Any) -> str:
    if _missing(value):
        return "—"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating):
        return f"{value:.3g}" if abs(value) < 1 else f"{value:.1f}"
    return str(value)


def _with_ci(value: Any, low: Any, high: Any, digits: int = 1) -> Any:
    if isinstance(value, str) or _missing(value):
        return value
    if _missing(low):
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def table_source(report: RiskReport, name: str) -> dict[str, Any]:
    """Return where a table file's data came from: every CSV and JSON file carries it.

    A file read without the report (a spreadsheet, a script) still says which study, run and
    software made it, and whether the human data behind it are SIMULATED.
    """
    p, settings = report.provenance or {}, report.settings
    return {
        "table": name,
        "title": RISK_TABLE_TITLES[name],
        "note": report.notes.get(name, ""),
        "source": (
            f"study {settings.get('study')}, attack run {settings.get('run')}, generated "
            f"{p.get('generated_at')} by {p.get('software')} {p.get('version')} (commit "
            f"{p.get('git_commit')})"
        ),
        "human_data_simulated": bool(settings.get("human_data_simulated")),
    }


# The columns every table CSV ends with (its provenance, repeated on each row so that any
# CSV reader keeps it; a comment line would break them).
SOURCE_COLUMNS = ("source", "human_data_simulated")


def table_csv(report: RiskReport, name: str) -> str:
    """Return a table as CSV (through `csv_safe`), each row ending with its provenance."""
    from csv_safe import SafeWriter

    frame = report.tables[name]
    source = table_source(report, name)
    buffer = io.StringIO()
    writer = SafeWriter(buffer, lineterminator="\n")
    writer.writerow([*frame.columns, *SOURCE_COLUMNS])
    extra = [source[c] for c in SOURCE_COLUMNS]
    for row in records(frame):
        writer.writerow([_csv_value(v) for v in row.values()] + extra)
    return buffer.getvalue()


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return value


def table_json(report: RiskReport, name: str) -> str:
    """Return a table as JSON: its provenance, then its rows as objects (NaN -> null)."""
    return json.dumps(
        {**table_source(report, name), "rows": records(report.tables[name])},
        indent=1,
        ensure_ascii=False,
    )


def summary_json(report: RiskReport) -> str:
    """Return the report's headline numbers as JSON."""
    return json.dumps(report.summary(), indent=1, ensure_ascii=False, default=str)


def html_table(frame: pd.DataFrame) -> str:
    """Return `frame` as an escaped HTML table (rates with their CI in one cell)."""
    return display_frame(frame).to_html(
        index=False, escape=True, na_rep="—", border=0, classes="analysis-table"
    )


def report_context(report: RiskReport) -> dict[str, Any]:
    """Return what the report templates show: summary, plots and tables (all escaped)."""
    from django.utils.safestring import mark_safe

    # matplotlib's SVG writer escapes its text; tables are escaped by to_html.
    return {
        "risk": report,
        "risk_summary": report.summary(),
        "risk_threat": threat_rows(report),
        "risk_provenance": provenance_rows(report),
        "risk_plots": [
            {"name": name, "title": PLOT_TITLES[name], "svg": mark_safe(svg)}
            for name, svg in risk_svgs(report).items()
        ],
        "risk_tables": [
            {
                "name": name,
                "title": RISK_TABLE_TITLES[name],
                "note": report.notes.get(name, ""),
                "html": mark_safe(html_table(frame)),
                "rows": len(frame),
                "folded": name in ("per_text", "machine_per_text", "rates_target"),
            }
            for name, frame in report.tables.items()
            if name != "frontier"
        ],
        "frontier": frontier_section(report),
    }


def frontier_section(report: RiskReport) -> dict[str, Any]:
    """Return the frontier's own section (utility metric, note, table); its plot is a plot."""
    from django.utils.safestring import mark_safe

    table = report.tables.get("frontier")
    if table is None or table.empty:
        return {}
    tpi = report.settings.get("tpi") or {}
    metric = tpi.get("metric", "TPI")
    return {
        "title": RISK_TABLE_TITLES["frontier"],
        "metric": metric,
        "ic_source": tpi.get("ic_source"),
        "computed": bool(tpi.get("computed")),
        "note": report.notes.get("frontier", ""),
        "rows": len(table),
        "html": mark_safe(html_table(table.rename(columns={"tpi": metric}))),
    }


def threat_rows(report: RiskReport) -> dict[str, list[tuple[str, str]]]:
    """Return the threat-model box of each side as (label, value) rows, for every format."""
    threat = report.threat_model
    if not threat:
        return {}
    human, machine = threat["human"], threat["machine"]
    per_text = human.get("judgments_per_text") or {}
    simulated = human.get("simulated_intruders")
    planned = human.get("judgments_per_text_planned")
    human_rows = [
        ("World", human["world"]),
        ("Instructions", textwrap.shorten(str(human.get("instructions", "—")), 300)),
        (
            "Intruders",
            f"{human.get('intruders', '—')}"
            + (f" ({simulated} SIMULATED by the demo, not people)" if simulated else ""),
        ),
        *[(label, _filled(human, key)) for key, label in HUMAN_FIELDS.items()],
        (
            "Judgments per text",
            f"{per_text.get('mean', 0):.1f} on average ({per_text.get('min')} to "
            f"{per_text.get('max')}), {human.get('judgments')} in all, "
            f"{human.get('texts_judged')} texts"
            + (f"; {planned} planned per text" if planned else "")
            if per_text
            else "published rates (no per-text data)",
        ),
        ("Identified when", human["identified_rule_text"]),
        ("Name-match threshold", str(human.get("threshold"))),
    ]
    null = machine.get("strongest_null_pct")
    attack_null = machine.get("attack_null_pct") or {}
    machine_rows = [
        ("World", machine["world"]),
        ("Candidates N", str(machine.get("candidates"))),
        ("Chance 1/N", _pct(machine.get("chance_pct"))),
        ("Background", str(machine.get("background_source") or machine.get("background"))),
        (
            "Background per person",
            _background_size(machine),
        ),
        ("Folds", str(machine.get("folds") or "—")),
        ("Attacks", ", ".join(machine.get("attacks", []))),
        (
            "Chance of the 'any attack' rule",
            f"{_pct(null)} (permutation null: true persons shuffled across "
            f"{machine.get('texts')} texts, {machine.get('permutations')} times; per attack "
            + ", ".join(f"{a} {_pct(v)}" for a, v in attack_null.items())
            + ")"
            if null is not None
            else "—",
        ),
    ]
    return {"Human intruders": human_rows, "Machine attacker": machine_rows}


# The researcher's words on who the intruders are (study settings); the report says when empty.
HUMAN_FIELDS = {
    "population": "Population",
    "recruitment": "Recruitment and screening",
    "familiarity": "Familiarity with the persons",
}
NOT_RECORDED = "not recorded: fill it in on the study's settings (the human rate depends on it)"


def _filled(human: dict[str, Any], key: str) -> str:
    return str(human.get(key) or "").strip() or NOT_RECORDED


def _background_size(machine: dict[str, Any]) -> str:
    if machine.get("background_descriptions_per_person_median") is not None:
        value = machine["background_descriptions_per_person_median"]
        return f"median {value:.1f} descriptions per fold"
    if machine.get("background_words_per_person_median") is not None:
        return f"median {machine['background_words_per_person_median']:.0f} words"
    return "—"


def _pct(value: Any) -> str:
    return "—" if value is None else f"{value:.1f} %"


def provenance_rows(report: RiskReport) -> list[tuple[str, str]]:
    """Return the report's provenance as (label, value) rows."""
    p = report.provenance
    if not p:
        return []
    model = p.get("anonymizer_model") or {}
    counts = p.get("counts") or {}
    return [
        ("Generated", str(p.get("generated_at"))),
        ("Software", f"{p.get('software')} {p.get('version')}, commit {p.get('git_commit')}"),
        (
            "Anonymizer model",
            f"{model.get('name')}, {model.get('weights_file')} SHA-256 "
            f"{model.get('weights_sha256')}",
        ),
        (
            "Attack settings",
            json.dumps(p["attack_config"], sort_keys=True)
            if p.get("attack_config")
            else "the attacks' defaults (no setting overridden)",
        ),
        ("Seed · folds", f"{p.get('seed')} · {p.get('folds') or '—'}"),
        ("Threshold · rule", f"{p.get('threshold')} · {p.get('identified_rule')}"),
        ("Counts", ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())),
    ]


def standalone_html(report: RiskReport, title: str) -> str:
    """Return the report as one self-contained HTML file (inline CSS and SVG)."""
    from django.template.loader import render_to_string

    return render_to_string(
        "risk/report_standalone.html", {"title": title, **report_context(report)}
    )


def pdf_bytes(
    report: RiskReport, title: str, progress: Callable[[int, int, str], None] | None = None
) -> bytes:
    """Return the report as a PDF: summary page, plots, then the main tables.

    `progress(done, total, message)` is told after each part (the PDF job's progress bar).
    """
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    tables = [n for n in PDF_TABLES if report.tables.get(n) is not None]
    tables = [n for n in tables if not report.tables[n].empty]
    total = 2 + len(tables)

    def told(done: int, message: str) -> None:
        if progress is not None:
            progress(done, total, message)

    buffer = io.BytesIO()
    with plain_text(), PdfPages(buffer) as pdf:
        pdf.savefig(_text_page(report, title))
        told(1, "summary page")
        for name, figure in risk_figures(report).items():
            figure.suptitle(PLOT_TITLES[name], fontsize=10)
            pdf.savefig(figure, bbox_inches="tight")
            plt.close(figure)
        told(2, "plots")
        for done, name in enumerate(tables, 3):
            for page in _table_pages(report.tables[name], name):
                pdf.savefig(page)
                plt.close(page)
            told(done, f"table {name}")
    return buffer.getvalue()


def pdf_text_lines(report: RiskReport, title: str) -> list[str]:
    """Return the PDF's first page as lines: warnings, threat models, summary, provenance."""
    lines = [*textwrap.wrap(title, 95), ""]
    for warning in report.warnings:
        lines += [*textwrap.wrap(f"! {warning}", 95), ""]
    for side, rows in threat_rows(report).items():
        lines.append(f"THREAT MODEL: {side.upper()}")
        for label, value in rows:
            lines += textwrap.wrap(f"{label}: {value}", 95, subsequent_indent="    ")
        lines.append("")
    lines.append("SUMMARY")
    for paragraph in report.paragraphs:
        lines += [*textwrap.wrap(paragraph, 95), ""]
    lines.append("PROVENANCE")
    for label, value in provenance_rows(report):
        lines += textwrap.wrap(f"{label}: {value}", 95, subsequent_indent="    ")
    return lines


def _text_page(report: RiskReport, title: str) -> Any:
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(8.27, 11.69))  # A4
    text = "\n".join(pdf_text_lines(report, title))
    figure.text(0.06, 0.97, text, va="top", ha="left", fontsize=7.5, family="serif")
    return figure


def _table_pages(frame: pd.DataFrame, name: str) -> list[Any]:
    """Return landscape A4 pages of a table: key columns repeated, long cells wrapped."""
    shown = display_frame(frame).drop(columns=[c for c in ("note",) if c in frame.columns])
    keys = [c for c in shown.columns if c in KEY_COLUMNS]
    rest = [c for c in shown.columns if c not in keys]
    chunks = [rest[i : i + PDF_COLUMNS_PER_PAGE] for i in range(0, len(rest), PDF_COLUMNS_PER_PAGE)]
    pages = []
    for start in range(0, len(shown), PDF_ROWS_PER_PAGE):
        rows = shown.iloc[start : start + PDF_ROWS_PER_PAGE]
        for part, columns in enumerate(chunks or [[]], 1):
            pages.append(_table_page(rows[[*keys, *columns]], name, part, len(chunks)))
    return pages


def _table_page(frame: pd.DataFrame, name: str, part: int, parts: int) -> Any:
    import matplotlib.pyplot as plt

    cells = [[_cell(v) for v in row] for row in frame.itertuples(index=False)]
    header = ["\n".join(textwrap.wrap(str(c).replace("_", " "), 14)) for c in frame.columns]
    lines = max([1, *(c.count("\n") + 1 for row in cells for c in row)])
    figure, axes = plt.subplots(figsize=(11.69, 8.27))  # A4 landscape
    axes.axis("off")
    suffix = f" (columns, part {part} of {parts})" if parts > 1 else ""
    axes.set_title(RISK_TABLE_TITLES[name] + suffix, fontsize=10)
    table = axes.table(cellText=cells, colLabels=header, loc="upper center", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(7)
    for (row, _), cell in table.get_celld().items():
        cell.set_height((0.045 if row == 0 else 0.028 * lines) * 24 / max(PDF_ROWS_PER_PAGE, 1))
    table.auto_set_column_width(list(range(len(frame.columns))))
    return figure


def _cell(value: Any) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1 else f"{value:.1f}"
    return "\n".join(textwrap.wrap(str(value), 24)[:3])


def write_risk_report(
    report: RiskReport, out_dir: Path | str, *, title: str, html: bool = True, pdf: bool = True
) -> list[Path]:
    """Write every table (CSV, JSON), summary.json, the plots (SVG), report.html and report.pdf."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in report.tables:
        (out / f"{name}.csv").write_text(table_csv(report, name), encoding="utf-8")
        (out / f"{name}.json").write_text(table_json(report, name), encoding="utf-8")
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
