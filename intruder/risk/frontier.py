"""The privacy-utility frontier of a risk report: per method, TRIR beside TPI and words masked.

One table of the risk report (`build_report` makes it from its own `trir_by_method` table,
its chance levels and each method's TPI), so every form of the report carries it; its plot;
and each method's TPI (`anonymize.tpi`, paper 002), computed once when an attack run
finishes: TPI needs every method's texts, and the baselines' texts (spaCy masking, the model
at a threshold) exist only inside the run, which keeps it in `AttackRun.summary["tpi"]`.

Per method: TRIR of each attack and of the strongest adversary (any attack ranks the person
first) with Wilson CIs, the strongest's permutation null (what the any-attack rule scores by
chance on these texts, `intruder.risk.stats.strongest_null`), the share of words masked and
TPI. A method is "dominated" when another has both a lower strongest TRIR and a higher TPI.
Paper 002 calls TRIR at or below about 9 % robust (El Emam 2013; k = 11 for one attacker);
the line is drawn for one attacker and for the strongest alike, which it does not strictly
cover: the strongest of several attackers is held to a higher chance level.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

import pandas as pd

from attacks.strongest import STRONGEST

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ROBUST_TRIR_PCT = 9.0
FRONTIER_TITLE = "Privacy-utility frontier: TRIR against TPI and words masked, per method"
FRONTIER_NOTE = (
    "TRIR and its 95 % Wilson interval are the TRIR-per-method table's; the chance level of "
    "the strongest adversary is the permutation null the threat model shows (mean, and 95th "
    "percentile); a method is dominated when another has both a lower strongest TRIR and a "
    "higher TPI; robust means a strongest TRIR at or below paper 002's 9 %, a level stated for "
    "one attacker."
)


def frontier_table(
    by_method: pd.DataFrame, tpi: dict[str, float | None], chance: dict[str, dict[str, Any]]
) -> pd.DataFrame:
    """Return one row per method: the report's TRIR row beside TPI, chance, robust, dominated.

    `by_method` is the report's `trir_by_method` (n, % words masked, each attack's TRIR with
    its Wilson CI): the frontier computes no rate of its own, so its numbers are the report's.
    `tpi` maps method -> TPI in % (None where not computed); `chance` is the report's
    permutation null per method (`RiskReport.chance`), computed once and shared with the
    threat model.
    """
    if by_method.empty:
        return pd.DataFrame()
    table = by_method.drop(columns=[c for c in ("cap",) if c in by_method]).copy()
    table.insert(table.columns.get_loc("pct_words_masked") + 1, "tpi", None)
    table["tpi"] = [tpi.get(m) for m in table["method"]]
    for column in ("strongest_null_pct", "strongest_null_p95_pct"):
        table[column] = [(chance.get(m) or {}).get(column) for m in table["method"]]
    strongest = table[f"trir_{STRONGEST}"]
    table["robust"] = strongest <= ROBUST_TRIR_PCT
    table["dominated"] = [
        any(
            other is not None
            and row_tpi is not None
            and not pd.isna(other)
            and not pd.isna(row_tpi)
            and other_trir < trir
            and other > row_tpi
            for other, other_trir in zip(table["tpi"], strongest, strict=True)
        )
        for row_tpi, trir in zip(table["tpi"], strongest, strict=True)
    ]
    return table.sort_values(f"trir_{STRONGEST}", ascending=False).reset_index(drop=True)


def plot_frontier(table: pd.DataFrame, tpi_metric: str) -> Figure | None:
    """Return strongest TRIR against TPI (left) and against words masked (right)."""
    if table.empty:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, panels = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    nulls = table["strongest_null_pct"].dropna()
    null = float(nulls.max()) if len(nulls) else None
    for axes, column, label in (
        (panels[0], "tpi", f"{tpi_metric} (% of information kept)"),
        (panels[1], "pct_words_masked", "words masked (%)"),
    ):
        shown = table[table[column].notna()]
        axes.scatter(shown[column], shown[f"trir_{STRONGEST}"], color="#c44e52", s=30)
        values = shown[column].astype(float)
        middle = (values.min() + values.max()) / 2 if len(values) else 0.0
        for _, row in shown.iterrows():
            # Labels point inwards, so none runs past its panel into the next.
            right = float(row[column]) > middle
            axes.annotate(
                str(row["label"]),
                (row[column], row[f"trir_{STRONGEST}"]),
                textcoords="offset points",
                xytext=(-4 if right else 4, -10),
                ha="right" if right else "left",
                fontsize=7,
            )
        axes.axhline(ROBUST_TRIR_PCT, color="#55a868", linewidth=1, label="robust (9 %)")
        if null is not None:
            axes.axhline(null, color="gray", linestyle=":", linewidth=1, label="chance, strongest")
        axes.set_xlabel(label)
        axes.set_ylim(-3, 105)
    panels[0].set_ylabel("TRIR, strongest adversary (%)")
    # Below the panels, where it covers no point or line.
    handles, labels = panels[0].get_legend_handles_labels()
    figure.legend(handles, labels, fontsize=7, loc="lower center", ncol=2, frameon=False)
    figure.tight_layout(rect=(0, 0.08, 1, 0.93))  # the top keeps room for a title
    return figure


# One scorer per worker process: spaCy loads once, and each original's term ICs (keyed by
# the text itself, so never stale) are computed once for every later run on the same texts.
_SCORER_LOCK = threading.Lock()


@cache
def _scorer() -> Any:
    from anonymize.information import information_source
    from anonymize.tpi import TPIScorer

    return TPIScorer(information_source())


def method_tpi(
    originals: Mapping[int, str], texts_by_method: Mapping[str, Mapping[int, str]]
) -> dict[str, Any]:
    """Return {"metric", "ic_source", "methods": {method: TPI %}, "n": {method: texts}}.

    The offline IC source (wordfreq: `TPI-wordfreq`, docs/decisions/tpi.md); a masked word is
    an original word the method's text does not keep unchanged.
    """
    from anonymize.tpi import masked_ranges_from_texts

    scorer = _scorer()
    values: dict[str, float | None] = {}
    counts: dict[str, int] = {}
    for method, texts in texts_by_method.items():
        items: Iterable = (
            (str(i), originals[i], masked_ranges_from_texts(originals[i], text))
            for i, text in texts.items()
        )
        with _SCORER_LOCK:  # a spaCy pipeline is not safe to share between threads
            result = scorer.corpus(items)
        values[method] = None if result.tpi is None else round(100.0 * result.tpi, 2)
        counts[method] = len(result.documents) - result.undefined
    return {
        "metric": scorer.source.metric,
        "ic_source": scorer.source.name,
        "methods": values,
        "n": counts,
    }
