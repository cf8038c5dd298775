"""One definition of 'identified by humans', machine rates on the judged texts, the null.

Pure frames (no database): every number here is counted by hand from the frames below.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attacks.strongest import STRONGEST
from intruder.risk.report.build import build_report
from intruder.risk.report.tables import human_outcomes
from intruder.risk.stats import strongest_null

# Six judged texts of three persons (two each), one draft nobody judged (description 7).
HUMAN = pd.DataFrame(
    {
        "text_id": [11, 12, 13, 14, 15, 16],
        "description_id": [1, 2, 3, 4, 5, 6],
        "method": ["m"] * 6,
        "target_key": ["a", "a", "b", "b", "c", "c"],
        "target_name": ["A", "A", "B", "B", "C", "C"],
        "group": ["famous"] * 6,
        "n_judgments": [3, 3, 3, 3, 3, 2],
        "mean_cosine": [0.9, 0.5, 0.7, 0.1, 0.2, 0.8],
        # 3/3, 2/3, 2/3, 1/3, 0/3, 1/2 named the person
        "pct_judgments_identified": [100.0, 66.7, 66.7, 33.3, 0.0, 50.0],
        "identified": [True, False, False, False, False, True],  # mean cosine >= 0.75
    }
)


def results(hits: dict[int, bool]) -> pd.DataFrame:
    """One attack's results: description -> ranked first or not."""
    rows = []
    for description, hit in hits.items():
        key = "abcd"[(description - 1) // 2]
        rows.append(
            {
                "description_id": description,
                "method": "m",
                "attack": "tfidf",
                "fold": 0,
                "predicted_key": key if hit else "z",
                "true_rank": 1 if hit else 2,
                "true_prob": 0.9 if hit else 0.1,
                "masked_share": 0.2,
                "target_key": key,
                "target_name": key.upper(),
                "group": "famous",
                "external_id": f"t{description}",
            }
        )
    frame = pd.DataFrame(rows)
    frame["true_rank"] = frame["true_rank"].astype("Float64")
    return frame


@pytest.mark.parametrize(
    "rule, expected",
    [
        ("mean_cosine", [True, False, False, False, False, True]),
        ("majority", [True, True, True, False, False, False]),  # 1/2 is not more than half
        ("any", [True, True, True, True, False, True]),
    ],
)
def test_each_rule_counts_the_texts_it_says(rule, expected):
    assert human_outcomes(HUMAN, rule)["human_identified"].tolist() == expected


def test_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="unknown rule"):
        human_outcomes(HUMAN, "half")


def test_machine_rates_beside_humans_use_exactly_the_judged_texts():
    # The machine hits texts 1, 3, 5 and the draft 7 (of person d, judged by nobody).
    machine = results({1: True, 2: False, 3: True, 4: False, 5: True, 6: False, 7: True})
    report = build_report(machine, human_texts=HUMAN, rule="majority", human_method="m")
    head = report.headline
    assert head["n_texts"] == 6 and head["persons"] == 3
    assert head["machine"][STRONGEST]["k"] == 3 and head["machine"][STRONGEST]["n"] == 6
    assert head["human"]["k"] == 3  # majority: texts 1, 2, 3
    target = report.tables["rates_target"]
    assert "d" not in set(target["target_key"])  # the draft's person has no judged text
    assert target["n_texts"].sum() == 6
    coverage = report.tables["coverage"].set_index("texts")
    assert coverage.loc["judged by humans", "n_texts"] == 6
    assert coverage.loc["not judged (drafts, unserved)", "n_texts"] == 1
    assert coverage.loc["not judged (drafts, unserved)", f"trir_{STRONGEST}"] == 100.0
    # The per-text table and the agreement use the same rule as the rates.
    assert report.tables["per_text"]["human_identified"].sum() == 3
    sensitivity = report.tables["sensitivity"].set_index("rule")
    assert sensitivity["human_identified"].to_dict() == {"mean_cosine": 2, "majority": 3, "any": 5}
    assert sensitivity["chosen"].to_dict() == {"mean_cosine": False, "majority": True, "any": False}
    assert report.summary()["settings"]["identified_rule"] == "majority"


def test_summary_names_the_threat_model_with_interval_and_n():
    machine = results({1: True, 2: False, 3: True, 4: False, 5: True, 6: False})
    report = build_report(machine, human_texts=HUMAN, human_method="m")
    text = " ".join(report.paragraphs)
    assert "closed-world machine choosing among N = 3 persons" in text
    assert "95 % CI" in text and "3 of 6" in text and "2 of 6" in text
    for word in ("matches", "overstates", "understates"):
        assert word not in text
    # 3 persons: below the documented minimum for rho and for kappa/McNemar/AUC.
    assert report.correlations[STRONGEST].rho is None
    assert "not enough data" in report.correlations[STRONGEST].note
    row = report.tables["agreement"].set_index("attack").loc[STRONGEST]
    assert row["kappa"] is None and "not enough data" in row["note"] and "n = 6" in row["note"]
    threat = report.summary()["threat_model"]
    assert threat["human"]["candidate_list"] is None
    assert threat["machine"]["candidates"] == 3
    assert threat["machine"]["chance_pct"] == pytest.approx(100 / 3)


def null_frame(predictions: list[list[str]], persons: int, per_person: int) -> pd.DataFrame:
    """Results of len(predictions) attacks on persons * per_person texts (balanced)."""
    rows = []
    for text in range(persons * per_person):
        truth = f"p{text % persons}"
        for attack, guesses in enumerate(predictions):
            rows.append(
                {
                    "description_id": text,
                    "method": "m",
                    "attack": f"a{attack}",
                    "predicted_key": guesses[text],
                    "target_key": truth,
                }
            )
    return pd.DataFrame(rows)


def test_the_any_attack_null_is_one_over_n_for_agreeing_and_k_over_n_for_disjoint_attacks():
    persons, per_person = 20, 5
    texts = persons * per_person
    same = [f"p{(7 * t) % persons}" for t in range(texts)]
    agreeing = strongest_null(null_frame([same] * 4, persons, per_person), "m", permutations=400)
    # Balanced truths, shuffled: any fixed guess is right with probability 1/N = 5 %.
    assert agreeing["strongest_null_pct"] == pytest.approx(5.0, abs=0.6)
    disjoint = [[f"p{(t + j) % persons}" for t in range(texts)] for j in range(4)]
    result = strongest_null(null_frame(disjoint, persons, per_person), "m", permutations=400)
    # Four different guesses per text: 4/N = 20 %, four times the per-attack chance.
    assert result["strongest_null_pct"] == pytest.approx(20.0, abs=1.0)
    assert all(v == pytest.approx(5.0, abs=0.6) for v in result["attack_null_pct"].values())


def test_published_rates_get_a_wilson_interval_over_the_persons_texts():
    machine = results({1: True, 2: False, 3: True, 4: False})
    published = pd.DataFrame(
        {
            "group": ["famous", "famous"],
            "target_key": ["a", "b"],
            "target_name": ["A", "B"],
            "human_n": [None, None],
            "human_pct_identified": [50.0, 0.0],
            "human_se": [1.0, 0.0],
        }
    )
    report = build_report(machine, human_rates=published, human_method="m")
    target = report.tables["rates_target"].set_index("target_key")
    assert target.loc["a", "human_n"] == 2
    assert target.loc["a", "human_ci_low"] == pytest.approx(9.45, abs=0.01)  # Wilson 1 of 2
    assert np.isclose(target.loc["b", "human_ci_low"], 0.0)
    assert report.headline["human"]["k"] == 1 and report.headline["human"]["n"] == 4


def test_predicted_human_risk_is_shown_only_at_the_calibrations_n():
    from intruder.risk.predicted import Calibration

    machine = results({1: True, 2: False, 3: True, 4: False, 5: True, 6: False})
    calibration = Calibration(
        a=-2.0,
        b=2.0,
        n_candidates=3,
        attacks=["tfidf"],
        fitted_on="hand",
        persons=3,
        familiarity={"famous": 1.0, "semifamous": 0.1, "fictitious": 0.0},
        draws=[[-2.0, 2.0], [-1.0, 2.0], [-3.0, 2.0]],
    )
    report = build_report(machine, human_texts=HUMAN, human_method="m", calibration=calibration)
    group = report.tables["predicted_group"].iloc[0]
    # Evidence 1 (rank 1) for 3 texts, 1/2 (rank 2) for 3: mean of sigmoid(0), sigmoid(-1).
    expected = 100 * (0.5 + 1 / (1 + np.exp(1))) / 2
    assert group["predicted_pct"] == pytest.approx(expected)
    assert group["predicted_ci_low"] < expected < group["predicted_ci_high"]
    assert group["human_pct_identified"] == pytest.approx(100 * 2 / 6)
    far = Calibration(**{**calibration.to_dict(), "n_candidates": 560})
    report = build_report(machine, human_texts=HUMAN, human_method="m", calibration=far)
    assert "predicted_group" not in report.tables
    assert "fitted at N = 560" in report.settings["predicted_human"]


def test_the_open_world_llm_intruder_sits_beside_humans_on_the_texts_they_judged():
    # The LLM named the person of descriptions 1, 3 and 7 (7 is the draft), missed 2, 4 and 5,
    # and gave no usable answer for 6: a failure, counted apart, never a miss.
    llm_rows = [
        {"description": d, "method": "m", "identified": hit, "error_reason": ""}
        for d, hit in {1: True, 2: False, 3: True, 4: False, 5: False, 7: True}.items()
    ] + [{"description": 6, "method": "m", "identified": False, "error_reason": "not JSON"}]
    machine = results({1: True, 2: False, 3: True, 4: False, 5: True, 6: False, 7: True})
    report = build_report(
        machine, human_texts=HUMAN, rule="majority", human_method="m", llm_rows=llm_rows
    )
    table = report.tables["llm_intruder"].set_index("texts")
    every = table.loc["all texts of the method"]
    assert (every["n_texts"], every["llm_identified"], every["llm_failed"]) == (6, 3, 1)
    judged = table.loc["judged by humans"]
    # Judged texts 1-6 less the failed 6: the LLM 2 of 5; humans (majority) 3 of 6.
    assert (judged["n_texts"], judged["llm_identified"], judged["llm_failed"]) == (5, 2, 1)
    assert judged["llm_pct_identified"] == pytest.approx(40.0)
    assert (judged["human_n_texts"], judged["human_pct_identified"]) == (6, pytest.approx(50.0))
    assert judged["llm_ci_low"] < 40.0 < judged["llm_ci_high"]
