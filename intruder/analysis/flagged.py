"""Human identification rates with all judgments and with flagged judgments excluded.

A judgment is excluded where the study's pre-set exclusion rules (or a researcher's review)
say so (`intruder.evidence.selectors`); the judgments frame then carries a boolean `excluded`
column. Both rates use the same definition (`rates.identification_rates`, unit = text):
excluding judgments can leave a text unjudged, so n may differ between the two columns.
The comparison holds under the assumption that flags mark answers that are not one human's
own view; it says nothing about unflagged answers made with help the telemetry cannot see.
"""

from __future__ import annotations

import pandas as pd

from intruder.analysis import rates

COLUMNS = (
    "scope",
    "n_judgments_all",
    "n_judgments_excluded",
    "n_all",
    "pct_identified_all",
    "se_pct_identified_all",
    "n_without_flagged",
    "pct_identified_without_flagged",
    "se_pct_identified_without_flagged",
)


def rates_with_and_without_flagged(
    judgments: pd.DataFrame, texts: pd.DataFrame, threshold: float
) -> pd.DataFrame:
    """Return overall and per-group % identified (texts as units) side by side: all
    judgments, and judgments not excluded by the study's rules."""
    excluded = judgments["excluded"].fillna(False).astype(bool)
    kept = judgments[~excluded]
    rows = []
    for by in ("overall", "group"):
        everything = rates.identification_rates(judgments, texts, threshold, by=by)
        without = rates.identification_rates(kept, texts, threshold, by=by)
        if by == "overall":
            merged = everything.add_suffix("_all").join(without.add_suffix("_kept"))
        else:
            merged = everything.merge(without, on="group", how="left", suffixes=("_all", "_kept"))
        for _, row in merged.iterrows():
            scope = "overall" if by == "overall" else f"group: {row['group']}"
            in_scope = (
                judgments["text_id"].isin(texts.loc[texts["group"] == row["group"], "text_id"])
                if by == "group"
                else pd.Series(True, index=judgments.index)
            )
            rows.append(
                {
                    "scope": scope,
                    "n_judgments_all": int(in_scope.sum()),
                    "n_judgments_excluded": int((in_scope & excluded).sum()),
                    "n_all": int(row["n_all"]),
                    "pct_identified_all": row["pct_identified_all"],
                    "se_pct_identified_all": row["se_pct_identified_all"],
                    "n_without_flagged": int(row["n_kept"]) if pd.notna(row["n_kept"]) else 0,
                    "pct_identified_without_flagged": row["pct_identified_kept"],
                    "se_pct_identified_without_flagged": row["se_pct_identified_kept"],
                }
            )
    return pd.DataFrame(rows, columns=list(COLUMNS))
