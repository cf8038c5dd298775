"""The paper's table layouts of a report, for reading (the canonical tables stay tidy).

table2: POS, Description, BF10, BF01 (construct loss; mapped placeholders as a second pair).
table3 / table4_7: Name, M, SD, % identified, SE % identified, with the paper's published
    values beside them ("paper ..." columns) where the study imports the paper's texts.
table5_8 / table6: Name, Top n-grams.
table9: Variable, M0, SD0, M1, SD1, d [95% CI].
"""

from __future__ import annotations

import pandas as pd

from intruder.analysis import leakage
from intruder.analysis.rates import PAPER_LAYOUT
from intruder.analysis.report import Report

LAYOUT_TITLES: dict[str, str] = {
    "table3": "Table 3 layout: per group",
    "table4_7": "Tables 4 and 7 layout: per target person",
    "table5_8": "Tables 5 and 8 layout: n-grams that revealed the identity",
    "table6": "Table 6 layout: n-grams leaked without identification",
    "table9": "Table 9 layout: not identified (0) vs identified (1) texts",
    "table2": "Table 2 layout: construct loss (Bayes factors)",
}


def rates_layout(rates: pd.DataFrame, name_column: str) -> pd.DataFrame:
    """Return Name, M, SD, % identified, SE % identified (+ the paper's values if present)."""
    columns = {name_column: "Name", **PAPER_LAYOUT}
    table = rates[list(columns)].rename(columns=columns)
    if "paper_mean_cosine" in rates.columns:
        for column, label in PAPER_LAYOUT.items():
            table.insert(
                table.columns.get_loc(label) + 1, f"paper {label}", rates[f"paper_{column}"]
            )
    return table.round(2)


def format_d(d: float, low: float, high: float) -> str:
    """Return "d [low; high]" as the paper prints it, or "" where d is undefined."""
    if pd.isna(d):
        return ""
    return f"{d:.2f} [{low:.2f}; {high:.2f}]"


def anonymisability_layout(comparison: pd.DataFrame) -> pd.DataFrame:
    """Return Variable, M0, SD0, M1, SD1, d [95% CI] (Table 9)."""
    return pd.DataFrame(
        {
            "Variable": comparison["label"],
            "M0": comparison["m_0"].round(2),
            "SD0": comparison["sd_0"].round(2),
            "M1": comparison["m_1"].round(2),
            "SD1": comparison["sd_1"].round(2),
            "d [95% CI]": [
                format_d(d, lo, hi)
                for d, lo, hi in zip(
                    comparison["d"], comparison["d_ci_low"], comparison["d_ci_high"], strict=True
                )
            ],
        }
    )


def construct_loss_layout(plain: pd.DataFrame, mapped: pd.DataFrame | None) -> pd.DataFrame:
    """Return POS, Description, BF10, BF01 (and the same with placeholders mapped)."""
    table = plain[["pos", "description", "bf10", "bf01"]].rename(
        columns={"pos": "POS", "description": "Description", "bf10": "BF10", "bf01": "BF01"}
    )
    if mapped is not None:
        table["BF10 mapped"] = mapped["bf10"].to_numpy()
        table["BF01 mapped"] = mapped["bf01"].to_numpy()
    return table


def paper_layouts(report: Report) -> dict[str, pd.DataFrame]:
    """Return every paper-style layout the report's tables support."""
    tables = report.tables
    layouts: dict[str, pd.DataFrame] = {}
    group = tables.get("rates_group_paper", tables.get("rates_group"))
    if group is not None:
        layouts["table3"] = rates_layout(group, "group")
    target = tables.get("rates_target_paper", tables.get("rates_target"))
    if target is not None:
        layouts["table4_7"] = rates_layout(target, "target_name")
    if "leakage_identified" in tables:
        layouts["table5_8"] = leakage.paper_layout(tables["leakage_identified"])
    if "leakage_not_identified" in tables:
        layouts["table6"] = leakage.paper_layout(tables["leakage_not_identified"])
    if "anonymisability" in tables:
        layouts["table9"] = anonymisability_layout(tables["anonymisability"])
    if "construct_loss" in tables:
        layouts["table2"] = construct_loss_layout(
            tables["construct_loss"], tables.get("construct_loss_mapped")
        )
    return layouts
