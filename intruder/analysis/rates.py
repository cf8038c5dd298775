"""Identification rates per target person, per group and overall (paper Tables 3, 4 and 7).

Unit of analysis. The paper averages the judgments of each text and counts the text as
identified when that mean cosine passes the cut-off; M and SD are taken over those per-text
means and "% identified" is the share of texts identified (unit="text", the default).
unit="judgment" treats every judgment as one observation instead.

Interval. Every rate has its 95 % Wilson interval (`ci_low`, `ci_high`, from
`intruder.risk.stats.wilson`, the one interval method for rates on every page and CLI,
the risk report's too); pages and `analyse_study` give the rate with it.

Standard error (paper comparison only). SE % identified = 100 * sd(x) / sqrt(n) with x
the 0/1 identified indicator and sd the sample SD (ddof = 1), i.e.
100 * sqrt(p (1 - p) / (n - 1)). This reproduces the paper's published SEs: Table 4,
Cumberbatch 2 of 43 texts, 100 * sqrt(0.0465 * 0.9535 / 42) = 3.25 (the n denominator
would give 3.21); Table 7, Adele 23 of 59, 100 * sqrt(0.3898 * 0.6102 / 58) = 6.40;
section 4.2.1, 285 of 1080 texts, 1.34.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from intruder.analysis.frames import judged_texts, with_rule
from intruder.analysis.intervals import wilson
from intruder.analysis.per_text import per_text
from model_runtime.guess_scoring import IDENTIFICATION_RULES

Unit = Literal["text", "judgment"]
By = Literal["target", "group", "overall"]

GROUP_KEYS: dict[str, list[str]] = {
    "target": ["group", "target_key", "target_name"],
    "group": ["group"],
    "overall": [],
}
# The column layout of the paper's Tables 3, 4 and 7.
PAPER_LAYOUT: dict[str, str] = {
    "mean_cosine": "M",
    "sd_cosine": "SD",
    "pct_identified": "% identified",
    "se_pct_identified": "SE % identified",
}


def percent_se(identified: pd.Series) -> float:
    """Return the SE of the percentage identified: 100 * sd(ddof=1) / sqrt(n); NaN if n < 2."""
    values = identified.astype(float)
    n = len(values)
    if n < 2:
        return float("nan")
    return float(100.0 * values.std(ddof=1) / np.sqrt(n))


def rate_text(row: dict) -> str:
    """Return a rates row as the platform prints every rate: '10.7 % (95 % CI 3.7 to 27.2,
    3 of 28)', the Wilson form of the risk report too (never an SE: 0 at 100 % of 4 texts)."""
    return wilson(int(row["n_identified"]), int(row["n"])).text()


def _summarise(observations: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Aggregate observations (cosine, identified, n_judgments) per `keys`."""
    rows = []
    groups = observations.groupby(keys, sort=True) if keys else [((), observations)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        n = len(part)
        interval = wilson(int(part["identified"].sum()), n)
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "n": n,
                "n_judgments": int(part["n_judgments"].sum()),
                "n_named_other": int(part["n_named_other"].sum()),
                "mean_cosine": float(part["cosine"].mean()) if n else float("nan"),
                "sd_cosine": float(part["cosine"].std(ddof=1)) if n > 1 else float("nan"),
                "n_identified": int(part["identified"].sum()),
                "pct_identified": 100.0 * float(part["identified"].mean()) if n else float("nan"),
                "ci_low": interval.ci_low,
                "ci_high": interval.ci_high,
                "se_pct_identified": percent_se(part["identified"]),
            }
        )
    columns = [
        *keys,
        "n",
        "n_judgments",
        "n_named_other",
        "mean_cosine",
        "sd_cosine",
        "n_identified",
    ]
    return pd.DataFrame(
        rows, columns=[*columns, "pct_identified", "ci_low", "ci_high", "se_pct_identified"]
    )


def identification_rates(
    judgments: pd.DataFrame,
    texts: pd.DataFrame,
    threshold: float,
    by: By = "target",
    unit: Unit = "text",
) -> pd.DataFrame:
    """Return M and SD of cosine and % identified with its SE per target, group or overall.

    Columns: the keys, n (texts or judgments, by `unit`), n_judgments, n_texts_unjudged,
    mean_cosine, sd_cosine, n_identified, pct_identified, se_pct_identified, note.
    """
    if by not in GROUP_KEYS:
        raise ValueError(f"by must be one of {sorted(GROUP_KEYS)}, got {by!r}")
    keys = GROUP_KEYS[by]
    texts_table = per_text(judgments, texts, threshold)
    if unit == "text":
        observations = texts_table[texts_table["n_judgments"] > 0].rename(
            columns={"mean_cosine": "cosine"}
        )
    elif unit == "judgment":
        observations = judged_texts(judgments, texts, threshold)
        observations = observations.assign(
            n_judgments=1, n_named_other=observations["named_other"].astype(int)
        )
    else:
        raise ValueError(f"unit must be 'text' or 'judgment', got {unit!r}")
    table = _summarise(observations, keys)
    unjudged = texts_table[texts_table["n_judgments"] == 0]
    if keys:
        unjudged_counts = unjudged.groupby(keys).size().rename("n_texts_unjudged").reset_index()
        if table.empty:  # every judgment left out (e.g. all flagged): one row per key, n = 0
            table = table.astype({key: unjudged_counts[key].dtype for key in keys})
        table = table.merge(unjudged_counts, on=keys, how="outer")
        if by == "target":
            # Targets with only unjudged texts still get a row that says so.
            table["n"] = table["n"].fillna(0)
            table["n_judgments"] = table["n_judgments"].fillna(0)
            table["n_named_other"] = table["n_named_other"].fillna(0)
            table["n_identified"] = table["n_identified"].fillna(0)
    else:
        table["n_texts_unjudged"] = len(unjudged)
    table["n_texts_unjudged"] = table["n_texts_unjudged"].fillna(0).astype(int)
    for column in ("n", "n_judgments", "n_named_other", "n_identified"):
        table[column] = table[column].fillna(0).astype(int)
    table["note"] = np.select(
        [table["n"] == 0, table["n"] == 1],
        [f"no judged {unit}s", f"one {unit}: SD and SE undefined"],
        default="",
    )
    return table.sort_values(keys).reset_index(drop=True) if keys else table


def rates_under_guess_rules(
    judgments: pd.DataFrame, texts: pd.DataFrame, threshold: float, chosen: str
) -> pd.DataFrame:
    """Return the overall rate (texts as units) under each rule of a guess, the study's first.

    The paper's rule beside the best-match rule shows what guesses that named another person
    of the study add to the rate; `n_named_other` is the same under both (a fact of the
    guesses), `chosen` marks the study's rule.
    """
    order = [chosen, *(r for r in IDENTIFICATION_RULES if r != chosen)]
    rows = []
    for rule in order:
        table = identification_rates(with_rule(judgments, rule), texts, threshold, by="overall")
        rows.append(table.assign(guess_rule=rule, chosen=rule == chosen))
    table = pd.concat(rows, ignore_index=True)
    return table[["guess_rule", "chosen", *(c for c in table.columns if c not in GUESS_RULE_KEYS)]]


GUESS_RULE_KEYS = ("guess_rule", "chosen")
