"""Matplotlib figures of the analysis report, returned as SVG text (inline on the page, files
in the CLI)."""

from __future__ import annotations

from html import escape

import numpy as np

from intruder.analysis.report import Report
from intruder.rendering.svg import plt, to_svg


def plot_target_rates(report: Report) -> str | None:
    """Bar chart of % identified (95 % Wilson CI) per target, with the paper's values."""
    table = report.tables.get("rates_target_paper", report.tables.get("rates_target"))
    if table is None or table.empty:
        return None
    table = table[table["n"] > 0].sort_values(["group", "pct_identified"])
    labels = [f"{n} ({g})" for n, g in zip(table["target_name"], table["group"], strict=True)]
    y = np.arange(len(table))
    figure, axes = plt.subplots(figsize=(7, 0.3 * len(table) + 1.2))
    rate = table["pct_identified"].astype(float)
    below = (rate - table["ci_low"].astype(float)).clip(lower=0).fillna(0)
    above = (table["ci_high"].astype(float) - rate).clip(lower=0).fillna(0)
    axes.barh(
        y,
        rate,
        xerr=np.vstack([below.to_numpy(), above.to_numpy()]),
        color="#4c72b0",
        label="this study (95 % Wilson CI)",
    )
    if "paper_pct_identified" in table.columns and table["paper_pct_identified"].notna().any():
        axes.plot(table["paper_pct_identified"], y, "o", color="#dd8452", label="paper")
    axes.set_yticks(y, labels, fontsize=8)
    axes.set_xlabel("% texts identified")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0)
    return to_svg(figure)


def plot_text_cosines(report: Report) -> str | None:
    """Histogram of the per-text mean cosine with the identification threshold marked."""
    table = report.tables.get("per_text")
    if table is None or table["mean_cosine"].dropna().empty:
        return None
    figure, axes = plt.subplots(figsize=(6, 3))
    for group, part in table.dropna(subset=["mean_cosine"]).groupby("group"):
        axes.hist(part["mean_cosine"], bins=np.linspace(0, 1, 21), alpha=0.6, label=group)
    axes.axvline(report.threshold, color="black", linestyle="--", label="threshold")
    axes.set_xlabel("mean cosine per text")
    axes.set_ylabel("texts")
    axes.legend(fontsize=8)
    return to_svg(figure)


def plot_construct_loss(report: Report) -> str | None:
    """Mean POS frequency per text, original vs anonymized (and mapped placeholders)."""
    table = report.tables.get("construct_loss")
    if table is None or table.empty:
        return None
    mapped = report.tables.get("construct_loss_mapped")
    table = table[table["pos"] != "ntok"]
    x = np.arange(len(table))
    width = 0.28
    figure, axes = plt.subplots(figsize=(8, 3))
    axes.bar(x - width, table["mean_original"], width, label="original")
    axes.bar(x, table["mean_anonymized"], width, label="anonymized")
    if mapped is not None:
        mapped = mapped[mapped["pos"] != "ntok"]
        axes.bar(x + width, mapped["mean_anonymized"], width, label="placeholders mapped")
    axes.set_xticks(x, table["pos"], rotation=90, fontsize=8)
    axes.set_ylabel("mean count per text")
    axes.legend(fontsize=8)
    return to_svg(figure)


def plot_anonymisability(report: Report) -> str | None:
    """Box plots of the proportion anonymized for not identified vs identified texts."""
    features = report.tables.get("anonymisability_features")
    texts = report.tables.get("per_text")
    if features is None or texts is None:
        return None
    data = features.merge(texts[["text_id", "identified"]], on="text_id").dropna(
        subset=["identified", "prop_anonymized"]
    )
    groups = [data.loc[data["identified"] == flag, "prop_anonymized"].to_numpy() for flag in (0, 1)]
    if not all(len(g) for g in groups):
        return None
    figure, axes = plt.subplots(figsize=(4, 3))
    axes.boxplot(groups, tick_labels=["not identified (0)", "identified (1)"])
    axes.set_ylabel("% of words anonymized")
    return to_svg(figure)


# Each plot's title and text alternative (WCAG 1.1.1): what it shows and where its numbers
# are in text form, for readers who cannot see it.
PLOT_TEXT = {
    "plot_target_rates": (
        "Texts identified per target",
        "Horizontal bar chart of the percentage of texts identified for each target person, "
        "with standard-error bars and the paper's values as dots where matched. The numbers "
        "are in the per-target rates table on this page.",
    ),
    "plot_text_cosines": (
        "Mean cosine per text",
        "Histogram of each text's mean character cosine between guesses and the true name, "
        "per person group, with the identification threshold as a dashed line. The numbers "
        "are in the per-text table on this page.",
    ),
    "plot_anonymisability": (
        "Share of words anonymized, identified vs not identified texts",
        "Box plots of the percentage of words anonymized in texts that were not identified "
        "and in texts that were. The numbers are in the anonymisability table on this page.",
    ),
    "plot_construct_loss": (
        "Construct loss: part-of-speech counts before and after anonymization",
        "Grouped bar chart of the mean count per text of each part-of-speech tag in the "
        "original and the anonymized texts. The numbers are in the construct loss table.",
    ),
}


def svg_describe(svg: str, *, title: str, description: str) -> str:
    """Return the SVG with a <title> and <desc> that screen readers announce as an image."""
    head_end = svg.index(">") + 1
    return (
        f'{svg[: head_end - 1]} role="img" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title><desc>{escape(description)}</desc>{svg[head_end:]}"
    )


def report_plots(report: Report) -> dict[str, str]:
    """Return every plot the report's data supports, by file name, titled and described."""
    makers = {
        "plot_target_rates": plot_target_rates,
        "plot_text_cosines": plot_text_cosines,
        "plot_anonymisability": plot_anonymisability,
        "plot_construct_loss": plot_construct_loss,
    }
    plots = {name: maker(report) for name, maker in makers.items()}
    return {
        name: svg_describe(svg, title=PLOT_TEXT[name][0], description=PLOT_TEXT[name][1])
        for name, svg in plots.items()
        if svg
    }
