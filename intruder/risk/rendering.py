"""Write a risk report: every table as CSV and JSON, summary.json, SVG plots, HTML and PDF."""

from __future__ import annotations

import io
import json
import textwrap
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from intruder.analysis.report import records
from intruder.risk.report.tables import RISK_TABLE_TITLES, RiskReport
from intruder.risk.stats import NOT_ENOUGH, p_text

# Tables the PDF leaves to the CSV/JSON files (its first page says so): one row per text and
# method of every method, hundreds of pages for a real study.
PDF_FILE_ONLY = ("machine_per_text",)
PDF_ROWS_PER_PAGE = 24
PDF_LINES_PER_PAGE = 84
PDF_WRAP = 110
# Landscape A4 in points, less margins; 7 pt text takes up to about 3.9 pt per character.
PDF_TABLE_WIDTH_PT = 800.0
PDF_CHAR_PT = 3.9
PDF_FONT_PT = 7.0
PDF_MIN_FONT_PT = 5.0
PDF_CELL_CHARS = 26
# Characters of a 10 pt table title across landscape A4 (about 5.2 pt each, less margins).
PDF_TITLE_CHARS = 140
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
        note = note if note in shown else "note"
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
        if prefix in ("rho_", "kappa_", "auc_"):
            candidates, digits = [prefix[:-1]], 2
        else:
            # A rate's value column, whatever its table calls it: human_/llm_pct_identified,
            # naming_pct (familiarity), trir_<attack> (per attack), trir (the ladder).
            candidates = [f"{prefix}pct_identified", f"{prefix}pct", f"trir_{prefix[:-1]}"]
            candidates += [prefix[:-1]] if prefix else []
            digits = 1
        value = next((c for c in candidates if c in shown), None)
        if value is None or high not in shown:
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
    for column in [c for c in shown.columns if _counts(str(c))]:
        # Ranks and counts are whole numbers: "1", never "1.0" (a median rank is stored as a
        # float by pandas).
        shown[column] = [
            int(v) if isinstance(v, float | np.floating) and float(v).is_integer() else v
            for v in shown[column]
        ]
    return shown.map(_display_value)


# Columns that hold whole numbers (counts and ranks), shown without decimals.
COUNT_COLUMNS = ("persons", "candidates", "resamples", "distractors", "run", "folds")


def _counts(column: str) -> bool:
    return (
        "rank" in column
        or column.startswith("n_")
        or (column.endswith(("_k", "_n", "_identified")) and not column.endswith("pct_identified"))
        or column in COUNT_COLUMNS
    )


def _missing(value: Any) -> bool:
    return value is None or (not isinstance(value, str) and pd.isna(value))


def _display_value(value: Any) -> str:
    if _missing(value):
        return "—"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating):
        if value == 0:
            return "0.0"  # as 0.0 % reads beside 12.5 %, never a bare "0"
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
    shown = display_frame(frame)
    # Headers read as words, as on the PDF's tables; the files keep the column names.
    shown.columns = [str(c).replace("_", " ") for c in shown.columns]
    return shown.to_html(index=False, escape=True, na_rep="—", border=0, classes="analysis-table")


# Tables built on the human judgments without a column named for them.
HUMAN_TABLES = frozenset({"agreement", "familiarity_split", "knowledge_budget_predicted"})
SIMULATED_MARK = "Human columns: SIMULATED by the demo, not people."


def holds_simulated_humans(report: RiskReport, name: str) -> bool:
    """Whether table `name` shows human data that the demo simulated (its visual forms then
    say so beside it, as its files do in `human_data_simulated`)."""
    if not report.settings.get("human_data_simulated"):
        return False
    frame = report.tables.get(name)
    if frame is None:
        return False
    return name in HUMAN_TABLES or any("human" in str(column) for column in frame.columns)


def report_context(report: RiskReport) -> dict[str, Any]:
    """Return what the report templates show: summary, plots and tables (all escaped)."""
    from django.utils.safestring import mark_safe

    # matplotlib (0.2 s) loads where a report is drawn, not at every Django process's start.
    from intruder.risk.plots import PLOT_TITLES, risk_svgs

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
                "simulated": SIMULATED_MARK if holds_simulated_humans(report, name) else "",
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
        ("A guess names the person when", str(human.get("identification_rule_text") or "—")),
        ("Name-match threshold", str(human.get("threshold"))),
        ("Text identified when", human["identified_rule_text"]),
        *(
            [("Judgments naming another person", _named_other_text(human))]
            if human.get("judgments_named_other") is not None
            else []
        ),
    ]
    null = machine.get("strongest_null_pct")
    attack_null = machine.get("attack_null_pct") or {}
    machine_rows = [
        ("World", machine["world"]),
        ("Candidates N", str(machine.get("candidates"))),
        ("Chance 1/N", _pct(machine.get("chance_pct"))),
        ("Background", str(machine.get("background_source") or machine.get("background"))),
        *([("Knowledge", machine["knowledge"])] if machine.get("knowledge") else []),
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


def _named_other_text(human: dict[str, Any]) -> str:
    """Return how many judgments named another person of the study, and what the rule did."""
    k, n = human["judgments_named_other"], human.get("judgments") or 0
    counted = (
        "counted as identified where the cosine to the true person still reaches the threshold"
        if human.get("identification_rule") == "paper"
        else "never counted as identified"
    )
    return f"{k} of {n} ({counted})"


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
        (
            "Threshold · guess rule · text rule",
            " · ".join(
                str(p.get(key, "—"))
                for key in ("threshold", "identification_rule", "identified_rule")
            ),
        ),
        ("Counts", ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())),
    ]


def standalone_html(report: RiskReport, title: str) -> str:
    """Return the report as one self-contained HTML file (inline CSS and SVG)."""
    return standalone_page(report_context(report), title)


def standalone_page(context: dict[str, Any], title: str) -> str:
    """Return a report's `report_context` as one self-contained HTML file: the risk page's
    stored parts are that context, so report.html is rendered from them, not drawn again."""
    from django.template.loader import render_to_string

    return render_to_string("risk/report_standalone.html", {"title": title, **context})


def pdf_tables(report: RiskReport) -> list[str]:
    """Return the tables the PDF prints: every table but those the PDF names as file-only."""
    return [
        name
        for name, frame in report.tables.items()
        if name not in PDF_FILE_ONLY and frame is not None and not frame.empty
    ]


def pdf_pages(report: RiskReport, title: str) -> Iterator[tuple[str, Any]]:
    """Yield the PDF's figures in order, each with what it shows (the caller closes each).

    Text and table pages are drawn only when asked for, so at most the plots and one page
    are open at a time (a report of many table pages once opened them all, and matplotlib
    warned of more than 20 open figures).
    """
    for name, page in _page_plan(report, title):
        yield name, page() if callable(page) else page


def _page_plan(report: RiskReport, title: str) -> list[tuple[str, Any]]:
    """Return every page in order: a drawn plot, or a function that draws the page."""
    from intruder.risk.plots import PLOT_TITLES, risk_figures

    plan: list[tuple[str, Any]] = [
        ("summary", partial(_text_page, chunk)) for chunk in _chunks(pdf_text_lines(report, title))
    ]
    for name, figure in risk_figures(report).items():
        figure.suptitle(PLOT_TITLES[name], fontsize=10)
        plan.append((name, figure))
    for name in pdf_tables(report):
        plan += [(name, page) for page in _table_pages(report, name)]
    return plan


def pdf_bytes(
    report: RiskReport, title: str, progress: Callable[[int, int, str], None] | None = None
) -> bytes:
    """Return the report as a PDF: summary pages, plots, then every table but the file-only.

    `progress(done, total, message)` is told after each page (the PDF job's progress bar).
    """
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    from intruder.risk.plots import PLOT_TITLES, plain_text

    buffer = io.BytesIO()
    with plain_text(), PdfPages(buffer) as pdf:
        plan = _page_plan(report, title)
        for done, (name, page) in enumerate(plan, 1):
            figure = page() if callable(page) else page
            pdf.savefig(figure, bbox_inches=_a4_box(figure) if name in PLOT_TITLES else None)
            plt.close(figure)
            if progress is not None:
                progress(done, len(plan), name)
    return buffer.getvalue()


A4_INCHES = (11.69, 8.27)


def _a4_box(figure: Any) -> Any:
    """Return an A4 page (landscape for a wide plot, portrait for a tall one) centred on all
    the plot draws, so that plot pages have the size of every other page (a tight box gave
    each plot a page size of its own); a plot larger than the page keeps its tight box."""
    from matplotlib.transforms import Bbox

    tight = figure.get_tightbbox(figure.canvas.get_renderer())
    wide, tall = A4_INCHES
    width, height = (wide, tall) if tight.width >= tight.height else (tall, wide)
    if tight.width > width or tight.height > height:
        return tight
    x, y = (tight.x0 + tight.x1) / 2, (tight.y0 + tight.y1) / 2
    return Bbox.from_bounds(x - width / 2, y - height / 2, width, height)


def pdf_text_lines(report: RiskReport, title: str) -> list[str]:
    """Return the PDF's text pages as lines: warnings, threat models, summary, predicted risk,
    where each table is, provenance."""
    lines = [*textwrap.wrap(title, PDF_WRAP), ""]
    for warning in report.warnings:
        lines += [*textwrap.wrap(f"! {warning}", PDF_WRAP), ""]
    for side, rows in threat_rows(report).items():
        lines.append(f"THREAT MODEL: {side.upper()}")
        for label, value in rows:
            lines += textwrap.wrap(f"{label}: {value}", PDF_WRAP, subsequent_indent="    ")
        lines.append("")
    lines.append("SUMMARY")
    for paragraph in report.paragraphs:
        lines += [*textwrap.wrap(paragraph, PDF_WRAP), ""]
    predicted = report.settings.get("predicted_human")
    if predicted:
        lines += textwrap.wrap(f"Predicted human risk: {predicted}", PDF_WRAP)
        lines.append("")
    lines.append("TABLES")
    printed = pdf_tables(report)
    lines += textwrap.wrap(
        "Printed after the plots: " + "; ".join(RISK_TABLE_TITLES[n] for n in printed) + ".",
        PDF_WRAP,
    )
    files_only = [n for n in report.tables if n not in printed]
    if files_only:
        lines += textwrap.wrap(
            "In the CSV/JSON files only (too long to print): "
            + "; ".join(f"{RISK_TABLE_TITLES[n]} ({n}.csv)" for n in files_only)
            + ".",
            PDF_WRAP,
        )
    lines.append("")
    lines.append("PROVENANCE")
    for label, value in provenance_rows(report):
        lines += textwrap.wrap(f"{label}: {value}", PDF_WRAP, subsequent_indent="    ")
    return lines


def _chunks(lines: list[str]) -> list[list[str]]:
    """Split the text pages' lines into pages; a section (a heading in capitals after a blank
    line) that fits on one page never starts at the foot of another (the provenance block
    once split across two pages)."""
    pages: list[list[str]] = [[]]
    for section in _sections(lines):
        page = pages[-1]
        fits_alone = len(section) <= PDF_LINES_PER_PAGE
        if page and fits_alone and len(page) + len(section) > PDF_LINES_PER_PAGE:
            pages.append(page := [])
        for line in section:
            if len(page) == PDF_LINES_PER_PAGE:
                pages.append(page := [])
            page.append(line)
    return pages


def _sections(lines: list[str]) -> list[list[str]]:
    """Return the lines cut before each heading (an upper-case line after a blank one)."""
    sections: list[list[str]] = [[]]
    for i, line in enumerate(lines):
        heading = bool(line) and line == line.upper() and any(c.isalpha() for c in line)
        if heading and i and not lines[i - 1] and sections[-1]:
            sections.append([])
        sections[-1].append(line)
    return sections


def _text_page(lines: list[str]) -> Any:
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(8.27, 11.69))  # A4
    figure.text(0.05, 0.97, "\n".join(lines), va="top", ha="left", fontsize=7, family="serif")
    return figure


def _table_pages(report: RiskReport, name: str) -> list[Callable[[], Any]]:
    """Return the landscape A4 pages of a table (each a function that draws it), each with
    the table's note under its title.

    Columns are measured: a table that fits the page width is one page per 24 rows; a wider
    one is first set smaller (down to 5 pt), then split into as few column parts as fit, of
    even width (the key columns repeated in each), so no part holds a lone column.
    """
    shown = display_frame(report.tables[name])
    shown = shown.drop(columns=[c for c in ("note",) if c in shown])
    cells = shown.map(_cell)
    header = {c: _header(c) for c in shown.columns}
    chars = {
        c: 3 + max(_longest(header[c]), *(_longest(v) for v in cells[c])) for c in shown.columns
    }
    font = min(
        PDF_FONT_PT,
        max(
            PDF_MIN_FONT_PT, PDF_FONT_PT * PDF_TABLE_WIDTH_PT / (PDF_CHAR_PT * sum(chars.values()))
        ),
    )
    widths = {c: PDF_CHAR_PT * font / PDF_FONT_PT * n for c, n in chars.items()}
    keys = [c for c in shown.columns if c in KEY_COLUMNS]
    rest = [c for c in shown.columns if c not in keys]
    parts = _column_parts(rest, widths, PDF_TABLE_WIDTH_PT - sum(widths[c] for c in keys))
    note = report.notes.get(name, "")
    if holds_simulated_humans(report, name):
        note = f"{SIMULATED_MARK} {note}".strip()
    pages = []
    for start in range(0, len(shown), PDF_ROWS_PER_PAGE):
        rows = cells.iloc[start : start + PDF_ROWS_PER_PAGE]
        for part, columns in enumerate(parts, 1):
            suffix = f" (columns, part {part} of {len(parts)})" if len(parts) > 1 else ""
            pages.append(
                partial(
                    _table_page,
                    rows[[*keys, *columns]],
                    [header[c] for c in [*keys, *columns]],
                    [widths[c] for c in [*keys, *columns]],
                    RISK_TABLE_TITLES[name] + suffix,
                    note,
                    font,
                )
            )
    return pages


def _column_parts(columns: list[str], widths: dict[str, float], room: float) -> list[list[str]]:
    """Split `columns` into the fewest parts that fit `room`, of about even width."""
    total = sum(widths[c] for c in columns)
    count = max(1, int(np.ceil(total / max(room, 1.0))))
    count = min(count, max(1, len(columns)))
    while True:
        target = total / count
        parts: list[list[str]] = [[]]
        used = 0.0
        for column in columns:
            if parts[-1] and len(parts) < count and used + widths[column] > target * 1.0001:
                parts.append([])
                used = 0.0
            parts[-1].append(column)
            used += widths[column]
        if all(sum(widths[c] for c in part) <= room for part in parts) or count >= len(columns):
            return parts
        count += 1


def _header(column: str) -> str:
    return "\n".join(textwrap.wrap(str(column).replace("_", " "), 12, break_long_words=True))


def _longest(text: str) -> int:
    return max((len(line) for line in str(text).split("\n")), default=0)


def _table_page(
    cells: pd.DataFrame,
    header: list[str],
    widths: list[float],
    title: str,
    note: str,
    font: float = 7.0,
) -> Any:
    """Draw one table page: column widths and row heights from the text they hold."""
    import matplotlib.pyplot as plt

    page_w, page_h = 11.69 * 72, 8.27 * 72
    figure = plt.figure(figsize=(11.69, 8.27))  # A4 landscape
    # A long title wraps within the page (it once ran off its right edge).
    titled = textwrap.wrap(title, PDF_TITLE_CHARS, break_on_hyphens=False)
    figure.text(0.03, 0.965, "\n".join(titled), fontsize=10, va="top")
    top = 0.93 - (len(titled) - 1) * 13 / page_h
    if note:
        wrapped = textwrap.wrap(note, 190, break_on_hyphens=False)
        figure.text(0.03, top, "\n".join(wrapped), fontsize=7, va="top", color="#444")
        top -= (len(wrapped) * 9 + 6) / page_h
    line_pt = font * 9 / 7
    header_lines = max(h.count("\n") + 1 for h in header)
    row_lines = [max(v.count("\n") + 1 for v in row) for row in cells.itertuples(index=False)]
    heights = [header_lines * line_pt + 4, *(n * line_pt + 3 for n in row_lines)]
    width = sum(widths)
    axes = figure.add_axes((0.03, 0.03, width / page_w, top - 0.03))
    axes.axis("off")
    axes_h = (top - 0.03) * page_h
    table = axes.table(
        cellText=[list(row) for row in cells.itertuples(index=False)],
        colLabels=header,
        colWidths=[w / width for w in widths],
        cellLoc="left",
        bbox=(0, 1 - sum(heights) / axes_h, 1, sum(heights) / axes_h),
    )
    table.auto_set_font_size(False)
    table.set_fontsize(font)
    for (row, _), cell in table.get_celld().items():
        cell.set_height(heights[row] / axes_h)
        cell.PAD = 0.02
        if row == 0:
            cell.set_facecolor("#eeeeee")
    return figure


def _cell(value: str) -> str:
    """Wrap a display cell to at most 3 lines of PDF_CELL_CHARS (longer text is cut with …)."""
    lines = textwrap.wrap(str(value), PDF_CELL_CHARS, break_long_words=True) or [""]
    if len(lines) > 3:
        lines = [*lines[:2], textwrap.shorten(" ".join(lines[2:]), PDF_CELL_CHARS, placeholder="…")]
    return "\n".join(lines)


def write_risk_report(
    report: RiskReport, out_dir: Path | str, *, title: str, html: bool = True, pdf: bool = True
) -> list[Path]:
    """Write every table (CSV, JSON), summary.json, the plots (SVG), report.html and report.pdf."""
    from intruder.risk.plots import risk_svgs

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
