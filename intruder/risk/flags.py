"""Reads for the pre-release risk check: which texts the machine re-identifies, and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from intruder.models import PersonGroup, Study
from intruder.risk.models import AttackResult, AttackRun
from intruder.risk.predicted import (
    load_calibration,
    predict_with_intervals,
    text_evidence,
    validation_text,
)
from intruder.risk.report.tables import _default_human_method, machine_per_text
from intruder.risk.selectors import calibration_path, machine_side, run_results


@dataclass
class RiskFlag:
    """The machine ranks a text's true person first: by which attacks, on which words."""

    text_id: int
    attacks: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    probability: float | None = None
    checked_at: object = None
    edited_since: bool = False


def latest_risk_check(study: Study | int) -> AttackRun | None:
    """Return the study's newest risk check (finished or not)."""
    study_id = study if isinstance(study, int) else study.pk
    return (
        AttackRun.objects.filter(study_id=study_id, purpose=AttackRun.Purpose.RISK_CHECK)
        .select_related("job")
        .first()
    )


def risk_flags(run: AttackRun | None) -> dict[int, RiskFlag]:
    """Return anonymized text id -> flag, for texts some attack of `run` re-identified."""
    if run is None:
        return {}
    flags: dict[int, RiskFlag] = {}
    hits = (
        AttackResult.objects.filter(run=run, true_rank=1, anonymized_text__isnull=False)
        .select_related("anonymized_text")
        .order_by("attack")
    )
    for result in hits:
        flag = flags.setdefault(
            result.anonymized_text_id,
            RiskFlag(text_id=result.anonymized_text_id, checked_at=result.created_at),
        )
        flag.attacks.append(result.attack)
        flag.words += [w for w in result.driving_words if w not in flag.words]
        flag.probability = max(flag.probability or 0.0, result.true_prob or 0.0)
        flag.edited_since = result.anonymized_text.updated_at > result.created_at
    return flags


@dataclass
class PredictedRisk:
    """The pre-release estimate of the human identification rate, from a risk check."""

    method: str
    candidates: int
    fitted_on: str = ""
    fitted_candidates: int | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    why_not: str = ""
    validation: str = ""


def predicted_risk(run: AttackRun | None) -> PredictedRisk | None:
    """Return the predicted human rate per group and overall for a finished risk check.

    The model and its shipped calibration: `intruder/risk/predicted.py`; the
    calibration fitted at the candidate count nearest the run's is used, and none where no
    calibration lies within a factor 2 of it (the reason is returned instead).
    """
    if run is None or run.job is None or run.job.status != "succeeded":
        return None
    machine = machine_per_text(run_results(run))
    if machine.empty:
        return None
    candidates = int(machine_side(run)["candidates"])
    method = _default_human_method(machine, None)
    found = PredictedRisk(method=method, candidates=candidates)
    calibration = load_calibration(calibration_path(), candidates=candidates)
    if calibration is None:
        found.why_not = "no calibration is shipped"
        return found
    found.fitted_on, found.fitted_candidates = calibration.fitted_on, calibration.n_candidates
    found.validation = validation_text(calibration)
    fitted = calibration.n_candidates or candidates
    if not fitted / 2 <= candidates <= fitted * 2:
        found.why_not = (
            f"the nearest calibration was fitted at N = {fitted} candidates and this check "
            f"has N = {candidates}"
        )
        return found
    missing = [a for a in calibration.attacks if f"{a}_true_rank" not in machine]
    if missing:
        found.why_not = f"the calibration needs the attacks {', '.join(calibration.attacks)}"
        return found
    part = machine[machine["method"] == method].copy()
    part["evidence"] = text_evidence(part, calibration.attacks).to_numpy()
    part["scope"] = "all texts"
    table = predict_with_intervals(calibration, part, ["group"]).rename(columns={"group": "scope"})
    table["scope"] = table["scope"].map(lambda g: PersonGroup(g).label if g in PersonGroup else g)
    overall = predict_with_intervals(calibration, part, ["scope"])
    found.rows = [*table.to_dict("records"), *overall.to_dict("records")]
    return found
