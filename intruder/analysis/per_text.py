"""Per-text outcomes: how often and how closely intruders named the person behind each text."""

from __future__ import annotations

import numpy as np
import pandas as pd

from intruder.analysis.frames import TARGET_COLUMNS, judged_texts, require_columns


def per_text(judgments: pd.DataFrame, texts: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Return one row per text: judgments, mean and SD of cosine, % judgments identified.

    As in the paper (3.1.3.2), the judgments of a text are averaged into one cosine and the
    text counts as identified when that mean is >= `threshold`; under the best-match rule a
    judgment that named another person is credited 0 (`frames.judged_texts`), and
    `n_named_other` counts those judgments under either rule. Texts without judgments keep
    a row with n_judgments = 0 and empty scores; SD needs two judgments. The `note` column
    says why a number is empty.
    """
    require_columns(texts, ["text_id", "external_id", *TARGET_COLUMNS], "texts")
    judged = judged_texts(judgments, texts, threshold)
    grouped = judged.groupby("text_id")
    stats = pd.DataFrame(
        {
            "n_judgments": grouped.size(),
            "mean_cosine": grouped["cosine"].mean(),
            "sd_cosine": grouped["cosine"].std(ddof=1),
            "pct_judgments_identified": 100.0 * grouped["identified"].mean(),
            "n_self_identified": grouped["self_identified"].sum(),
            "n_named_other": grouped["named_other"].sum(),
        }
    )
    table = texts[["text_id", "external_id", *TARGET_COLUMNS]].merge(
        stats, left_on="text_id", right_index=True, how="left"
    )
    table["n_judgments"] = table["n_judgments"].fillna(0).astype(int)
    table["n_self_identified"] = table["n_self_identified"].fillna(0).astype(int)
    table["n_named_other"] = table["n_named_other"].fillna(0).astype(int)
    table["identified"] = pd.array(
        np.where(table["n_judgments"] > 0, table["mean_cosine"] >= threshold, pd.NA),
        dtype="boolean",
    )
    table["note"] = np.select(
        [table["n_judgments"] == 0, table["n_judgments"] == 1],
        ["no judgments", "1 judgment: SD undefined"],
        default="",
    )
    return table.sort_values(["group", "target_name", "text_id"]).reset_index(drop=True)
