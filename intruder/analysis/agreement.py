"""Agreement between "Could you identify the person?" and the scored outcome.

The paper reports 92.43% agreement in Study 1 (footnote 9) and 78.38% in Study 2
(footnote 12) and uses the scored outcome throughout. Agreement is computed per judgment:
a judgment agrees when self_identified == (cosine >= threshold).
"""

from __future__ import annotations

from typing import Literal

import pandas as pd

from intruder.analysis.frames import judged_texts

By = Literal["overall", "group", "target"]
_KEYS: dict[str, list[str]] = {
    "overall": [],
    "group": ["group"],
    "target": ["group", "target_key", "target_name"],
}
COLUMNS = [
    "n_judgments",
    "n_agree",
    "pct_agreement",
    "self_yes_scored_yes",
    "self_yes_scored_no",
    "self_no_scored_yes",
    "self_no_scored_no",
]


def _counts(part: pd.DataFrame) -> dict[str, float]:
    """Return the agreement counts of one set of judgments."""
    said, scored = part["self_identified"], part["identified"]
    n = len(part)
    agree = int((said == scored).sum())
    return {
        "n_judgments": n,
        "n_agree": agree,
        "pct_agreement": 100.0 * agree / n if n else float("nan"),
        "self_yes_scored_yes": int((said & scored).sum()),
        "self_yes_scored_no": int((said & ~scored).sum()),
        "self_no_scored_yes": int((~said & scored).sum()),
        "self_no_scored_no": int((~said & ~scored).sum()),
    }


def self_report_agreement(
    judgments: pd.DataFrame, texts: pd.DataFrame, threshold: float, by: By = "overall"
) -> pd.DataFrame:
    """Return the % of judgments whose self-report matches the scored outcome, with the
    2x2 counts (self-reported yes/no x scored identified/not)."""
    keys = _KEYS[by]
    judged = judged_texts(judgments, texts, threshold)
    if not keys:
        return pd.DataFrame([_counts(judged)], columns=COLUMNS)
    rows = [
        {**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)), **_counts(p)}
        for key, p in judged.groupby(keys, sort=True)
    ]
    return pd.DataFrame(rows, columns=[*keys, *COLUMNS])
