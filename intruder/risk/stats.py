"""Statistics that compare human and machine re-identification (library calls, not hand math).

- Every rate comes with its n and a Wilson score interval
  (statsmodels.stats.proportion.proportion_confint, method "wilson").
- Spearman's rho between per-person human and machine rates (scipy.stats.spearmanr), with a
  p-value and a CI from the same Fisher z transform, so the two always agree (the CI excludes
  0 exactly when p < 0.05): z = atanh(rho), SE = sqrt(1.06 / (n - 3)) (Fieller, Hartley &
  Pearson 1957, the variance of Spearman's z), p = 2 * P(Z > |z| / SE).
  The percentile bootstrap this replaced could exclude 0 while p was 0.47: with many tied
  zero rates a seventh of its resamples had no rho at all and were dropped.
- Cohen's kappa between "humans identified the text" (the study's one definition) and "the
  machine ranked the true person first" (sklearn.metrics.cohen_kappa_score).
- McNemar's test on the same paired outcomes (statsmodels, exact binomial test when the
  discordant pairs are fewer than 25, the chi-square with continuity correction otherwise).
- ROC/AUC of the machine's probability of the true person as a predictor of human
  identification (sklearn.metrics.roc_auc_score / roc_curve).
- Kappa and AUC have a 95 % person-clustered percentile bootstrap interval
  (`clustered_bootstrap`: persons resampled with all their texts, 1000 resamples, seeded).
- p-values print as `p_text` gives them: "p = 0.487", or "p < 0.001".

Minimum samples (below them the statistic is None and `note` says "not enough data" with n):
rho needs MIN_PERSONS_RHO persons and both sides not constant; kappa, McNemar and AUC need
MIN_TEXTS texts of at least MIN_PERSONS_AGREEMENT persons; kappa needs both outcomes on each
side, McNemar a discordant text, AUC MIN_PER_OUTCOME texts of each human outcome.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from intruder.analysis.intervals import CONFIDENCE, Rate, wilson

# Below this many discordant pairs McNemar's chi-square approximation is poor.
MCNEMAR_EXACT_BELOW = 25
# Minimum samples: Fisher z needs n > 3; with 5 persons its SE is 0.73 already.
MIN_PERSONS_RHO = 5
MIN_TEXTS = 10
MIN_PERSONS_AGREEMENT = 3
MIN_PER_OUTCOME = 2
# Fieller, Hartley & Pearson (1957): var(atanh(rho_s)) ~= 1.06 / (n - 3).
SPEARMAN_Z_VARIANCE = 1.06
NOT_ENOUGH = "not enough data"
# Person-clustered bootstrap of kappa and AUC: resamples, and the share of them that must
# give the statistic at all (both outcomes present) for its interval to be printed.
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_MIN_VALID = 0.95
# Label permutations of the chance level of every attack and of the "any attack" rule.
NULL_PERMUTATIONS = 2000


def counted(n: int, noun: str) -> str:
    """Return "1 person", "3 persons": a count with its noun in the right number."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def outcome_rate(outcomes: Sequence[bool] | np.ndarray) -> Rate:
    """Return the Wilson rate of 0/1 outcomes (missing outcomes count as not identified)."""
    import pandas as pd

    values = pd.Series(list(outcomes), dtype="boolean").fillna(False).astype(bool)
    return wilson(int(values.sum()), len(values))


@dataclass
class Correlation:
    """Spearman's rho of paired rates with its Fisher z p-value and CI."""

    n: int
    rho: float | None
    p: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    method: str = "Fisher z, SE = sqrt(1.06 / (n - 3))"
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        """Return e.g. 'rho = 0.21 (95 % CI -0.41 to 0.69, p = 0.487, Fisher z, n = 12 persons)',
        or what it needs below the minimum sample."""
        if self.rho is None:
            return f"rho: {self.note or NOT_ENOUGH}"
        return (
            f"rho = {self.rho:.2f} (95 % CI {self.ci_low:.2f} to {self.ci_high:.2f}, "
            f"{p_text(self.p)}, Fisher z, n = {counted(self.n, 'person')})"
        )


@dataclass
class Agreement:
    """Paired binary outcomes of humans and a machine attack on the same texts."""

    n: int
    persons: int = 0
    both: int = 0
    human_only: int = 0
    machine_only: int = 0
    neither: int = 0
    kappa: float | None = None
    kappa_ci_low: float | None = None
    kappa_ci_high: float | None = None
    mcnemar_statistic: float | None = None
    mcnemar_p: float | None = None
    mcnemar_exact: bool | None = None
    auc: float | None = None
    auc_ci_low: float | None = None
    auc_ci_high: float | None = None
    roc: dict[str, list[float]] = field(default_factory=dict)
    note: str = ""

    def to_dict(self, with_roc: bool = False) -> dict[str, Any]:
        values = asdict(self)
        if not with_roc:
            values.pop("roc")
        return values


def p_text(p: float | None) -> str:
    """Return a p-value as printed everywhere: 'p = 0.487', or 'p < 0.001' (never 'p = 0.000')."""
    if p is None or not np.isfinite(p):
        return f"p: {NOT_ENOUGH}"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def fisher_interval(
    rho: float, n: int, *, confidence: float = CONFIDENCE
) -> tuple[float | None, float | None]:
    """Return the Fisher z interval of a Spearman rho over n pairs (as `spearman_with_ci`)."""
    from scipy import stats

    if n < MIN_PERSONS_RHO:
        return None, None
    se = math.sqrt(SPEARMAN_Z_VARIANCE / (n - 3))
    z = math.atanh(max(min(rho, 1 - 1e-12), -1 + 1e-12))
    critical = float(stats.norm.ppf(1 - (1 - confidence) / 2))
    return math.tanh(z - critical * se), math.tanh(z + critical * se)


def _finite(value: float) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


def spearman_with_ci(
    human: Sequence[float], machine: Sequence[float], *, confidence: float = CONFIDENCE
) -> Correlation:
    """Return Spearman's rho of the paired values with a Fisher z p-value and CI."""
    from scipy import stats

    x = np.asarray(human, dtype=float)
    y = np.asarray(machine, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = len(x)
    if n < MIN_PERSONS_RHO:
        return Correlation(
            n=n, rho=None, p=None, note=f"{NOT_ENOUGH}: needs {MIN_PERSONS_RHO} persons, has {n}"
        )
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return Correlation(
            n=n, rho=None, p=None, note=f"{NOT_ENOUGH}: one side has the same rate for all {n}"
        )
    rho = float(stats.spearmanr(x, y).statistic)
    se = math.sqrt(SPEARMAN_Z_VARIANCE / (n - 3))
    # |rho| = 1 has an infinite z: clip just inside so p and CI stay finite and consistent.
    z = math.atanh(max(min(rho, 1 - 1e-12), -1 + 1e-12))
    low, high = fisher_interval(rho, n, confidence=confidence)
    return Correlation(
        n=n, rho=rho, p=float(2 * stats.norm.sf(abs(z) / se)), ci_low=low, ci_high=high
    )


def agreement(
    human: Sequence[bool],
    machine: Sequence[bool],
    machine_prob: Sequence[float | None] | None = None,
    persons: Sequence[Any] | None = None,
) -> Agreement:
    """Return kappa, McNemar and (with probabilities) ROC/AUC of paired per-text outcomes.

    `persons` (one key per text) guards against a few persons' texts passing for many.
    """
    from sklearn.metrics import cohen_kappa_score, roc_auc_score, roc_curve
    from statsmodels.stats.contingency_tables import mcnemar

    h = np.asarray(human, dtype=bool)
    m = np.asarray(machine, dtype=bool)
    n_persons = len(set(persons)) if persons is not None else len(h)
    result = Agreement(n=len(h), persons=n_persons)
    if not len(h):
        result.note = f"{NOT_ENOUGH}: no texts with both human and machine results"
        return result
    result.both = int((h & m).sum())
    result.human_only = int((h & ~m).sum())
    result.machine_only = int((~h & m).sum())
    result.neither = int((~h & ~m).sum())
    if len(h) < MIN_TEXTS or n_persons < MIN_PERSONS_AGREEMENT:
        result.note = (
            f"{NOT_ENOUGH}: kappa, McNemar and AUC need {MIN_TEXTS} texts of "
            f"{MIN_PERSONS_AGREEMENT} persons (n = {counted(len(h), 'text')}, "
            f"{counted(n_persons, 'person')})"
        )
        return result
    notes = []
    if len(set(h)) == 1 or len(set(m)) == 1:
        notes.append(f"kappa: {NOT_ENOUGH}, one side gives one outcome only (n = {len(h)})")
    else:
        result.kappa = _finite(cohen_kappa_score(h, m))
    discordant = result.human_only + result.machine_only
    if discordant == 0:
        notes.append(f"McNemar: {NOT_ENOUGH}, no discordant texts (n = {len(h)})")
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
        positives = int(h.sum())
        if min(positives, len(h) - positives) < MIN_PER_OUTCOME:
            notes.append(
                f"AUC: {NOT_ENOUGH}, needs {MIN_PER_OUTCOME} texts of each human outcome "
                f"({positives} identified of {len(h)})"
            )
        else:
            result.auc = _finite(roc_auc_score(h, prob))
            fpr, tpr, _ = roc_curve(h, prob)
            result.roc = {"fpr": fpr.tolist(), "tpr": tpr.tolist()}
    if persons is not None and (result.kappa is not None or result.auc is not None):
        prob = None if machine_prob is None or result.auc is None else prob
        intervals, why = clustered_bootstrap(
            h, m if result.kappa is not None else None, prob, persons
        )
        if result.kappa is not None:
            result.kappa_ci_low, result.kappa_ci_high = intervals["kappa"]
        if result.auc is not None:
            result.auc_ci_low, result.auc_ci_high = intervals["auc"]
        notes += why
    result.note = "; ".join(notes)
    return result


def clustered_bootstrap(
    human: np.ndarray,
    machine: np.ndarray | None,
    prob: np.ndarray | None,
    persons: Sequence[Any],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> tuple[dict[str, tuple[float | None, float | None]], list[str]]:
    """Return percentile intervals of kappa (unless `machine` is None) and AUC (unless `prob`
    is None) from resampling persons, and notes.

    Texts of one person are not independent (one writer's facts recur), so persons are
    drawn with replacement and each brings all its texts: a resample is a weight per text
    (how often its person was drawn), and kappa and AUC are computed from weighted counts,
    all resamples at once. A resample in which one side has one outcome only gives no
    statistic; below BOOTSTRAP_MIN_VALID of them the interval is not printed (a note says
    why) rather than taken from the lucky resamples.
    """
    keys = _person_codes(persons)
    n_persons = int(keys.max()) + 1
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n_persons, [1.0 / n_persons] * n_persons, size=resamples)
    weights = counts[:, keys].astype(float)  # resamples x texts
    kappa = None if machine is None else _weighted_kappa(weights, human, machine)
    out: dict[str, tuple[float | None, float | None]] = {}
    notes: list[str] = []
    tail = 100 * (1 - confidence) / 2
    for name, values in (("kappa", kappa), ("auc", _weighted_auc(weights, human, prob))):
        if values is None:
            continue
        share = float(np.isfinite(values).mean())
        if share < BOOTSTRAP_MIN_VALID:
            out[name] = (None, None)
            notes.append(
                f"{name} interval: {NOT_ENOUGH}, only {share:.0%} of {resamples} person "
                f"resamples have both outcomes (needs {BOOTSTRAP_MIN_VALID:.0%})"
            )
            continue
        finite = values[np.isfinite(values)]
        out[name] = (float(np.percentile(finite, tail)), float(np.percentile(finite, 100 - tail)))
    return out, notes


def _weighted_kappa(weights: np.ndarray, human: np.ndarray, machine: np.ndarray) -> np.ndarray:
    """Return each resample's Cohen's kappa from text weights (NaN: one side one outcome)."""
    total = weights.sum(axis=1)
    h, m = human.astype(float), machine.astype(float)
    mean_h, mean_m = weights @ h / total, weights @ m / total
    agree = weights @ (h == m).astype(float) / total
    expected = mean_h * mean_m + (1 - mean_h) * (1 - mean_m)
    valid = (mean_h > 0) & (mean_h < 1) & (mean_m > 0) & (mean_m < 1)
    return np.where(valid, (agree - expected) / np.where(valid, 1 - expected, 1), np.nan)


def _weighted_auc(weights: np.ndarray, human: np.ndarray, prob: np.ndarray | None):
    """Return each resample's AUC (Mann-Whitney with ties as 1/2) from text weights."""
    if prob is None:
        return None
    positive, negative = prob[human], prob[~human]
    wins = (positive[:, None] > negative[None, :]) + 0.5 * (positive[:, None] == negative[None, :])
    w_pos, w_neg = weights[:, human], weights[:, ~human]
    pairs = w_pos.sum(axis=1) * w_neg.sum(axis=1)
    score = ((w_pos @ wins) * w_neg).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs > 0, score / np.where(pairs > 0, pairs, 1), np.nan)


def _person_codes(values: Sequence[Any]) -> np.ndarray:
    """Return 0..k-1 codes of the distinct values (persons), in order of first appearance."""
    import pandas as pd

    return pd.factorize(pd.Series(list(values), dtype=object))[0]


def strongest_null(
    results: Any, method: str, *, permutations: int = NULL_PERMUTATIONS, seed: int = 0
) -> dict[str, float | int | None]:
    """Return the permutation-null chance (%) of each attack and of the "any attack" rule.

    The one chance procedure of the platform's reports: the report computes it once per
    method (`RiskReport.chance`), and the threat model and the frontier both read it there.
    `results` has one row per (description, method, attack) with predicted_key and target_key.

    The attacks' predictions stay as they are; the true persons are shuffled across texts,
    so the null keeps how often attacks agree with each other. With attacks that disagree,
    "any of k" succeeds by chance far more often than 1/N.
    """
    part = results[results["method"] == method]
    if part.empty:
        return {"strongest_null_pct": None, "permutations": 0}
    predicted = part.pivot(index="description_id", columns="attack", values="predicted_key")
    truth = part.groupby("description_id")["target_key"].first().reindex(predicted.index)
    guesses = predicted.to_numpy(dtype=object)
    true = truth.to_numpy(dtype=object)
    rng = np.random.default_rng(seed)
    any_hits = np.empty(permutations)
    per_attack = np.zeros(guesses.shape[1])
    for i in range(permutations):
        shuffled = rng.permutation(true)
        hits = guesses == shuffled[:, None]
        any_hits[i] = hits.any(axis=1).mean()
        per_attack += hits.mean(axis=0)
    return {
        "strongest_null_pct": 100.0 * float(any_hits.mean()),
        "strongest_null_p95_pct": 100.0 * float(np.percentile(any_hits, 95)),
        "attack_null_pct": {
            str(a): 100.0 * float(v / permutations)
            for a, v in zip(predicted.columns, per_attack, strict=True)
        },
        "permutations": permutations,
        "texts": len(true),
    }
