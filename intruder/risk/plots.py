"""Figures of the risk report (matplotlib): returned as figures, for SVG on pages and PDF pages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attacks.strongest import STRONGEST
from intruder.rendering.svg import to_svg
from intruder.risk.frontier import plot_frontier
from intruder.risk.stats import p_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from intruder.risk.report.tables import RiskReport

HUMAN_COLOUR = "#dd8452"
ATTACK_COLOURS = {
    "tria": "#4c72b0",
    "tfidf": "#55a868",
    "bm25": "#8172b3",
    "dense": "#937860",
    STRONGEST: "#c44e52",
}


def _attacks(table: pd.DataFrame) -> list[str]:
    names = [c[len("trir_") :] for c in table.columns if c.startswith("trir_")]
    return [n for n in names if n != STRONGEST] + [STRONGEST]


def _ci_err(table: pd.DataFrame, value: str, prefix: str) -> np.ndarray:
    """Return matplotlib's asymmetric error bars (2 x n) from the Wilson CI columns."""
    low, high = f"{prefix}ci_low", f"{prefix}ci_high"
    if low not in table or high not in table:
        return np.zeros((2, len(table)))
    centre = table[value].astype(float)
    below = (centre - table[low].astype(float)).clip(lower=0).fillna(0)
    above = (table[high].astype(float) - centre).clip(lower=0).fillna(0)
    return np.vstack([below.to_numpy(), above.to_numpy()])


def plot_rates(report: RiskReport, by: str) -> Figure | None:
    """Bars of human % identified and each attack's TRIR (95 % Wilson CI) per person or group."""
    table = report.tables.get(f"rates_{by}")
    if table is None or table.empty:
        return None
    labels = (
        [f"{n} ({g})" for n, g in zip(table["target_name"], table["group"], strict=True)]
        if by == "target"
        else table["group"].tolist()
    )
    series = []
    if "human_pct_identified" in table:
        series.append(("humans", "human_pct_identified", "human_", HUMAN_COLOUR))
    for attack in _attacks(table):
        series.append((attack, f"trir_{attack}", f"{attack}_", ATTACK_COLOURS.get(attack)))
    height = max(2.5, 0.22 * len(table) * len(series) + 1.0)
    figure, axes = plt.subplots(figsize=(7.5, height))
    y = np.arange(len(table))
    width = 0.8 / len(series)
    for i, (name, column, prefix, colour) in enumerate(series):
        axes.barh(
            y + (i - (len(series) - 1) / 2) * width,
            table[column].astype(float).fillna(0),
            height=width,
            xerr=_ci_err(table, column, prefix),
            color=colour,
            label=name,
            error_kw={"elinewidth": 0.8},
        )
    axes.set_yticks(y, labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlim(0, 105)
    axes.set_xlabel("% of texts re-identified (95 % Wilson CI)")
    outside_legend(axes)
    return figure


def outside_legend(axes: Any) -> None:
    """Put the legend right of the axes, where it covers no bar, point or line."""
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def plot_person_scatter(report: RiskReport) -> Figure | None:
    """Per person: human % identified against the strongest adversary's TRIR, with rho."""
    table = report.tables.get("rates_target")
    if table is None or "human_pct_identified" not in table:
        return None
    data = table.dropna(subset=["human_pct_identified", f"trir_{STRONGEST}"])
    if data.empty:
        return None
    figure, axes = plt.subplots(figsize=(5, 4.5))
    for group, part in data.groupby("group"):
        axes.scatter(part["human_pct_identified"], part[f"trir_{STRONGEST}"], label=group, s=25)
    axes.plot([0, 100], [0, 100], color="grey", linestyle="--", linewidth=0.8)
    axes.set_xlim(-3, 103)
    axes.set_ylim(-3, 103)
    axes.set_xlabel("humans: % of texts identified")
    axes.set_ylabel("machine: strongest adversary TRIR (%)")
    correlation = report.correlations.get(STRONGEST)
    if correlation is not None and correlation.rho is not None:
        axes.set_title(
            f"Spearman rho = {correlation.rho:.2f} "
            f"[{correlation.ci_low:.2f}, {correlation.ci_high:.2f}], {p_text(correlation.p)}, "
            f"n = {correlation.n}",
            fontsize=9,
        )
    outside_legend(axes)
    return figure


def plot_roc(report: RiskReport) -> Figure | None:
    """ROC of each attack's probability of the true person as a predictor of human success."""
    if not report.roc:
        return None
    figure, axes = plt.subplots(figsize=(4.5, 4.5))
    for attack, curve in report.roc.items():
        axes.plot(
            curve["fpr"],
            curve["tpr"],
            label=f"{attack} (AUC {curve['auc']:.2f})",
            color=ATTACK_COLOURS.get(attack),
        )
    axes.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=0.8)
    axes.set_xlabel("false positive rate")
    axes.set_ylabel("true positive rate")
    outside_legend(axes)
    return figure


def plot_risk_vs_masking(report: RiskReport) -> Figure | None:
    """Per method: strongest TRIR against the share of words masked (risk vs utility)."""
    table = report.tables.get("trir_by_method")
    if table is None or table.empty:
        return None
    figure, axes = plt.subplots(figsize=(6, 4))
    x = table["pct_words_masked"].astype(float)
    y = table[f"trir_{STRONGEST}"].astype(float)
    axes.scatter(x, y, color=ATTACK_COLOURS[STRONGEST])
    for xi, yi, method in zip(x, y, table["method"], strict=True):
        axes.annotate(method, (xi, yi), fontsize=8, xytext=(4, 4), textcoords="offset points")
    axes.set_xlabel("% of words masked")
    axes.set_ylabel("strongest adversary TRIR (%)")
    axes.set_ylim(-3, 105)
    return figure


def plot_open_world(report: RiskReport) -> Figure | None:
    """TRIR of each attack against the number of candidates N, chance 1/N, the human rate."""
    table = report.tables.get("open_world")
    if table is None or len(table) < 2:
        return None
    figure, axes = plt.subplots(figsize=(6, 4))
    n = table["candidates"].astype(float)
    for attack in _attacks(table):
        axes.plot(
            n, table[f"trir_{attack}"], marker="o", label=attack, color=ATTACK_COLOURS.get(attack)
        )
    axes.plot(n, table["chance_pct"], linestyle=":", color="grey", label="chance 1/N")
    if "human_pct_identified" in table:
        row = table.iloc[0]
        axes.axhspan(row["human_ci_low"], row["human_ci_high"], color=HUMAN_COLOUR, alpha=0.2)
        axes.axhline(row["human_pct_identified"], color=HUMAN_COLOUR, label="humans (95 % CI)")
    axes.set_xscale("log")
    # Plain numbers: with mathtext off (`plain_text`), log ticks read "$\\mathdefault{10^{0}}$".
    axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axes.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axes.set_xlabel("candidates N (log scale)")
    axes.set_ylabel("% of texts re-identified")
    axes.set_ylim(-3, 105)
    outside_legend(axes)
    return figure


MAKERS = {
    "plot_rates_group": lambda r: plot_rates(r, "group"),
    "plot_rates_target": lambda r: plot_rates(r, "target"),
    "plot_person_scatter": plot_person_scatter,
    "plot_roc": plot_roc,
    "plot_risk_vs_masking": plot_risk_vs_masking,
    "plot_open_world": plot_open_world,
    "plot_frontier": lambda r: plot_frontier(
        r.tables.get("frontier", pd.DataFrame()), (r.settings.get("tpi") or {}).get("metric", "TPI")
    ),
}
PLOT_TITLES = {
    "plot_rates_group": "Per group: humans beside the machine",
    "plot_rates_target": "Per person: humans beside the machine",
    "plot_person_scatter": "Per person: human vs machine rate",
    "plot_roc": "ROC: the machine's probability as a predictor of human identification",
    "plot_risk_vs_masking": "Risk vs words masked, per method",
    "plot_open_world": "Open-world ladder: TRIR against the number of candidates",
    "plot_frontier": "Privacy-utility frontier: strongest TRIR against utility and words masked",
}


def risk_figures(report: RiskReport) -> dict[str, Figure]:
    """Return every figure the report's data support, by name.

    Labels are user data (person and method names): mathtext is off, so a name such as
    `$\\frac{a}$` is drawn as typed instead of failing to parse.
    """
    with plain_text():
        figures = {name: maker(report) for name, maker in MAKERS.items()}
    return {name: figure for name, figure in figures.items() if figure is not None}


def risk_svgs(report: RiskReport) -> dict[str, str]:
    """Return every figure as inline SVG text, drawn once per report (kept on it: a report
    is complete when built, so its drawings never change)."""
    if report.svgs is None:
        with plain_text():
            report.svgs = {name: to_svg(figure) for name, figure in risk_figures(report).items()}
    return report.svgs


def plain_text() -> Any:
    """Return a context in which matplotlib draws `$...$` as typed (no mathtext parsing)."""
    return matplotlib.rc_context({"text.parse_math": False})
