"""The report's ladder refits the predicted-human model per budget, as the benchmark does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.crowd_intruder import predicted_human
from intruder.risk import predicted as model
from intruder.risk.report.tables import knowledge_budget_predicted_table
from intruder.risk.stats import MIN_PERSONS_RHO

PERSONS = "abcdefg"
# Each person's true ranks per attack over their three texts (None: not ranked).
RANKS = {
    "1": {"tfidf": [1, 3, None], "bm25": [2, 2, 5]},
    "all": {"tfidf": [1, 1, 2], "bm25": [1, 2, 1]},
}
HUMAN_PCT = {"a": 100.0, "b": 0.0, "c": 33.33333333333333, "d": 66.66666666666666}
HUMAN_PCT |= {"e": 0.0, "f": 33.33333333333333, "g": 100.0}


def _results(budget: str, shift: int) -> pd.DataFrame:
    """One run's results: 7 famous persons, 3 texts each, two attacks."""
    rows = []
    for p, person in enumerate(PERSONS):
        for t in range(3):
            for attack, ranks in RANKS[budget].items():
                rank = ranks[(t + p + shift) % 3]
                rows.append(
                    {
                        "description_id": 10 * p + t,
                        "method": "textwash",
                        "attack": attack,
                        "true_rank": rank,
                        "true_prob": 0.5,
                        "predicted_key": person if rank == 1 else "z",
                        "target_key": person,
                        "target_name": person.upper(),
                        "group": "famous",
                        "external_id": f"t{p}{t}",
                        "masked_share": 0.5,
                        "hit_share": float(rank == 1),
                    }
                )
    return pd.DataFrame(rows)


def _human(persons: str = PERSONS) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "group": "famous",
            "target_key": list(persons),
            "target_name": [p.upper() for p in persons],
            "human_n": 3,
            "human_pct_identified": [HUMAN_PCT[p] for p in persons],
        }
    )


def _runs() -> list[tuple[dict, pd.DataFrame]]:
    return [
        (
            {"run": 1, "knowledge_budget": 1, "budget_resamples": 10, "candidates": 7},
            _results("1", 0),
        ),
        ({"run": 2, "candidates": 7}, _results("all", 1)),
    ]


def _by_hand(results: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Evidence per text and k of n per person, computed here from the raw ranks."""
    rr = (1.0 / results["true_rank"].astype(float)).fillna(0.0)
    texts = (
        results.assign(evidence=rr)
        .groupby(["description_id", "target_key", "group"], as_index=False)["evidence"]
        .mean()
    )
    persons = pd.DataFrame(
        {
            "target_key": list(PERSONS),
            "group": "famous",
            "human_k": [round(HUMAN_PCT[p] * 3 / 100) for p in PERSONS],
            "human_n": 3,
            "human_pct": [HUMAN_PCT[p] for p in PERSONS],
        }
    )
    return persons, texts


def test_each_budget_row_is_the_model_refitted_on_that_runs_evidence():
    table = knowledge_budget_predicted_table(_runs(), "textwash", None, _human())
    assert list(table["knowledge_budget"]) == ["1", "all"]
    for (side, results), (_, row) in zip(_runs(), table.iterrows(), strict=True):
        persons, texts = _by_hand(results)
        expected = model.lopo_validation(persons, texts, ["bm25", "tfidf"], 7)
        assert row["n"] == expected["n"] == 7 and row["n_texts"] == 21
        for name in ("lopo_rho", "lopo_rho_ci_low", "lopo_rho_ci_high", "lopo_mae_pp"):
            assert row[name] == pytest.approx(expected[name])
        # The baseline by hand: each person predicted at the mean of the six others.
        others = [(sum(HUMAN_PCT.values()) - HUMAN_PCT[p]) / 6 for p in PERSONS]
        mae = np.mean([abs(HUMAN_PCT[p] - o) for p, o in zip(PERSONS, others, strict=True)])
        assert row["mean_baseline_mae_pp"] == pytest.approx(mae)
        assert row["lopo_rho_ci_low"] <= row["lopo_rho"] <= row["lopo_rho_ci_high"]
        assert row["resamples"] == (10 if side.get("knowledge_budget") else 1)
    # The budget changes the evidence, so the two refits differ.
    assert table["lopo_mae_pp"].nunique() == 2


def test_the_benchmark_and_the_report_compute_the_same_numbers():
    _, results = _runs()[0]
    _, texts = _by_hand(results)
    published = pd.DataFrame(
        {"study": 2, "person": list(PERSONS), "pct_identified": [HUMAN_PCT[p] for p in PERSONS]}
    )
    bench = predicted_human({"study2": texts}, published, ["bm25", "tfidf"], 7)
    row = knowledge_budget_predicted_table(_runs()[:1], "textwash", None, _human()).iloc[0]
    for name in ("lopo_rho", "lopo_mae_pp", "mean_baseline_mae_pp", "n"):
        assert bench[name] == pytest.approx(row[name])


def test_no_statistic_below_the_minimum_of_persons():
    few = PERSONS[: MIN_PERSONS_RHO - 1]
    table = knowledge_budget_predicted_table(_runs(), "textwash", None, _human(few))
    assert (table["n"] == MIN_PERSONS_RHO - 1).all()
    assert table[["lopo_rho", "lopo_mae_pp", "mean_baseline_mae_pp"]].isna().all().all()
    assert table["note"].str.contains(f"needs {MIN_PERSONS_RHO} persons").all()


def test_no_table_without_a_budget_run_or_human_rates():
    plain = [_runs()[1]]
    assert knowledge_budget_predicted_table(plain, "textwash", None, _human()).empty
    assert knowledge_budget_predicted_table(_runs(), "textwash", None, None).empty


def test_the_ladder_counts_median_ranks_not_the_mean_share_of_resamples():
    """Issue 46: a text ranked first in 6 of 10 resamples is re-identified (median rank 1),
    one ranked first in 4 of 10 is not; the mean share (45 %) is not the TRIR (50 %)."""
    from intruder.risk.report.tables import knowledge_budget_table, nearest_budget

    rows = []
    for i, (rank, share) in enumerate([(1, 0.6), (1, 0.6), (2, 0.4), (3, 0.2)]):
        rows.append(
            {
                "description_id": i,
                "method": "textwash",
                "attack": "tfidf",
                "true_rank": rank,
                "true_prob": 0.5,
                "predicted_key": "a" if rank == 1 else "z",
                "target_key": "a",
                "target_name": "A",
                "group": "famous",
                "external_id": f"t{i}",
                "masked_share": 0.5,
                "hit_share": share,
            }
        )
    results = pd.DataFrame(rows)
    human = {"k": 1, "n": 4, "pct": 25.0, "ci_low": 4.6, "ci_high": 69.9}
    side = {"run": 7, "knowledge_budget": 1, "budget_resamples": 10, "candidates": 7}
    table = knowledge_budget_table([(side, results)], "textwash", None, None, human)
    row = table.set_index("attack").loc["tfidf"]
    assert row["trir"] == pytest.approx(50.0) and row["n_texts"] == 4
    assert row["gap_pp"] == pytest.approx(25.0)
    nearest = nearest_budget(table)
    assert nearest["attack"] == "strongest" and nearest["knowledge_budget"] == "1"
