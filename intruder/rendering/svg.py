"""Matplotlib figures as SVG text, the one figure path of every page that draws (the
analysis report, the risk report, the monitor page): a headless backend, SVG ready to inline."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plt", "to_svg"]


def to_svg(figure: Figure) -> str:
    """Return `figure` as an SVG document and close it."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    svg = buffer.getvalue()
    # Drop the XML prolog and DOCTYPE so the SVG can be inlined in HTML.
    return svg[svg.index("<svg") :]
