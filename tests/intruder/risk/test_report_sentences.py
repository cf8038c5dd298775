"""Every branch of every summary sentence renders complete, and cells never say None.

Issue 35: the headline's "machine higher" branch printed "(the 95 % intervals do not ." on
every form of the report, because no test rendered it. Each sentence with branches is a
function of its own; each branch is rendered here and checked for a dangling clause.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from attacks.strongest import STRONGEST
from intruder.analysis.intervals import wilson
from intruder.risk.rendering import display_frame, html_table
from intruder.risk.report.summary import (
    CHANCE_VERDICTS,
    COMPARISON_VERDICTS,
    agreement_sentence,
    chance_branch,
    chance_sentence,
    comparison_branch,
    comparison_sentence,
    correlation_sentence,
    methods_sentence,
    most_at_risk_sentence,
)
from intruder.risk.stats import Correlation, p_text, spearman_with_ci

# A clause that stops on a word that needs a continuation ("do not .", "than ;").
DANGLING = re.compile(
    r"\b(?:not|the|a|an|of|and|or|to|than|with|by|for|at|on|in|is|are|do|does)\s*[.;:,]"
)


def assert_complete(sentence: str | None) -> None:
    """A rendered sentence ends with a full stop, closes its brackets, and no clause dangles."""
    assert sentence, "no sentence rendered"
    assert sentence.endswith("."), sentence
    assert not DANGLING.search(sentence), sentence
    assert " ." not in sentence and " ;" not in sentence and ",," not in sentence, sentence
    assert sentence.count("(") == sentence.count(")"), sentence
    assert "None" not in sentence and "nan" not in sentence.lower().split(), sentence


THREAT = {
    "machine": {
        "candidates": 5,
        "chance_pct": 20.0,
        "strongest_null_pct": 35.0,
        "attacks": ["bm25", "tfidf"],
    },
    "human": {"identified_rule_text": "the mean name similarity of its judgments reaches 0.75"},
}


def headline(human: tuple[int, int], machine: tuple[int, int]) -> dict:
    return {
        "n_texts": human[1],
        "persons": 5,
        "human": wilson(*human).to_dict(),
        "machine": {STRONGEST: wilson(*machine).to_dict()},
    }


@pytest.mark.parametrize(
    ("branch", "human", "machine"),
    [
        ("machine_higher", (2, 20), (18, 20)),
        ("machine_lower", (18, 20), (2, 20)),
        ("overlap", (10, 20), (11, 20)),
    ],
)
def test_every_headline_branch_renders_a_complete_sentence(branch, human, machine):
    numbers = headline(human, machine)
    assert comparison_branch(numbers["machine"][STRONGEST], numbers["human"]) == branch
    sentence = comparison_sentence(numbers, THREAT)
    assert_complete(sentence)
    assert sentence.endswith(COMPARISON_VERDICTS[branch] + ".")
    # Both rates with n and interval, and the threat model they hold under.
    assert f"{machine[0]} of {machine[1]}" in sentence and f"{human[0]} of {human[1]}" in sentence
    assert "N = 5 persons" in sentence and "35.0 %" in sentence


def test_the_headline_without_human_data_is_no_sentence_rather_than_half_of_one():
    assert comparison_sentence({}, THREAT) is None
    assert comparison_sentence({"human": {"pct": None}}, THREAT) is None


@pytest.mark.parametrize(
    ("branch", "machine"),
    [("above", (18, 20)), ("within", (7, 20)), ("below", (2, 20))],
)
def test_every_chance_branch_renders_a_complete_sentence(branch, machine):
    numbers = headline((5, 20), machine)
    assert chance_branch(numbers["machine"][STRONGEST], 35.0) == branch
    sentence = chance_sentence(numbers, THREAT)
    assert_complete(sentence)
    assert CHANCE_VERDICTS[branch] in sentence and "35.0 %, permutation null" in sentence


def test_a_machine_rate_below_its_chance_level_gets_a_remark():
    # The finding: 25 % against a chance of 56.8 % was printed without a word.
    threat = {"machine": {**THREAT["machine"], "strongest_null_pct": 56.8}}
    sentence = chance_sentence(headline((5, 20), (2, 20)), threat)
    assert "below what its any-attack rule scores by chance" in sentence
    assert "56.8 %" in sentence
    assert chance_sentence(headline((5, 20), (2, 20)), {"machine": {}}) is None


def rates_target(rows: list[tuple[str, float, int]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["target_name", f"trir_{STRONGEST}", "n_texts"])
    return frame


def test_persons_most_at_risk_leave_out_persons_at_zero_and_carry_intervals():
    table = rates_target([("Ann", 100.0, 3), ("Bo", 0.0, 3), ("Cy", 50.0, 4), ("Di", 0.0, 2)])
    sentence = most_at_risk_sentence(table, "Textwash")
    assert_complete(sentence)
    assert "Bo" not in sentence and "Di" not in sentence
    assert not re.search(r"\b0\.0 %", sentence)
    assert "Ann: 100.0 % (95 % CI 43.9 to 100.0, 3 of 3); Cy: 50.0 %" in sentence
    assert "Cy: 50.0 % (95 % CI 15.0 to 85.0, 2 of 4)." in sentence


def test_nobody_at_risk_is_said_in_words():
    sentence = most_at_risk_sentence(rates_target([("Bo", 0.0, 3), ("Di", 0.0, 2)]), "Textwash")
    assert_complete(sentence)
    assert sentence.startswith("No person's texts of Textwash") and "0 of 5 texts" in sentence
    assert most_at_risk_sentence(pd.DataFrame(), "Textwash") is None


def test_every_correlation_branch_renders_complete_and_prints_small_p_as_below():
    short = spearman_with_ci([1, 2, 3], [1, 3, 2])
    assert short.rho is None
    sentence = correlation_sentence(short)
    assert_complete(sentence)
    assert "needs 5 persons, has 3" in sentence
    same = spearman_with_ci([0, 0, 0, 0, 0], [1, 2, 3, 4, 5])
    assert_complete(correlation_sentence(same))
    strong = spearman_with_ci(list(range(30)), list(range(30)))
    sentence = correlation_sentence(strong)
    assert_complete(sentence)
    assert "p < 0.001" in sentence and "p = 0.000" not in sentence
    assert "n = 30 persons" in sentence and "95 % CI" in sentence
    assert correlation_sentence(None) is None


def agreement_rows(**values) -> pd.DataFrame:
    row = {
        "attack": STRONGEST,
        "n": 12,
        "persons": 4,
        "kappa": None,
        "mcnemar_p": None,
        "auc": None,
        "machine_only": 3,
        "human_only": 1,
        "note": "",
        **values,
    }
    return pd.DataFrame([row])


def test_every_agreement_branch_renders_complete():
    needs = agreement_sentence(
        agreement_rows(note="not enough data: kappa, McNemar and AUC need 10 texts")
    )
    assert_complete(needs)
    assert needs.startswith("Per text: not enough data")
    full = agreement_sentence(agreement_rows(kappa=0.41, mcnemar_p=0.00001, auc=0.73))
    assert_complete(full)
    assert "McNemar p < 0.001" in full and "p = 0.000" not in full
    bounded = agreement_sentence(
        agreement_rows(
            kappa=0.41,
            kappa_ci_low=0.1,
            kappa_ci_high=0.7,
            mcnemar_p=0.02,
            auc=0.73,
            auc_ci_low=0.6,
            auc_ci_high=0.85,
        )
    )
    assert_complete(bounded)
    assert "kappa = 0.41 (95 % CI 0.10 to 0.70, person-clustered bootstrap)" in bounded
    assert "= 0.73 (95 % CI 0.60 to 0.85, person-clustered bootstrap)" in bounded
    part = agreement_sentence(
        agreement_rows(kappa=None, mcnemar_p=0.25, auc=0.6, note="kappa: not enough data")
    )
    assert_complete(part)
    assert "McNemar p = 0.250" in part and "Not shown: kappa: not enough data." in part
    assert agreement_sentence(None) is None and agreement_sentence(pd.DataFrame()) is None


def by_method(rates: dict[str, tuple[int, int]]) -> pd.DataFrame:
    rows = []
    for method, (k, n) in rates.items():
        rate = wilson(k, n)
        rows.append(
            {
                "method": method,
                "label": method.title(),
                "n_texts": n,
                "pct_words_masked": 20.0,
                f"trir_{STRONGEST}": rate.pct,
                f"{STRONGEST}_ci_low": rate.ci_low,
                f"{STRONGEST}_ci_high": rate.ci_high,
            }
        )
    return pd.DataFrame(rows)


def test_every_methods_branch_renders_complete():
    apart = methods_sentence(by_method({"textwash-model": (2, 40), "spacy-ner": (30, 40)}))
    # spacy-ner is a baseline: with one stored method, no comparison clause.
    assert_complete(apart)
    stored = methods_sentence(by_method({"a-method": (2, 40), "b-method": (30, 40)}))
    assert_complete(stored)
    assert "A-Method leaves the least machine risk (95 % intervals apart)." in stored
    overlap = methods_sentence(by_method({"a-method": (10, 40), "b-method": (12, 40)}))
    assert_complete(overlap)
    assert overlap.endswith("The 95 % intervals of the study's methods overlap.")
    assert "(95 % CI" in overlap  # every TRIR with its interval
    assert methods_sentence(by_method({"a-method": (1, 4)})) is None


def test_p_values_below_a_thousandth_print_as_below():
    assert p_text(0.0000004) == "p < 0.001"
    assert p_text(0.0004999) == "p < 0.001"
    assert p_text(0.001) == "p = 0.001"
    assert p_text(0.4871) == "p = 0.487"
    assert p_text(None) == "p: not enough data"


def test_a_cell_below_its_minimum_sample_says_what_it_needs_never_none():
    short = spearman_with_ci([1, 2, 3], [1, 3, 2])
    frame = pd.DataFrame(
        [
            {
                "rule": "majority",
                "chosen": True,
                "n_texts": 6,
                "kappa": None,
                "kappa_note": "not enough data: kappa needs 10 texts (n = 6)",
                "persons": short.n,
                "rho": short.rho,
                "rho_ci_low": short.ci_low,
                "rho_ci_high": short.ci_high,
                "rho_p": short.p,
                "rho_note": short.note,
            },
            {
                "rule": "any",
                "chosen": False,
                "n_texts": 40,
                "kappa": 0.5,
                "kappa_note": "",
                "persons": 30,
                "rho": 0.9,
                "rho_ci_low": 0.8,
                "rho_ci_high": 0.95,
                "rho_p": 1e-9,
                "rho_note": "",
            },
        ]
    )
    shown = display_frame(frame).set_index("rule")
    assert shown.loc["majority", "rho [95 % CI]"] == "not enough data: needs 5 persons, has 3"
    assert shown.loc["majority", "rho_p"] == "not enough data: needs 5 persons, has 3"
    assert shown.loc["majority", "kappa"].startswith("not enough data: kappa needs 10")
    assert shown.loc["any", "rho [95 % CI]"] == "0.90 [0.80, 0.95]"
    assert shown.loc["any", "rho_p"] == "< 0.001"
    html = html_table(frame)
    assert "None" not in html and "nan" not in html.lower().split()
    assert "needs 5 persons, has 3" in html


def test_a_correlation_reads_as_one_text_everywhere():
    correlation = Correlation(n=12, rho=0.2126, p=0.487, ci_low=-0.4, ci_high=0.69)
    assert correlation.text() == (
        "rho = 0.21 (95 % CI -0.40 to 0.69, p = 0.487, Fisher z, n = 12 persons)"
    )


def test_the_prediction_carries_its_validation_wherever_it_is_shown():
    from intruder.risk.predicted import load_calibration, validation_text
    from intruder.risk.report.summary import table_notes
    from intruder.risk.report.tables import RiskReport

    calibration = load_calibration(candidates=20)
    text = validation_text(calibration)
    assert_complete(text)
    # What it was fitted on, N, the out-of-sample rho with its interval, the MAE and the
    # baseline it beats (predicting the mean).
    assert "fitted on Textwash study 2" in text and "N = 20 candidates" in text
    assert "leave-one-person-out on its 20 persons: Spearman rho = 0.49, 95 % CI" in text
    assert "mean absolute error 11.4 percentage points against 12.8" in text
    assert "(the baseline it beats)" in text
    report = RiskReport(settings={"identified_rule_text": "x", "predicted_human": text})
    report.tables = {"predicted_group": pd.DataFrame([{"group": "famous"}])}
    for simulated in (False, True):
        note = table_notes(report, simulated=simulated)["predicted_group"]
        assert text in note and "not a measurement" in note
        assert ("SIMULATED" in note) is simulated


def test_one_person_is_one_person_in_every_sentence():
    """Issue 46: "1 persons"."""
    from intruder.risk.report.summary import comparison_sentence
    from intruder.risk.stats import counted

    assert (counted(1, "person"), counted(2, "person"), counted(0, "text")) == (
        "1 person",
        "2 persons",
        "0 texts",
    )
    rate = {"k": 1, "n": 2, "pct": 50.0, "ci_low": 9.5, "ci_high": 90.5}
    headline = {"n_texts": 2, "persons": 1, "human": rate, "machine": {"strongest": rate}}
    sentence = comparison_sentence(headline, {"machine": {"candidates": 4}, "human": {}})
    assert "(1 person)" in sentence and "persons)" not in sentence.split(":")[0]


def test_tables_show_counts_and_ranks_whole_and_zero_as_a_rate():
    """Issue 46: "0" beside "0.0", ranks "1.0"."""
    import pandas as pd

    from intruder.risk.rendering import display_frame, html_table

    frame = pd.DataFrame(
        {
            "tfidf_true_rank": [1.0, 3.0],
            "n_texts": [4.0, 2.0],
            "trir_tfidf": [0.0, 12.5],
            "tfidf_ci_low": [0.0, 2.2],
            "tfidf_ci_high": [49.0, 47.1],
            "kappa": [0.0, 0.25],
        }
    )
    shown = display_frame(frame)
    assert list(shown["tfidf_true_rank"]) == ["1", "3"] and list(shown["n_texts"]) == ["4", "2"]
    assert list(shown["trir_tfidf [95 % CI]"]) == ["0.0 [0.0, 49.0]", "12.5 [2.2, 47.1]"]
    assert shown["kappa"].iloc[0] == "0.0"
    html = html_table(frame)
    assert "tfidf true rank" in html and "tfidf_true_rank" not in html


def test_the_pdf_text_pages_never_split_a_short_section():
    """Issue 46: the provenance block split across two pages."""
    from intruder.risk.rendering import PDF_LINES_PER_PAGE, _chunks

    body = [f"line {i}" for i in range(PDF_LINES_PER_PAGE - 5)]
    provenance = ["", "PROVENANCE", *(f"item {i}" for i in range(12))]
    pages = _chunks([*body, *provenance])
    assert len(pages) == 2
    assert pages[1][0] == "PROVENANCE" and len(pages[1]) == 13
    assert all(len(page) <= PDF_LINES_PER_PAGE for page in pages)
    # A section longer than a page still flows over pages, none over-full.
    long = _chunks(["TITLE", *(f"x{i}" for i in range(3 * PDF_LINES_PER_PAGE))])
    assert [len(p) for p in long] == [PDF_LINES_PER_PAGE] * 3 + [1]


@pytest.mark.parametrize(
    ("rule", "effect"),
    [
        ("best_match", "none counted as identified"),
        ("paper", "counted as identified where the cosine to the true person reaches"),
    ],
)
def test_the_headline_says_how_many_judgments_named_another_person(rule, effect):
    """Issue 46: beside the human rate, every branch of the clause rendered and ended."""
    from intruder.risk.report.summary import comparison_sentence, named_other_clause

    rate = {"k": 1, "n": 2, "pct": 50.0, "ci_low": 9.5, "ci_high": 90.5}
    headline = {
        "n_texts": 2,
        "persons": 2,
        "human": rate,
        "machine": {"strongest": rate},
        "named_other": {"k": 4, "judgments": 6},
    }
    threat = {"machine": {"candidates": 2}, "human": {"identification_rule": rule}}
    sentence = comparison_sentence(headline, threat)
    assert f"(4 of 6 judgments named another person of the study: {effect}" in sentence
    assert sentence.endswith(".")
    # No such judgment, or no per-judgment data (published rates): nothing is said.
    assert named_other_clause({**headline, "named_other": {"k": 0, "judgments": 6}}, threat) == ""
    assert named_other_clause({k: v for k, v in headline.items() if k != "named_other"}, {}) == ""
