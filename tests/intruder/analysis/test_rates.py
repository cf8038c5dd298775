"""Per-text and per-person/group identification rates on a hand-computed fixture."""

import math

import pandas as pd
import pytest

from intruder.analysis.frames import AnalysisInputError, data_warnings, empty_judgments
from intruder.analysis.layouts import rates_layout
from intruder.analysis.per_text import per_text
from intruder.analysis.rates import identification_rates, percent_se
from tests.intruder.analysis_fixtures import THRESHOLD, fixture_judgments, fixture_texts


@pytest.fixture
def judgments():
    return fixture_judgments()


@pytest.fixture
def texts():
    return fixture_texts()


def test_per_text_averages_judgments_and_marks_identified_inclusively(judgments, texts):
    table = per_text(judgments, texts, THRESHOLD).set_index("text_id")
    assert table.loc[1, "mean_cosine"] == pytest.approx(0.75)
    assert bool(table.loc[1, "identified"])  # 0.75 >= 0.75
    # sd of [1.0, 0.5] = sqrt(2 * 0.25^2 / 1) = 0.353553
    assert table.loc[1, "sd_cosine"] == pytest.approx(math.sqrt(0.125))
    assert table.loc[1, "pct_judgments_identified"] == pytest.approx(50.0)
    assert table.loc[2, "mean_cosine"] == pytest.approx(0.2)
    assert not bool(table.loc[2, "identified"])
    assert table.loc[2, "n_self_identified"] == 1


def test_text_with_one_judgment_gets_empty_sd_and_a_note(judgments, texts):
    row = per_text(judgments, texts, THRESHOLD).set_index("text_id").loc[3]
    assert row["n_judgments"] == 1
    assert pd.isna(row["sd_cosine"])
    assert row["note"] == "1 judgment: SD undefined"


def test_unjudged_text_is_kept_with_no_score_and_a_note(judgments, texts):
    row = per_text(judgments, texts, THRESHOLD).set_index("text_id").loc[5]
    assert row["n_judgments"] == 0
    assert pd.isna(row["mean_cosine"]) and pd.isna(row["identified"])
    assert row["note"] == "no judgments"


def test_per_target_rates_match_hand_computation(judgments, texts):
    table = identification_rates(judgments, texts, THRESHOLD, by="target").set_index("target_key")
    ann = table.loc["ann"]
    # Per-text means 0.75, 0.2, 0.9: M = 1.85 / 3; SS = 0.01778 + 0.17361 + 0.08028 = 0.27167
    assert ann["n"] == 3
    assert ann["mean_cosine"] == pytest.approx(1.85 / 3)
    assert ann["sd_cosine"] == pytest.approx(math.sqrt(0.2716667 / 2), abs=1e-6)
    # 2 of 3 identified; SE = 100 * sqrt(p(1-p)/(n-1)) = 100 * sqrt((2/9) / 2) = 33.33
    assert ann["pct_identified"] == pytest.approx(200 / 3)
    assert ann["se_pct_identified"] == pytest.approx(100 / 3)
    bo = table.loc["bo"]
    # Texts t4 (0.2) and t6 (0.8); t5 unjudged. SD = sqrt(2 * 0.3^2) = sqrt(0.18); SE = 50
    assert (bo["n"], bo["n_texts_unjudged"], bo["n_judgments"]) == (2, 1, 4)
    assert bo["mean_cosine"] == pytest.approx(0.5)
    assert bo["sd_cosine"] == pytest.approx(math.sqrt(0.18))
    assert bo["pct_identified"] == pytest.approx(50.0)
    assert bo["se_pct_identified"] == pytest.approx(50.0)


def test_overall_rate_matches_hand_computation(judgments, texts):
    row = identification_rates(judgments, texts, THRESHOLD, by="overall").iloc[0]
    # Means 0.75, 0.2, 0.9, 0.2, 0.8 -> M 0.57, SS 0.468, SD sqrt(0.117); 3 of 5 identified
    assert row["mean_cosine"] == pytest.approx(0.57)
    assert row["sd_cosine"] == pytest.approx(math.sqrt(0.117))
    assert row["pct_identified"] == pytest.approx(60.0)
    assert row["se_pct_identified"] == pytest.approx(100 * math.sqrt(0.24 / 4))
    assert row["n_texts_unjudged"] == 1


def test_group_rates_have_one_row_per_group(judgments, texts):
    table = identification_rates(judgments, texts, THRESHOLD, by="group")
    assert table["group"].tolist() == ["famous", "fictitious"]
    assert table["pct_identified"].tolist() == pytest.approx([200 / 3, 50.0])


def test_judgment_unit_counts_every_judgment(judgments, texts):
    ann = identification_rates(judgments, texts, THRESHOLD, by="target", unit="judgment")
    ann = ann.set_index("target_key").loc["ann"]
    # Judgments 1.0 .5 .2 .4 0 .9: 2 of 6 at >= 0.75; SE = 100 * sqrt((1/3)(2/3)/5)
    assert ann["n"] == 6
    assert ann["pct_identified"] == pytest.approx(100 / 3)
    assert ann["se_pct_identified"] == pytest.approx(100 * math.sqrt(2 / 45))


def test_analyses_rescore_at_the_threshold_they_are_given(judgments, texts):
    # Stored `identified` used 0.5; at 0.95 only no text passes.
    row = identification_rates(judgments, texts, 0.95, by="overall").iloc[0]
    assert row["n_identified"] == 0


@pytest.mark.parametrize(
    ("identified", "total", "published_se"),
    [
        (2, 43, 3.25),  # Table 4, Benedict Cumberbatch: 4.65 %
        (13, 40, 7.50),  # Table 4, Sam Smith: 32.50 %
        (23, 59, 6.40),  # Table 7, Adele: 38.98 %
        (285, 1080, 1.34),  # section 4.2.1, study 2 overall: 26.39 %
    ],
)
def test_percent_se_reproduces_the_papers_published_se(identified, total, published_se):
    indicator = pd.Series([True] * identified + [False] * (total - identified))
    assert round(percent_se(indicator), 2) == published_se


def test_single_observation_has_undefined_se_and_a_note(texts):
    judgments = fixture_judgments()
    only_t3 = judgments[judgments["text_id"] == 3]
    table = identification_rates(only_t3, texts, THRESHOLD, by="target").set_index("target_key")
    assert math.isnan(table.loc["ann", "se_pct_identified"])
    assert table.loc["ann", "note"] == "one text: SD and SE undefined"
    # Bo has texts but none judged: a row that says so, not a silent gap.
    assert table.loc["bo", "n"] == 0 and table.loc["bo", "note"] == "no judged texts"


def test_paper_layout_has_the_papers_columns(judgments, texts):
    table = rates_layout(identification_rates(judgments, texts, THRESHOLD), "target_name")
    assert list(table.columns) == ["Name", "M", "SD", "% identified", "SE % identified"]
    assert table.iloc[0].tolist() == ["Ann Lee", 0.62, 0.37, 66.67, 33.33]


def test_data_warnings_name_single_and_missing_judgments(judgments, texts):
    warnings = data_warnings(judgments, texts)
    assert any("1 of 6 text(s) have no judgment" in w for w in warnings)
    assert any("1 text(s) have one judgment only" in w for w in warnings)


def test_study_without_judgments_is_reported_not_crashed(texts):
    warnings = data_warnings(empty_judgments(), texts)
    assert warnings and "no judgments yet" in warnings[0]


def test_judgment_of_unknown_text_is_refused(judgments, texts):
    with pytest.raises(AnalysisInputError, match="not in the texts frame"):
        per_text(judgments, texts[texts["text_id"] != 1], THRESHOLD)


def test_unscored_judgment_is_refused(judgments, texts):
    judgments.loc[0, "cosine"] = None
    with pytest.raises(AnalysisInputError, match="without a cosine"):
        per_text(judgments, texts, THRESHOLD)


@pytest.mark.parametrize("by", ["overall", "group", "target"])
def test_rates_with_every_judgment_left_out_say_no_judged_texts(texts, by):
    # E.g. every answer flagged and excluded by the study's rules: rows with n = 0, no crash.
    table = identification_rates(empty_judgments(), texts, THRESHOLD, by=by)
    assert (table["n"] == 0).all() and table["pct_identified"].isna().all()
    assert table["n_texts_unjudged"].sum() == len(texts)
