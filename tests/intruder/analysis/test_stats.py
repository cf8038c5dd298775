"""Anonymisability variables, Cohen's d and Bayes factors against the library definitions."""

import math

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
import wordfreq

from intruder.analysis.anonymisability import (
    UNKNOWN_WORD_FREQUENCY,
    cohens_d_with_ci,
    compare_identified,
    frequency_ranks,
    text_features,
    unigram_perplexity,
)
from intruder.analysis.construct_loss import bf01_of, paired_bayes_factor
from intruder.analysis.text import placeholder_spans, strip_placeholders
from tests.intruder.analysis_fixtures import THRESHOLD, fixture_judgments, fixture_texts


def test_proportion_anonymized_removes_placeholders_before_counting():
    texts = pd.DataFrame(
        {
            "text_id": [1],
            "original": ["Sam Smith sings in London."],
            "anonymized": ["PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 sings in LOCATION_1."],
        }
    )
    row = text_features(texts).iloc[0]
    # 5 words originally, 2 left ("sings in"): 100 * (1 - 2/5) = 60 %
    assert (row["ntok_original"], row["ntok_anonymized"]) == (5, 2)
    assert row["prop_anonymized"] == pytest.approx(60.0)


def test_frequency_rank_is_the_mean_wordfreq_rank_of_ranked_words():
    texts = pd.DataFrame({"text_id": [1], "original": ["the singer zxqvw"], "anonymized": [""]})
    row = text_features(texts).iloc[0]
    ranks = frequency_ranks()
    assert ranks["the"] == 1  # rank 1 = most frequent English word
    assert row["freq_rank_original"] == pytest.approx((ranks["the"] + ranks["singer"]) / 2)
    assert row["freq_rank_coverage_original"] == pytest.approx(2 / 3)
    assert math.isnan(row["freq_rank_anonymized"])  # nothing left to rank


def test_unigram_perplexity_is_inverse_geometric_mean_word_probability():
    p_the = wordfreq.word_frequency("the", "en")
    p_unknown = UNKNOWN_WORD_FREQUENCY
    assert unigram_perplexity(["the", "zxqvw"]) == pytest.approx(1 / math.sqrt(p_the * p_unknown))
    assert math.isnan(unigram_perplexity([]))


@pytest.mark.parametrize(
    ("text", "categories"),
    [
        ("PERSON_FIRSTNAME_1 met PRONOUN", ["PERSON_FIRSTNAME", "PRONOUN"]),
        ("born NUMERIC_5st in [LOCATION]", ["NUMERIC", "LOCATION"]),
        ("MR/MS *** at ORGANIZATION DATE_10", ["MR/MS", "REDACTED", "ORGANIZATION", "DATE"]),
        ("[firstname1] is a [occupation1]", ["PERSON_FIRSTNAME", "OCCUPATION"]),
        ("PERSONAL DATES and UK", []),
    ],
)
def test_placeholders_of_every_operator_are_found(text, categories):
    assert [c for _, _, c in placeholder_spans(text)] == categories


def test_known_placeholder_strings_from_spans_are_removed_too():
    assert strip_placeholders("Hello <<X>> there", ["<<X>>"]).split() == ["Hello", "there"]


def test_cohens_d_and_ci_follow_pingouin():
    not_identified = [22.0, 25.0, 30.0, 18.0, 27.0]
    identified = [20.0, 21.0, 19.0, 24.0]
    d, low, high = cohens_d_with_ci(not_identified, identified)
    expected = pg.compute_effsize(not_identified, identified, eftype="cohen")
    assert d == pytest.approx(expected)
    assert d > 0  # not-identified texts higher -> positive, the paper's sign
    ci = pg.compute_esci(stat=expected, nx=5, ny=4, eftype="cohen", decimals=12)
    assert (low, high) == pytest.approx(tuple(ci))
    # Hand check of the pooled-SD definition: (M0 - M1) / sqrt(((n0-1)s0^2 + (n1-1)s1^2)/(n0+n1-2))
    s0, s1 = np.var(not_identified, ddof=1), np.var(identified, ddof=1)
    pooled = math.sqrt((4 * s0 + 3 * s1) / 7)
    assert d == pytest.approx((np.mean(not_identified) - np.mean(identified)) / pooled)


def test_table9_compares_texts_by_identified_status():
    texts = fixture_texts()
    features = pd.DataFrame(
        {
            "text_id": [1, 2, 3, 4, 5, 6],
            # identified: t1, t3, t6; not: t2, t4; t5 unjudged (left out)
            "prop_anonymized": [10.0, 30.0, 12.0, 34.0, 99.0, 14.0],
        }
    )
    for column in (
        "freq_rank_original",
        "freq_rank_anonymized",
        "unigram_perplexity_original",
        "unigram_perplexity_anonymized",
    ):
        features[column] = np.nan
    table = compare_identified(fixture_judgments(), texts, THRESHOLD, features)
    row = table.set_index("variable").loc["prop_anonymized"]
    assert (row["n_0"], row["n_1"]) == (2, 3)
    assert row["m_0"] == pytest.approx(32.0) and row["m_1"] == pytest.approx(12.0)
    assert row["sd_0"] == pytest.approx(np.std([30.0, 34.0], ddof=1))
    assert row["d"] == pytest.approx(
        pg.compute_effsize([30.0, 34.0], [10.0, 12.0, 14.0], eftype="cohen")
    )
    empty = table.set_index("variable").loc["freq_rank_original"]
    assert math.isnan(empty["d"]) and "needs >= 2 texts" in empty["note"]


def test_paired_bayes_factor_follows_pingouin():
    original = np.array([12.0, 15.0, 9.0, 14.0, 11.0, 13.0])
    anonymized = np.array([10.0, 15.0, 7.0, 11.0, 11.0, 10.0])
    t, bf10, note = paired_bayes_factor(original, anonymized)
    assert note == ""
    assert bf10 == pytest.approx(pg.bayesfactor_ttest(t, 6, paired=True))
    # pg.ttest reports BF10 as a rounded string ("3.0"), hence the looser tolerance.
    reported = float(pg.ttest(original, anonymized, paired=True)["BF10"].iloc[0])
    assert bf10 == pytest.approx(reported, rel=0.01)


def test_identical_frequencies_are_reported_not_tested():
    same = np.array([3.0, 4.0, 5.0])
    t, bf10, note = paired_bayes_factor(same, same)
    assert math.isnan(t) and math.isnan(bf10)
    assert note == "identical in every text: no test"


def test_constant_variable_gets_a_note_instead_of_a_silent_nan():
    features = pd.DataFrame({"text_id": [1, 2, 3, 4, 5, 6]})
    for column in (
        "prop_anonymized",
        "freq_rank_original",
        "freq_rank_anonymized",
        "unigram_perplexity_original",
        "unigram_perplexity_anonymized",
    ):
        features[column] = 20.0
    table = compare_identified(fixture_judgments(), fixture_texts(), THRESHOLD, features)
    assert table["d"].isna().all()
    assert set(table["note"]) == {"no variance within either outcome: d undefined"}


def test_bf01_is_the_inverse_of_bf10_and_undefined_stays_undefined():
    assert bf01_of(4.0) == 0.25
    assert bf01_of(float("inf")) == 0.0  # the paper's "Inf" row for PRON: BF01 = 0.00
    assert math.isnan(bf01_of(float("nan")))
