"""Fit and validate the predicted-human-risk model on the public Textwash studies.

The model is `intruder/risk/predicted.py` (2 fitted parameters). Its machine
evidence comes from the open-world ladder that `human_vs_machine_textwash.py` writes
(`DIR/study{1,2}/open_world_ladder.csv`: each text's true rank per attack and ladder step);
its human side is the paper's per-person rates (`human_rates.csv`).

Validation, as issue 19 asks:
- leave-one-person-out on study 2 (20 famous persons): Spearman rho and mean absolute error
  (percentage points) between the predicted and the published per-person rate;
- fitted on study 2 only, study 1's predicted rate per type (famous, semi-famous,
  fictitious) beside the paper's 18.3 / 2.0 / 1.0 %.

    python benchmarks/predicted_human_fit.py --ladders DIR --out DIR/predicted_human.json [--ship]

Reciprocal ranks shrink as the candidate set grows, so the model is fitted and validated at
every step of the ladder (N = the study's persons, then with distractors added); the summary's
headline (`study2_lopo`, `study1_from_study2`) is the largest N, the open world nearest to
what humans face. `--ship` writes one calibration per N (each fitted on all of study 2); the
platform uses the one nearest a run's candidate count.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.open_world_ladder import normalise_name, text_ranks
from intruder.risk import predicted as model
from research_data import textwash_study_dir

STUDIES = {"study1": 1, "study2": 2}


def read_ladders(folder: Path) -> dict[str, pd.DataFrame]:
    """Return study -> ladder frame, for the studies whose ladder CSV exists."""
    found = {}
    for name in STUDIES:
        path = folder / name / "open_world_ladder.csv"
        if path.exists():
            found[name] = pd.read_csv(path)
    return found


def pick_level(frame: pd.DataFrame, level: str) -> int:
    """Return the distractor count of the ladder step `level` ('0', 'max' or a count)."""
    steps = sorted(int(v) for v in frame["distractors"].unique())
    if level == "max":
        return steps[-1]
    if int(level) not in steps:
        raise SystemExit(f"ladder step {level} not in {steps}")
    return int(level)


def person_table(ranks: pd.DataFrame, published: pd.DataFrame, study: int) -> pd.DataFrame:
    """Return the persons with a published rate: k of n texts identified (k from the rate)."""
    rows = published[(published["study"] == study) & (published["person"] != "ALL")]
    rate = dict(zip(rows["person"].map(normalise_name), rows["pct_identified"], strict=True))
    people = []
    for (key, group), part in ranks.groupby(["target_key", "group"]):
        name = normalise_name(str(key))
        if name in rate:
            n = len(part)
            people.append(
                {
                    "target_key": key,
                    "group": group,
                    "human_k": round(rate[name] * n / 100),
                    "human_n": n,
                    "human_pct": rate[name],
                }
            )
    return pd.DataFrame(people)


def fit_and_validate(
    ladders: dict[str, pd.DataFrame],
    published: pd.DataFrame,
    *,
    level: str = "max",
    attacks: Sequence[str] | None = None,
) -> tuple[dict[str, Any], model.Calibration]:
    """Return the validation summary at one ladder step and the calibration on all of study 2."""
    used = list(attacks or sorted(ladders["study2"]["attack"].unique()))
    texts: dict[str, pd.DataFrame] = {}
    steps: dict[str, int] = {}
    for name, frame in ladders.items():
        steps[name] = pick_level(frame, level)
        ranks = text_ranks(frame, steps[name])
        ranks["evidence"] = model.text_evidence(ranks, used)
        texts[name] = ranks
    study2 = ladders["study2"]
    n_candidates = int(study2[study2["distractors"] == steps["study2"]]["candidates"].median())
    out: dict[str, Any] = {
        "attacks": used,
        "ladder_step_distractors": steps,
        "n_candidates": n_candidates,
    }
    persons = person_table(texts["study2"], published, STUDIES["study2"])
    lopo = model.leave_one_person_out(persons, texts["study2"], used, n_candidates)
    out["study2_lopo"] = {
        "rho": float(stats.spearmanr(lopo["human_pct"], lopo["predicted_pct"]).statistic),
        "mae_pp": float((lopo["human_pct"] - lopo["predicted_pct"]).abs().mean()),
        "n": len(lopo),
        "per_person": lopo.to_dict("records"),
    }
    # What the evidence alone ranks (the model is monotone in it within a group), and the
    # error of the trivial model that predicts every person at the others' mean rate.
    evidence = texts["study2"].groupby("target_key")["evidence"].mean()
    joined = persons.set_index("target_key").join(evidence)
    out["study2_evidence_rho"] = float(
        stats.spearmanr(joined["human_pct"], joined["evidence"]).statistic
    )
    total = persons["human_pct"].sum()
    others = (total - persons["human_pct"]) / (len(persons) - 1)
    out["study2_lopo_mean_baseline_mae_pp"] = float((persons["human_pct"] - others).abs().mean())
    calibration = model.fit(
        persons,
        texts["study2"],
        fitted_on="Textwash study 2 (20 famous persons)",
        n_candidates=n_candidates,
        attacks=used,
    )
    out["calibration"] = calibration.to_dict() | {"draws": len(calibration.draws or [])}
    if "study1" in texts:
        table = model.predict_with_intervals(calibration, texts["study1"], ["group"])
        out["study1_from_study2"] = {
            row.group: float(row.predicted_pct) for row in table.itertuples(index=False)
        }
        out["study1_from_study2_ci"] = {
            row.group: [float(row.predicted_ci_low), float(row.predicted_ci_high)]
            for row in table.itertuples(index=False)
        }
        paper = published[(published["study"] == 1) & (published["person"] == "ALL")]
        out["study1_paper"] = dict(zip(paper["type"], paper["pct_identified"], strict=True))
        out["study1_abs_error_pp"] = {
            group: abs(value - out["study1_paper"][group])
            for group, value in out["study1_from_study2"].items()
            if group in out["study1_paper"]
        }
    return out, calibration


def fit_ladder(
    ladders: dict[str, pd.DataFrame],
    published: pd.DataFrame,
    attacks: Sequence[str] | None = None,
) -> tuple[dict[str, Any], list[model.Calibration]]:
    """Fit and validate at every ladder step; the headline is the largest N."""
    steps = sorted(int(v) for v in ladders["study2"]["distractors"].unique())
    by_level, calibrations = {}, []
    for step in steps:
        # Study 1 is predicted at its own step with the same number of distractors.
        found, calibration = fit_and_validate(ladders, published, level=str(step), attacks=attacks)
        by_level[str(found["n_candidates"])] = found
        calibrations.append(calibration)
    headline = by_level[str(calibrations[-1].n_candidates)]
    # (`pick_level` asks each study for the same distractor count.)
    out = {
        "model": model.__doc__.split("\n\n")[1],
        **{k: v for k, v in headline.items() if k != "calibration"},
        "by_candidates": {
            n: {k: v for k, v in found.items() if k not in ("per_person", "calibration")}
            | {"study2_lopo": validation_record(found)["study2_lopo"]}
            for n, found in by_level.items()
        },
    }
    return out, calibrations


def validation_record(out: dict[str, Any]) -> dict[str, Any]:
    """Return the validation numbers the shipped calibration carries."""
    lopo = {k: v for k, v in out["study2_lopo"].items() if k != "per_person"}
    return {
        "study2_lopo": lopo,
        **{k: out[k] for k in ("study1_from_study2", "study1_paper") if k in out},
    }


def ship(calibrations: list[model.Calibration], out: dict[str, Any]) -> None:
    """Write the platform's calibrations, each with its own validation numbers."""
    model.save_calibrations(
        calibrations,
        validation={
            c.n_candidates: out["by_candidates"][str(c.n_candidates)] for c in calibrations
        },
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ladders", type=Path, required=True, help="human_vs_machine out DIR")
    parser.add_argument("--out", type=Path, required=True, help="JSON to write")
    parser.add_argument("--data", type=Path, default=textwash_study_dir())
    parser.add_argument("--attacks", default="", help="comma list (default: all in the ladder)")
    parser.add_argument("--ship", action="store_true", help="write the platform's calibrations")
    args = parser.parse_args()
    ladders = read_ladders(args.ladders)
    if "study2" not in ladders:
        parser.error(f"no study2/open_world_ladder.csv under {args.ladders}")
    published = pd.read_csv(args.data / "human_rates.csv")
    attacks = [a for a in args.attacks.split(",") if a] or None
    from did_work import require_work

    require_work(
        "predicted_human_fit",
        ladder_rows=sum(len(frame) for frame in ladders.values()),
        persons=len(published),
    )
    out, calibrations = fit_ladder(ladders, published, attacks)
    args.out.write_text(json.dumps(out, indent=1, default=float) + "\n", encoding="utf-8")
    if args.ship:
        ship(calibrations, out)
    print(json.dumps(out["by_candidates"], indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
