"""The human-vs-machine statistics against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import rankdata

from intruder.risk.stats import (
    MIN_PERSONS_AGREEMENT,
    MIN_PERSONS_RHO,
    MIN_TEXTS,
    agreement,
    spearman_with_ci,
    wilson,
)


def test_spearman_rho_matches_the_rank_formula_and_fisher_z_by_hand():
    # Ranks x: 1 2 3 4 5, y: 2 1 4 3 5 -> d^2 = 1+1+1+1+0 = 4; rho = 1 - 6*4/(5*24) = 0.8
    result = spearman_with_ci([10, 20, 30, 40, 50], [0.2, 0.1, 0.5, 0.4, 0.9])
    assert result.rho == pytest.approx(0.8)
    assert result.n == 5
    # z = atanh(0.8) = 1.0986; SE = sqrt(1.06 / 2) = 0.7280; z / SE = 1.5091
    z, se = math.atanh(0.8), math.sqrt(1.06 / 2)
    assert result.p == pytest.approx(math.erfc(z / se / math.sqrt(2)))  # 2 * P(Z > z/SE)
    assert result.p == pytest.approx(0.1313, abs=1e-4)
    assert result.ci_low == pytest.approx(math.tanh(z - 1.959964 * se), abs=1e-5)
    assert result.ci_high == pytest.approx(math.tanh(z + 1.959964 * se), abs=1e-5)
    assert result.ci_low == pytest.approx(-0.3170, abs=1e-3) and result.ci_high < 1


# The old percentile bootstrap excluded 0 (CI 0.29 to 0.90, 105 of 2000 resamples dropped as
# constant) while its p was 0.14: many tied zero rates, as in the demo.
DISAGREEING_HUMAN = [0, 0, 0, 100, 0, 33.3, 66.7, 0]
DISAGREEING_MACHINE = [50, 100, 50, 100, 0, 100, 100, 100]


def test_the_fixture_where_the_old_ci_and_p_disagreed_now_agrees():
    result = spearman_with_ci(DISAGREEING_HUMAN, DISAGREEING_MACHINE)
    # By hand: average ranks x = 3 3 3 8 3 6 7 3, y = 2.5 6 2.5 6 1 6 6 6
    rx = rankdata(DISAGREEING_HUMAN)
    ry = rankdata(DISAGREEING_MACHINE)
    assert list(rx) == [3, 3, 3, 8, 3, 6, 7, 3]
    assert list(ry) == [2.5, 6, 2.5, 6, 1, 6, 6, 6]
    rho = np.corrcoef(rx, ry)[0, 1]
    assert result.rho == pytest.approx(rho) and rho == pytest.approx(0.5669, abs=1e-4)
    z, se = math.atanh(rho), math.sqrt(1.06 / 5)
    assert result.p == pytest.approx(math.erfc(z / se / math.sqrt(2)))
    assert result.p == pytest.approx(0.1626, abs=1e-3)
    # The interval now includes 0, as p > 0.05 says it must.
    assert result.ci_low == pytest.approx(math.tanh(z - 1.959964 * se), abs=1e-5)
    assert result.ci_low < 0 < result.ci_high


@pytest.mark.parametrize("seed", range(40))
def test_fisher_ci_excludes_zero_exactly_when_p_is_below_alpha(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, size=9) * 25.0
    y = x + rng.normal(0, 40, size=9)
    result = spearman_with_ci(x, y)
    if result.rho is None:
        return
    assert (result.p < 0.05) == (result.ci_low > 0 or result.ci_high < 0)


def test_spearman_says_not_enough_data_below_its_minimum():
    few = spearman_with_ci([1, 2, 3, 4], [3, 4, 1, 2])
    assert few.rho is None and few.p is None and few.ci_low is None
    assert few.note == f"not enough data: needs {MIN_PERSONS_RHO} persons, has 4"
    constant = spearman_with_ci([1, 2, 3, 4, 5], [0, 0, 0, 0, 0])
    assert constant.rho is None and "same rate" in constant.note and "not enough" in constant.note


def test_wilson_interval_matches_the_formula_by_hand():
    # 2 of 43 (Table 4): centre (p + z^2/2n) / (1 + z^2/n), half-width z/(1+z^2/n) sqrt(...)
    k, n, zc = 2, 43, 1.959964
    p = k / n
    centre = (p + zc**2 / (2 * n)) / (1 + zc**2 / n)
    half = zc / (1 + zc**2 / n) * math.sqrt(p * (1 - p) / n + zc**2 / (4 * n**2))
    rate = wilson(k, n)
    assert rate.pct == pytest.approx(100 * p)
    assert rate.ci_low == pytest.approx(100 * (centre - half), abs=1e-4)
    assert rate.ci_high == pytest.approx(100 * (centre + half), abs=1e-4)
    assert rate.ci_low == pytest.approx(1.28, abs=0.01) and rate.ci_high == pytest.approx(
        15.46, abs=0.01
    )
    # 0 of 5: the interval still has width; n = 0 has no rate at all.
    assert wilson(0, 5).ci_low == 0 and wilson(0, 5).ci_high == pytest.approx(43.45, abs=0.01)
    assert wilson(0, 0).pct is None and "n = 0" in wilson(0, 0).text()
    assert wilson(3, 10).text() == "30.0 % (95 % CI 10.8 to 60.3, 3 of 10)"


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
    # Below the minimum sample: nothing is printed, and the note gives n.
    result = agreement([True, False], [True, True], [0.5, 0.6])
    assert result.kappa is None and result.mcnemar_p is None and result.auc is None
    assert result.note.startswith("not enough data") and "n = 2 texts" in result.note
    assert agreement([], []).n == 0
    # Enough texts but of too few persons (texts of one person are not independent).
    human = [True, False] * 6
    few_persons = agreement(human, human[::-1], persons=["a", "b"] * 6)
    assert few_persons.kappa is None and f"{MIN_PERSONS_AGREEMENT} persons" in few_persons.note
    # Enough texts and persons, but one outcome only on one side.
    many = agreement([True] * MIN_TEXTS, [True] * (MIN_TEXTS - 1) + [False], [0.5] * MIN_TEXTS)
    assert many.kappa is None and many.auc is None
    assert "kappa: not enough data" in many.note and "AUC: not enough data" in many.note
    assert many.mcnemar_p == pytest.approx(1.0)  # one discordant text: exact test defined


def test_kappa_and_auc_have_a_person_clustered_bootstrap_interval():
    from intruder.risk.stats import agreement

    # 12 persons x 2 texts; humans and machine mostly agree, the probability tracks humans.
    human = [i % 3 == 0 for i in range(24)]
    machine = [h if i % 7 else not h for i, h in enumerate(human)]
    prob = [0.9 if h else 0.2 + 0.01 * i for i, h in enumerate(human)]
    persons = [f"p{i // 2}" for i in range(24)]
    result = agreement(human, machine, prob, persons=persons)
    assert result.kappa is not None and result.auc is not None
    assert result.kappa_ci_low <= result.kappa <= result.kappa_ci_high
    assert result.auc_ci_low <= result.auc <= result.auc_ci_high <= 1.0
    # Seeded: the same data give the same interval.
    again = agreement(human, machine, prob, persons=persons)
    assert (again.kappa_ci_low, again.auc_ci_high) == (result.kappa_ci_low, result.auc_ci_high)


def test_a_bootstrap_with_few_usable_resamples_prints_no_interval_and_says_why():
    from intruder.risk.stats import agreement

    # One person holds the only human "identified" texts: most resamples lack that outcome.
    human = [True, True] + [False] * 20
    machine = [True, False] + [False, True] * 10
    prob = [0.9, 0.8] + [0.1] * 20
    persons = ["a", "a"] + [f"p{i // 2}" for i in range(20)]
    result = agreement(human, machine, prob, persons=persons)
    assert result.kappa is not None and result.kappa_ci_low is None
    assert "kappa interval: not enough data" in result.note
    assert "person resamples have both outcomes" in result.note


def test_no_interval_note_for_a_statistic_that_is_not_there():
    from intruder.risk.stats import agreement

    # The machine identifies every text: no kappa, so no word on a kappa interval.
    human = [i % 3 == 0 for i in range(24)]
    prob = [0.9 if h else 0.2 for h in human]
    result = agreement(human, [True] * 24, prob, persons=[f"p{i // 2}" for i in range(24)])
    assert result.kappa is None and result.auc is not None
    assert "kappa interval" not in result.note and result.auc_ci_low is not None
