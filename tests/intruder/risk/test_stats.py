"""The human-vs-machine statistics against values computed by hand."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import rankdata

from intruder.analysis.risk_stats import agreement, percent_se, spearman_with_ci


def test_spearman_rho_matches_the_rank_formula():
    # Ranks x: 1 2 3 4 5, y: 2 1 4 3 5 -> d^2 = 1+1+1+1+0 = 4; rho = 1 - 6*4/(5*24) = 0.8
    result = spearman_with_ci([10, 20, 30, 40, 50], [0.2, 0.1, 0.5, 0.4, 0.9], seed=1)
    assert result.rho == pytest.approx(0.8)
    assert result.n == 5


def test_spearman_bootstrap_ci_matches_the_exact_bootstrap_distribution():
    x = [10, 20, 30, 40, 50]
    y = [0.2, 0.1, 0.5, 0.4, 0.9]
    # Every one of the 5^5 equally likely resamples, by hand.
    exact = []
    for picks in itertools.product(range(5), repeat=5):
        a = np.array([x[i] for i in picks], dtype=float)
        b = np.array([y[i] for i in picks], dtype=float)
        if np.ptp(a) == 0 or np.ptp(b) == 0:
            continue
        ra, rb = rankdata(a), rankdata(b)  # average ranks for ties, as Spearman's rho
        exact.append(np.corrcoef(ra, rb)[0, 1])
    low, high = np.percentile(exact, [2.5, 97.5])
    result = spearman_with_ci(x, y, seed=3, resamples=20000)
    assert result.ci_low == pytest.approx(low, abs=0.06)
    assert result.ci_high == pytest.approx(high, abs=0.06)
    assert result.resamples_undefined > 0  # constant resamples exist and are left out


def test_spearman_is_undefined_for_too_few_or_constant_rates():
    assert spearman_with_ci([1, 2], [3, 4]).rho is None
    constant = spearman_with_ci([1, 2, 3, 4], [0, 0, 0, 0])
    assert constant.rho is None and "same rate" in constant.note


def test_kappa_mcnemar_and_auc_match_hand_computation():
    # 10 texts: both 3, human only 1, machine only 4, neither 2.
    human = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    machine = [1, 1, 1, 0, 1, 1, 1, 1, 0, 0]
    prob = [0.9, 0.8, 0.7, 0.3, 0.6, 0.5, 0.4, 0.35, 0.1, 0.2]
    result = agreement([bool(v) for v in human], [bool(v) for v in machine], prob)
    assert (result.both, result.human_only, result.machine_only, result.neither) == (3, 1, 4, 2)
    # kappa: po = 5/10; pe = (4/10)(7/10) + (6/10)(3/10) = 0.46; (0.5-0.46)/(1-0.46)
    assert result.kappa == pytest.approx((0.5 - 0.46) / 0.54)
    # exact McNemar: 2 * P(X <= 1), X ~ Bin(5, 1/2) = 2 * 6/32 = 0.375
    assert result.mcnemar_exact is True
    assert result.mcnemar_p == pytest.approx(0.375)
    # AUC: share of (identified, not identified) pairs ordered right by prob.
    positives = [0.9, 0.8, 0.7, 0.3]
    negatives = [0.6, 0.5, 0.4, 0.35, 0.1, 0.2]
    wins = sum(p > n for p in positives for n in negatives)
    assert result.auc == pytest.approx(wins / 24)
    assert result.roc["fpr"][0] == 0 and result.roc["tpr"][-1] == 1


def test_mcnemar_uses_the_corrected_chi_square_for_many_discordant_pairs():
    human = [True] * 20 + [False] * 10 + [True] * 5
    machine = [False] * 20 + [True] * 10 + [True] * 5
    result = agreement(human, machine)
    # (|b - c| - 1)^2 / (b + c) = (10 - 1)^2 / 30 = 2.7
    assert result.mcnemar_exact is False
    assert result.mcnemar_statistic == pytest.approx(2.7)
    from scipy.stats import chi2

    assert result.mcnemar_p == pytest.approx(chi2.sf(2.7, 1))


def test_undefined_statistics_say_why():
    result = agreement([True, True], [True, True], [0.5, 0.6])
    assert result.kappa is None and result.mcnemar_p is None and result.auc is None
    assert "kappa" in result.note and "McNemar" in result.note and "AUC" in result.note
    assert agreement([], []).n == 0


def test_percent_se_matches_the_papers_formula():
    # Table 4: 2 of 43 texts -> 100 * sqrt(p (1 - p) / (n - 1)) = 3.25
    outcomes = [True] * 2 + [False] * 41
    p = 2 / 43
    assert percent_se(outcomes) == pytest.approx(100 * math.sqrt(p * (1 - p) / 42))
    assert percent_se([True]) is None
