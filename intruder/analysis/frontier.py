"""The privacy-utility frontier of a risk report: per method, TRIR beside TPI and words masked.

Django-free and self-contained, so the risk report includes it as one section: it takes the
attack results (`intruder.risk.selectors.run_results`) and each method's TPI
(`anonymize.tpi`, computed by `intruder.selectors.frontier`).

Per method: TRIR of each attack and of the strongest adversary (any attack ranks the person
first), the strongest's label-permutation null (what the any-attack rule scores by chance on
these texts, `attacks.strongest.strongest_permutation_null`), the share of words masked and
TPI. A method is "dominated" when another has both a lower strongest TRIR and a higher TPI.
Paper 002 calls TRIR at or below about 9 % robust (El Emam 2013; k = 11 for one attacker);
the line is drawn for one attacker and for the strongest alike, which it does not strictly
cover: the strongest of several attackers is held to a higher chance level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from attacks.strongest import STRONGEST, strongest_permutation_null

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ROBUST_TRIR_PCT = 9.0
FRONTIER_TITLE = "Privacy-utility frontier: TRIR against TPI and words masked, per method"


def frontier_table(
    results: pd.DataFrame,
    tpi: dict[str, float | None],
    labels: dict[str, str] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Return one row per method: n, % words masked, TPI, TRIR per attack and strongest, null.

    `results` has one row per (description, method, attack) with predicted_key, target_key,
    true_rank and masked_share; `tpi` maps method -> TPI in % (None where not computed).
    """
    if results.empty:
        return pd.DataFrame()
    names = sorted(results["target_key"].dropna().unique())
    rows = []
    for method, part in results.groupby("method", sort=False):
        correct = part.assign(correct=part["true_rank"] == 1)
        by_text = correct.groupby("description_id")
        row: dict[str, Any] = {
            "method": method,
            "label": (labels or {}).get(method, method),
            "n_texts": by_text.ngroups,
            "pct_words_masked": 100.0 * by_text["masked_share"].first().astype(float).mean(),
            "tpi": tpi.get(method),
        }
        for attack, rows_of_attack in correct.groupby("attack", sort=True):
            row[f"trir_{attack}"] = 100.0 * rows_of_attack["correct"].fillna(False).mean()
        row[f"trir_{STRONGEST}"] = 100.0 * by_text["correct"].any().mean()
        top = {
            attack: dict(zip(a["description_id"].astype(str), a["predicted_key"], strict=True))
            for attack, a in part.groupby("attack")
        }
        row["strongest_null_pct"], row["strongest_null_p95_pct"] = strongest_permutation_null(
            top, names, seed
        )
        row["robust"] = row[f"trir_{STRONGEST}"] <= ROBUST_TRIR_PCT
        rows.append(row)
    table = pd.DataFrame(rows)
    table["dominated"] = [
        any(
            other is not None and row_tpi is not None and other_trir < trir and other > row_tpi
            for other, other_trir in zip(table["tpi"], table[f"trir_{STRONGEST}"], strict=True)
        )
        for row_tpi, trir in zip(table["tpi"], table[f"trir_{STRONGEST}"], strict=True)
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
    null = float(table["strongest_null_pct"].max())
    for axes, column, label in (
        (panels[0], "tpi", f"{tpi_metric} (% of information kept)"),
        (panels[1], "pct_words_masked", "words masked (%)"),
    ):
        shown = table[table[column].notna()]
        axes.scatter(shown[column], shown[f"trir_{STRONGEST}"], color="#c44e52", s=30)
        for _, row in shown.iterrows():
            axes.annotate(
                str(row["label"]),
                (row[column], row[f"trir_{STRONGEST}"]),
                textcoords="offset points",
                xytext=(4, 3),
                fontsize=7,
            )
        axes.axhline(ROBUST_TRIR_PCT, color="#55a868", linewidth=1, label="robust (9 %)")
        axes.axhline(null, color="gray", linestyle=":", linewidth=1, label="chance, strongest")
        axes.set_xlabel(label)
        axes.legend(fontsize=7)
    panels[0].set_ylabel("TRIR, strongest adversary (%)")
    figure.tight_layout()
    return figure
