"""Plots of a running study (SVG with a title and a text alternative for the page)."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from intruder.rendering.svg import plt, to_svg


def recruitment_plot(times: dict[str, list[datetime]]) -> tuple[str, str] | None:
    """Return (SVG, alt text) of cumulative enrolments and completions over time."""
    enrolled, completed = times["enrolled"], times["completed"]
    if not enrolled:
        return None
    figure, axes = plt.subplots(figsize=(7, 3))
    axes.step(enrolled, np.arange(1, len(enrolled) + 1), where="post", label="enrolled")
    if completed:
        axes.step(completed, np.arange(1, len(completed) + 1), where="post", label="completed")
    axes.set_title("Recruitment over time")
    axes.set_ylabel("participants (cumulative)")
    axes.legend(fontsize=8, loc="upper left")
    figure.autofmt_xdate()
    alt = (
        f"Recruitment over time: {len(enrolled)} enrolled between "
        f"{enrolled[0]:%Y-%m-%d %H:%M} and {enrolled[-1]:%Y-%m-%d %H:%M}, "
        f"{len(completed)} completed."
    )
    return to_svg(figure), alt


def judgments_histogram(counts: list[int], target: int) -> tuple[str, str] | None:
    """Return (SVG, alt text) of how many texts have 0, 1, 2, ... judgments."""
    if not counts:
        return None
    top = max(max(counts), target)
    bins = np.arange(0, top + 2) - 0.5
    figure, axes = plt.subplots(figsize=(6, 3))
    axes.hist(counts, bins=bins, color="#4c72b0", rwidth=0.85)
    axes.axvline(target, color="black", linestyle="--", label=f"target ({target})")
    axes.set_title("Judgments per text")
    axes.set_xlabel("judgments")
    axes.set_ylabel("texts")
    axes.set_xticks(range(0, top + 1))
    axes.legend(fontsize=8)
    tally = np.bincount(counts, minlength=top + 1)
    alt = "Judgments per text: " + ", ".join(
        f"{n} text(s) with {k}" for k, n in enumerate(tally) if n
    )
    return to_svg(figure), f"{alt}; target {target} per text."
