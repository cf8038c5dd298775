"""Statistics that compare human and machine re-identification (library calls, not hand math).

- Spearman's rho between per-person human and machine rates (scipy.stats.spearmanr), with a
  percentile bootstrap CI over persons (scipy.stats.bootstrap, paired resampling, seeded).
  Resamples in which one side is constant have no rho; they are left out of the percentiles
  (`nanpercentile`), and how many were left out is reported.
- Cohen's kappa between "a majority of intruders identified the text" and "the machine
  ranked the true person first" (sklearn.metrics.cohen_kappa_score).
- McNemar's test on the same paired outcomes (statsmodels, exact binomial test when the
  discordant pairs are fewer than 25, the chi-square with continuity correction otherwise).
- ROC/AUC of the machine's probability of the true person as a predictor of human
  identification (sklearn.metrics.roc_auc_score / roc_curve).

Every function returns None-valued fields with a `note` where the statistic is undefined
(too few persons, one class only), never a made-up number.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

BOOTSTRAP_RESAMPLES = 5000
CONFIDENCE = 0.95
# Below this many discordant pairs McNemar's chi-square approximation is poor.
MCNEMAR_EXACT_BELOW = 25


@dataclass
class Correlation:
    """Spearman's rho of paired rates with its bootstrap CI."""

    n: int
    rho: float | None
    p_value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    resamples: int = 0
    resamples_undefined: int = 0
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Agreement:
    """Paired binary outcomes of humans and a machine attack on the same texts."""

    n: int
    both: int = 0
    human_only: int = 0
    machine_only: int = 0
    neither: int = 0
    kappa: float | None = None
    mcnemar_statistic: float | None = None
    mcnemar_p: float | None = None
    mcnemar_exact: bool | None = None
    auc: float | None = None
    roc: dict[str, list[float]] = field(default_factory=dict)
    note: str = ""

    def to_dict(self, with_roc: bool = False) -> dict[str, Any]:
        values = asdict(self)
        if not with_roc:
            values.pop("roc")
        return values


def _finite(value: float) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


def spearman_with_ci(
    human: Sequence[float],
    machine: Sequence[float],
    *,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> Correlation:
    """Return Spearman's rho of the paired values and a percentile bootstrap CI over pairs."""
    from scipy import stats

    x = np.asarray(human, dtype=float)
    y = np.asarray(machine, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = len(x)
    if n < 3:
        return Correlation(n=n, rho=None, p_value=None, note="needs at least 3 persons")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return Correlation(n=n, rho=None, p_value=None, note="one side has the same rate for all")
    result = stats.spearmanr(x, y)

    def rho(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        # Vectorised over resamples: rank each row, then Pearson of the ranks.
        ra = stats.rankdata(a, axis=axis)
        rb = stats.rankdata(b, axis=axis)
        ra = ra - ra.mean(axis=axis, keepdims=True)
        rb = rb - rb.mean(axis=axis, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (ra * rb).sum(axis=axis) / np.sqrt(
                (ra**2).sum(axis=axis) * (rb**2).sum(axis=axis)
            )

    with warnings.catch_warnings():
        # Constant resamples give NaN; they are counted and left out below.
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        boot = stats.bootstrap(
            (x, y),
            rho,
            paired=True,
            vectorized=True,
            n_resamples=resamples,
            method="percentile",
            confidence_level=confidence,
            rng=np.random.default_rng(seed),
        )
    distribution = boot.bootstrap_distribution
    undefined = int(np.isnan(distribution).sum())
    alpha = (1 - confidence) / 2
    low, high = np.nanpercentile(distribution, [100 * alpha, 100 * (1 - alpha)])
    return Correlation(
        n=n,
        rho=_finite(result.statistic),
        p_value=_finite(result.pvalue),
        ci_low=_finite(low),
        ci_high=_finite(high),
        resamples=resamples,
        resamples_undefined=undefined,
    )


def agreement(
    human: Sequence[bool],
    machine: Sequence[bool],
    machine_prob: Sequence[float | None] | None = None,
) -> Agreement:
    """Return kappa, McNemar and (with probabilities) ROC/AUC of paired per-text outcomes."""
    from sklearn.metrics import cohen_kappa_score, roc_auc_score, roc_curve
    from statsmodels.stats.contingency_tables import mcnemar

    h = np.asarray(human, dtype=bool)
    m = np.asarray(machine, dtype=bool)
    result = Agreement(n=len(h))
    if not len(h):
        result.note = "no texts with both human and machine results"
        return result
    result.both = int((h & m).sum())
    result.human_only = int((h & ~m).sum())
    result.machine_only = int((~h & m).sum())
    result.neither = int((~h & ~m).sum())
    notes = []
    if len(set(h)) == 1 and len(set(m)) == 1:
        notes.append("kappa undefined: both sides give one outcome only")
    else:
        result.kappa = _finite(cohen_kappa_score(h, m))
    discordant = result.human_only + result.machine_only
    if discordant == 0:
        notes.append("McNemar undefined: no discordant texts")
    else:
        exact = discordant < MCNEMAR_EXACT_BELOW
        test = mcnemar(
            [[result.both, result.human_only], [result.machine_only, result.neither]],
            exact=exact,
            correction=True,
        )
        result.mcnemar_statistic = _finite(test.statistic)
        result.mcnemar_p = _finite(test.pvalue)
        result.mcnemar_exact = exact
    if machine_prob is not None:
        prob = np.asarray([np.nan if p is None else p for p in machine_prob], dtype=float)
        # The true person's probability is 0 where the person has no background.
        prob = np.nan_to_num(prob, nan=0.0)
        if len(set(h)) < 2:
            notes.append("AUC undefined: humans identified all or none of the texts")
        else:
            result.auc = _finite(roc_auc_score(h, prob))
            fpr, tpr, _ = roc_curve(h, prob)
            result.roc = {"fpr": fpr.tolist(), "tpr": tpr.tolist()}
    result.note = "; ".join(notes)
    return result


def percent_se(outcomes: Sequence[bool] | np.ndarray) -> float | None:
    """Return the SE of a percentage of 0/1 outcomes, as the identification rates compute it."""
    import pandas as pd

    from intruder.analysis.rates import percent_se as rates_percent_se

    value = rates_percent_se(pd.Series(np.asarray(outcomes, dtype=float)))
    return _finite(value)
