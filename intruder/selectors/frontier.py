"""Reads for the risk report's frontier section: TRIR beside TPI per method of one run."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Max

from intruder.analysis.frontier import FRONTIER_TITLE, frontier_table, plot_frontier
from intruder.models import AttackRun
from intruder.risk.methods import method_label
from intruder.selectors.report_cache import cached_for_inputs


def frontier_context(run: AttackRun) -> dict[str, Any]:
    """Return the template context of the frontier section (`risk/_frontier.html`).

    Cached per run and its rows: the section reads machine results and TPI only, so a new
    judgment, which changes the rest of the report, does not redraw it.
    """
    results = run.results.aggregate(n=Count("pk"), last=Max("pk"))
    inputs = (run.pk, results["n"], results["last"], run.seed, run.methods, run.summary.get("tpi"))
    return cached_for_inputs("frontier", inputs, lambda: _frontier_context(run))


def _frontier_context(run: AttackRun) -> dict[str, Any]:
    from django.utils.safestring import mark_safe

    from intruder.rendering.plots import to_svg
    from intruder.risk.rendering import html_table
    from intruder.risk.selectors import run_results

    tpi = run.summary.get("tpi") or {}
    metric = tpi.get("metric", "TPI")
    table = frontier_table(
        run_results(run),
        tpi.get("methods", {}),
        labels={m: method_label(m) for m in run.methods},
        seed=run.seed,
    )
    if table.empty:
        return {}
    figure = plot_frontier(table, metric)
    shown = table.rename(columns={"tpi": metric}).drop(columns=["method"])
    return {
        "frontier": {
            "title": FRONTIER_TITLE,
            "metric": metric,
            "ic_source": tpi.get("ic_source"),
            "computed": bool(tpi),
            "html": mark_safe(html_table(shown)),
            "svg": mark_safe(to_svg(figure)) if figure is not None else "",
        }
    }
