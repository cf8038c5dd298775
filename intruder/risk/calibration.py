"""Refit the predicted-human-risk model on a researcher's own studies with intruder data.

The shipped calibration comes from the public Textwash study 2 (`benchmarks/
predicted_human_fit.py`); a lab that has run its own intruders refits the same two
parameters (`intruder/risk/predicted.py`) on its studies: each study's latest finished
report run gives the machine evidence per judged text, and its judgments, under the study's
own identified-by-humans rule, give each person's k of n texts identified.
`INTRUDER_PREDICTED_CALIBRATION` points the platform at the file written.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from intruder.models import Study
from intruder.risk import predicted
from intruder.risk.report.tables import human_outcomes, machine_per_text
from intruder.risk.selectors import human_texts, latest_run, machine_side, run_results

# The model has two parameters: fewer persons than this cannot be fitted with any meaning.
MIN_PERSONS = 3


class CalibrationError(Exception):
    """The studies cannot calibrate the model; the message says why."""


def study_evidence(study: Study) -> tuple[pd.DataFrame, list[str], int]:
    """Return the study's judged texts (person, group, evidence, identified), attacks and N."""
    run = latest_run(study)
    if run is None or run.job is None or run.job.status != "succeeded":
        raise CalibrationError(f"{study.slug}: no finished attack run (run the risk report first)")
    outcomes = human_outcomes(human_texts(study), study.identified_rule)
    if outcomes.empty:
        raise CalibrationError(f"{study.slug}: no intruder judgments yet")
    machine = machine_per_text(run_results(run))
    texts = outcomes[["description_id", "method", "human_identified"]].merge(
        machine, on=["description_id", "method"], how="inner"
    )
    if texts.empty:
        raise CalibrationError(f"{study.slug}: the run attacked none of the judged texts")
    attacks = list(run.attacks)
    texts["evidence"] = predicted.text_evidence(texts, attacks).to_numpy()
    texts["target_key"] = f"{study.slug}:" + texts["target_key"].astype(str)
    return texts, attacks, int(machine_side(run)["candidates"])


def calibration_fit(studies: Sequence[Study], *, seed: int = 0) -> predicted.Calibration:
    """Fit the model on the studies' judged texts; all runs need the same attacks and ~N."""
    frames, attack_sets, counts = [], set(), []
    for study in studies:
        texts, attacks, candidates = study_evidence(study)
        frames.append(texts)
        attack_sets.add(tuple(sorted(attacks)))
        counts.append(candidates)
    if len(attack_sets) != 1:
        raise CalibrationError(f"the runs used different attacks: {sorted(attack_sets)}")
    if max(counts) > 2 * min(counts):
        raise CalibrationError(f"the runs' candidate counts differ by more than 2x: {counts}")
    texts = pd.concat(frames, ignore_index=True)
    persons = (
        texts.groupby(["target_key", "group"], as_index=False)
        .agg(human_k=("human_identified", "sum"), human_n=("human_identified", "size"))
        .astype({"human_k": int, "human_n": int})
    )
    if len(persons) < MIN_PERSONS:
        raise CalibrationError(f"{len(persons)} persons; the fit needs at least {MIN_PERSONS}")
    identified = int(persons["human_k"].sum())
    if identified in (0, int(persons["human_n"].sum())):
        raise CalibrationError("the intruders identified all texts or none: nothing to fit")
    slugs = ", ".join(s.slug for s in studies)
    return predicted.fit(
        persons,
        texts,
        fitted_on=f"{slugs} ({len(persons)} persons, {len(texts)} texts)",
        n_candidates=int(pd.Series(counts).median()),
        attacks=sorted(attack_sets.pop()),
        seed=seed,
    )
