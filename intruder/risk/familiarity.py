"""Split the share of judgments naming each person into familiarity x naming-given-familiar.

Where a study asks the familiarity question (`intruder.services.familiarity`), every judgment
of a famous person's text by an intruder who answered it is either familiar (they had heard
of the person) or not. Over those judgments, exactly:

    naming = familiarity x naming-given-familiar + (1 - familiarity) x naming-given-unfamiliar

where naming is the share of judgments whose guess names the person under the study's rule of
a guess (`model_runtime.guess_scoring`: best match or the paper's). It is NOT the human rate:
the human rate counts texts under the study's rule of "identified by humans" (a text's
judgments together), and familiarity belongs to one intruder, so it splits judgments, not
texts (issue 46: 88.9 % of one person's 9 judgments named them where 2 of their 3 texts,
66.7 %, were identified). The second term is small where "heard of" is what naming a person
needs; the table shows it, so nothing is hidden in the product. Each share is k of n with its
Wilson interval.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from intruder.analysis.intervals import wilson

SPLIT_COLUMNS = (
    "n_judgments",
    "naming_pct",
    "familiarity_pct",
    "naming_given_familiar_pct",
    "naming_given_unfamiliar_pct",
)


def familiarity_split(judgments: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """Return one row per person asked about, with each share, its k, n and Wilson interval.

    judgments: participant_id, target_key, target_name, group, identified (one per judgment,
    under the study's rule of a guess); answers: participant_id, target_key, heard_of.
    Judgments of intruders who did not answer for that person are left out of every share of
    the row (so the shares add up).
    """
    if judgments.empty or answers.empty:
        return pd.DataFrame()
    joined = judgments.merge(
        answers[["participant_id", "target_key", "heard_of"]],
        on=["participant_id", "target_key"],
        how="inner",
    )
    rows: list[dict[str, Any]] = []
    for (group, key, name), part in joined.groupby(["group", "target_key", "target_name"]):
        identified = part["identified"].fillna(False).astype(bool)
        familiar = part["heard_of"].astype(bool)
        row: dict[str, Any] = {"group": group, "target_key": key, "target_name": name}
        for label, k, n in (
            ("naming", identified.sum(), len(part)),
            ("familiarity", familiar.sum(), len(part)),
            ("naming_given_familiar", (identified & familiar).sum(), familiar.sum()),
            ("naming_given_unfamiliar", (identified & ~familiar).sum(), (~familiar).sum()),
        ):
            rate = wilson(int(k), int(n))
            row |= {
                f"{label}_k": rate.k,
                f"{label}_n": rate.n,
                f"{label}_pct": rate.pct,
                f"{label}_ci_low": rate.ci_low,
                f"{label}_ci_high": rate.ci_high,
            }
        row["n_judgments"] = len(part)
        rows.append(row)
    return pd.DataFrame(rows)


def measured_familiarity(answers: pd.DataFrame) -> dict[str, float]:
    """Return person -> share of the intruders asked who had heard of them (every answer)."""
    if answers.empty:
        return {}
    shares = answers.groupby("target_key")["heard_of"].mean()
    return {str(key): float(value) for key, value in shares.items()}
