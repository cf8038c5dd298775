"""Predicted human risk: the chance that human intruders identify a text, from machine evidence.

A deliberately small model (2 fitted parameters; the public Textwash data has 20-30 persons):

    evidence(text) = mean over attacks of 1 / rank of the true person at N candidates
                     (0 where the person is not ranked)
    p(text)        = familiarity[group] * sigmoid(a + b * evidence(text))
    p(person)      = mean of p(text) over the person's texts

`a` and `b` are fitted by maximum likelihood on per-person human rates (k of n texts
identified, binomial), the only human data that is public. Where a study measured
familiarity (its intruders' answers to the familiarity question), a person's measured share
replaces the declared constant at prediction time. Otherwise `familiarity` is declared, not
fitted: famous 1; fictitious 0 (nobody can know an invented person); semi-famous a prior
(SEMIFAMOUS_FAMILIARITY) that no public data with machine evidence can fit yet, since study 2
holds famous persons only. Intervals: percentiles of refits on persons resampled with
replacement (seeded).

Django-free: the benchmark fits it (`benchmarks/human_vs_machine_textwash.py`), the
calibration ships as `predicted_human_calibration.json`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from intruder.risk.stats import MIN_PERSONS_RHO, NOT_ENOUGH, fisher_interval

SEMIFAMOUS_FAMILIARITY = 0.1
FAMILIARITY = {"famous": 1.0, "semifamous": SEMIFAMOUS_FAMILIARITY, "fictitious": 0.0}
CALIBRATION_PATH = Path(__file__).with_name("predicted_human_calibration.json")
BOOTSTRAP = 200


@dataclass
class Calibration:
    """The fitted parameters and what they were fitted on."""

    a: float
    b: float
    n_candidates: int | None
    attacks: list[str]
    fitted_on: str
    persons: int
    familiarity: dict[str, float]
    # (a, b) refitted on persons resampled with replacement: the intervals of predictions.
    draws: list[list[float]] | None = None
    # How it held up out of sample where it was fitted (e.g. leave-one-person-out rho, MAE).
    validation: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def text_evidence(ranks: pd.DataFrame, attacks: Sequence[str]) -> pd.Series:
    """Return each text's evidence: the mean reciprocal rank of the true person over attacks."""
    values = [1.0 / ranks[f"{a}_true_rank"].astype(float) for a in attacks]
    return pd.concat(values, axis=1).fillna(0.0).mean(axis=1)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _familiarity(
    calibration: Calibration, groups: Sequence[str], measured: Sequence[float] | None
) -> np.ndarray:
    """Return each text's familiarity: measured where given (not NaN), else declared."""
    declared = np.asarray([calibration.familiarity.get(g, 0.0) for g in groups], float)
    if measured is None:
        return declared
    values = np.asarray(measured, float)
    return np.where(np.isnan(values), declared, values)


def predict_texts(
    calibration: Calibration,
    evidence: np.ndarray,
    groups: Sequence[str],
    measured: Sequence[float] | None = None,
) -> np.ndarray:
    """Return the predicted probability that humans identify each text."""
    familiarity = _familiarity(calibration, groups, measured)
    return familiarity * _sigmoid(calibration.a + calibration.b * np.asarray(evidence, float))


def _mean_predictions_per_draw(
    calibration: Calibration,
    evidence: np.ndarray,
    groups: Sequence[str],
    measured: Sequence[float] | None = None,
) -> np.ndarray:
    """Return the mean predicted probability of the texts under each resampled (a, b).

    One array operation over all draws: a Python loop over them made the risk page's first
    view take seconds.
    """
    params = np.asarray(calibration.draws or [], float).reshape(-1, 2)
    familiarity = _familiarity(calibration, groups, measured)
    logits = params[:, :1] + params[:, 1:] * np.asarray(evidence, float)[None, :]
    return (familiarity[None, :] * _sigmoid(logits)).mean(axis=1)


def _person_probs(params: np.ndarray, evidence: list[np.ndarray], familiarity: np.ndarray):
    return np.asarray(
        [
            f * _sigmoid(params[0] + params[1] * e).mean()
            for e, f in zip(evidence, familiarity, strict=True)
        ]
    )


def _fit_params(evidence: list[np.ndarray], familiarity: np.ndarray, k: np.ndarray, n: np.ndarray):
    from scipy.optimize import minimize

    def loss(params: np.ndarray) -> float:
        p = np.clip(_person_probs(params, evidence, familiarity), 1e-6, 1 - 1e-6)
        return float(-(k * np.log(p) + (n - k) * np.log(1 - p)).sum())

    return minimize(loss, x0=np.array([-1.0, 1.0]), method="Nelder-Mead").x


def fit(
    persons: pd.DataFrame,
    texts: pd.DataFrame,
    *,
    fitted_on: str,
    n_candidates: int | None,
    attacks: Sequence[str],
    draws: int = BOOTSTRAP,
    seed: int = 0,
) -> Calibration:
    """Fit a and b on persons (target_key, group, human_k, human_n) and texts (evidence)."""
    evidence, familiarity, k, n = _arrays(persons, texts)
    a, b = _fit_params(evidence, familiarity, k, n)
    rng = np.random.default_rng(seed)
    resampled = []
    for _ in range(draws):
        pick = rng.integers(0, len(evidence), len(evidence))
        params = _fit_params([evidence[i] for i in pick], familiarity[pick], k[pick], n[pick])
        resampled.append([float(params[0]), float(params[1])])
    return Calibration(
        a=float(a),
        b=float(b),
        n_candidates=n_candidates,
        attacks=list(attacks),
        fitted_on=fitted_on,
        persons=len(persons),
        familiarity=dict(FAMILIARITY),
        draws=resampled or None,
    )


def _arrays(persons: pd.DataFrame, texts: pd.DataFrame):
    by_person = texts.groupby("target_key")["evidence"].apply(lambda s: s.to_numpy(float))
    evidence = [by_person.get(key, np.zeros(1)) for key in persons["target_key"]]
    familiarity = persons["group"].map(FAMILIARITY).fillna(0.0).to_numpy(float)
    return (
        evidence,
        familiarity,
        persons["human_k"].to_numpy(float),
        persons["human_n"].to_numpy(float),
    )


def predict_persons(calibration: Calibration, texts: pd.DataFrame) -> pd.DataFrame:
    """Return per person: texts and the predicted human rate (%)."""
    frame = texts.copy()
    frame["predicted"] = predict_texts(calibration, frame["evidence"], frame["group"])
    table = frame.groupby(["group", "target_key"], as_index=False).agg(
        n_texts=("predicted", "size"), predicted_pct=("predicted", "mean")
    )
    table["predicted_pct"] *= 100
    return table


def leave_one_person_out(
    persons: pd.DataFrame, texts: pd.DataFrame, attacks: Sequence[str], n_candidates: int | None
) -> pd.DataFrame:
    """Return each person's prediction from a model fitted without that person."""
    rows = []
    for key in persons["target_key"]:
        train = persons[persons["target_key"] != key]
        calibration = fit(
            train,
            texts[texts["target_key"] != key],
            fitted_on="lopo",
            draws=0,
            n_candidates=n_candidates,
            attacks=attacks,
        )
        held = texts[texts["target_key"] == key]
        assert key not in set(train["target_key"])
        predicted = predict_persons(calibration, held)
        rows.append({"target_key": key, "predicted_pct": float(predicted["predicted_pct"].iloc[0])})
    return persons.merge(pd.DataFrame(rows), on="target_key")


def lopo_validation(
    persons: pd.DataFrame, texts: pd.DataFrame, attacks: Sequence[str], n_candidates: int | None
) -> dict[str, Any]:
    """Return how the model refitted on this evidence holds up out of sample, with n.

    persons: target_key, group, human_k, human_n, human_pct; texts: target_key, group,
    evidence. The leave-one-person-out rho (Spearman, Fisher z interval) and MAE, beside the
    MAE of predicting every person at the mean of the others. One home for the
    crowd-intruder benchmark's ladder and the risk report's: below MIN_PERSONS_RHO persons
    it returns a note instead of numbers.
    """
    n = len(persons)
    if n < MIN_PERSONS_RHO:
        return {"n": n, "note": f"{NOT_ENOUGH}: needs {MIN_PERSONS_RHO} persons, has {n}"}
    from scipy import stats  # here: 0.3 s of every Django process's start, used once

    lopo = leave_one_person_out(persons, texts, attacks, n_candidates)
    rho = float(stats.spearmanr(lopo["human_pct"], lopo["predicted_pct"]).statistic)
    low, high = fisher_interval(rho, len(lopo))
    others = (persons["human_pct"].sum() - persons["human_pct"]) / (n - 1)
    return {
        "lopo_rho": rho,
        "lopo_rho_ci_low": low,
        "lopo_rho_ci_high": high,
        "lopo_mae_pp": float((lopo["human_pct"] - lopo["predicted_pct"]).abs().mean()),
        "mean_baseline_mae_pp": float((persons["human_pct"] - others).abs().mean()),
        "n": len(lopo),
    }


def predict_with_intervals(
    calibration: Calibration, texts: pd.DataFrame, by: Sequence[str]
) -> pd.DataFrame:
    """Return the predicted human rate (%) per `by` group of texts, with a 95 % interval.

    texts: one row per text with `group` and `evidence` (and the `by` columns), and
    optionally `measured_familiarity` (NaN where not measured). The interval comes from the
    calibration's resampled parameters.
    """
    rows = []
    for key, part in texts.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        groups = part["group"].tolist()
        measured = part.get("measured_familiarity")
        point = predict_texts(calibration, part["evidence"], groups, measured).mean()
        draws = _mean_predictions_per_draw(calibration, part["evidence"], groups, measured)
        low, high = np.percentile(draws, [2.5, 97.5]) if len(draws) else (np.nan, np.nan)
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "n_texts": len(part),
                "predicted_pct": 100 * point,
                "predicted_ci_low": 100 * low,
                "predicted_ci_high": 100 * high,
            }
        )
    return pd.DataFrame(rows)


def validation_text(calibration: Calibration) -> str:
    """Return what the model was fitted on and how it held up out of sample, in one sentence.

    Shown wherever a predicted rate is (page, HTML, PDF, table files, risk-check panel): a
    prediction without its validation reads as a measurement. The leave-one-person-out rho
    has its Fisher z interval; the MAE is set beside the baseline it must beat (predicting
    every person at the mean of the others). The calibration stores no per-person errors, so
    the MAE has no interval; the sentence says so.
    """
    lopo = (calibration.validation or {}).get("study2_lopo") or {}
    fitted = f"Predicted by a model fitted on {calibration.fitted_on}" + (
        f" at N = {calibration.n_candidates} candidates" if calibration.n_candidates else ""
    )
    if not lopo:
        return f"{fitted}; no out-of-sample validation is stored with it."
    low, high = fisher_interval(float(lopo["rho"]), int(lopo["n"]))
    interval = f", 95 % CI {low:.2f} to {high:.2f}" if low is not None else ""
    baseline = (calibration.validation or {}).get("study2_lopo_mean_baseline_mae_pp")
    versus = (
        f" against {baseline:.1f} for predicting the mean (the baseline it "
        + ("beats" if lopo["mae_pp"] < baseline else "does not beat")
        + ")"
        if baseline is not None
        else " (no baseline stored)"
    )
    return (
        f"{fitted}; leave-one-person-out on its {lopo['n']} persons: Spearman rho = "
        f"{lopo['rho']:.2f}{interval} (Fisher z), mean absolute error "
        f"{lopo['mae_pp']:.1f} percentage points{versus}; the MAE has no interval (the "
        "calibration stores no per-person errors)."
    )


def save_calibrations(
    calibrations: Sequence[Calibration],
    path: Path | None = None,
    validation: dict[int, Any] | None = None,
) -> None:
    """Write the calibrations the platform ships: one per candidate count N of the ladder.

    validation: N -> the validation numbers of the calibration at that N.
    """
    entries = [
        {**c.to_dict(), "validation": (validation or {}).get(c.n_candidates, c.validation)}
        for c in calibrations
    ]
    path = path or CALIBRATION_PATH
    path.write_text(json.dumps({"calibrations": entries}, indent=1) + "\n", encoding="utf-8")


def load_calibration(
    path: Path | None = None, *, candidates: int | None = None
) -> Calibration | None:
    """Return the shipped calibration fitted at the N nearest `candidates` (log scale).

    None where none was fitted yet. Without `candidates`, the one at the largest N.
    """
    path = path or CALIBRATION_PATH
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    entries = data.get("calibrations", [data])
    fields = Calibration.__dataclass_fields__
    found = [Calibration(**{k: v for k, v in e.items() if k in fields}) for e in entries]
    if not found:
        return None
    if candidates is None:
        return max(found, key=lambda c: c.n_candidates or 0)
    return min(found, key=lambda c: abs(np.log((c.n_candidates or candidates) / candidates)))
