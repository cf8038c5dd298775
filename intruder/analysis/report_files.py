"""Write a study's analysis `Report` to a folder: tables (CSV + JSON), layouts and plots.

Kept apart from `report` so that the layouts and plots, which read a `Report`, never import
the module that writes them (no import cycle).
"""

from __future__ import annotations

import json
from pathlib import Path

from csv_safe import frame_csv
from intruder.analysis.layouts import paper_layouts
from intruder.analysis.report import Report, records


def write_report(report: Report, out_dir: Path | str, plots: bool = True) -> list[Path]:
    """Write every table as CSV and JSON, the paper-style layouts as layout_*.csv,
    summary.json and (optionally) SVG plots."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, table in report.tables.items():
        csv_path, json_path = out / f"{name}.csv", out / f"{name}.json"
        csv_path.write_text(frame_csv(table), encoding="utf-8")
        json_path.write_text(json.dumps(records(table), indent=1, ensure_ascii=False))
        written += [csv_path, json_path]
    for name, table in paper_layouts(report).items():
        path = out / f"layout_{name}.csv"
        path.write_text(frame_csv(table), encoding="utf-8")
        written.append(path)
    summary_path = out / "summary.json"
    summary_path.write_text(json.dumps(report.summary(), indent=1, ensure_ascii=False))
    written.append(summary_path)
    if plots:
        from intruder.analysis.plots import report_plots  # matplotlib: only where it draws

        for name, svg in report_plots(report).items():
            path = out / f"{name}.svg"
            path.write_text(svg)
            written.append(path)
    return written
