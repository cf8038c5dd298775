"""The predicted-human-risk model: fit, leave-one-person-out, calibrations per N, refit."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from intruder.risk import predicted
from tests.intruder.risk_fixtures import add_judgments, finished_cheap_run, risk_study


def simulated(a: float, b: float, persons: int = 40, texts: int = 60, seed: int = 1):
    """Return persons (k of n identified drawn from the model) and their texts' evidence."""
    rng = np.random.default_rng(seed)
    rows, people = [], []
    for p in range(persons):
        evidence = rng.uniform(0, 1, texts) * rng.uniform(0.2, 1)
        probs = 1 / (1 + np.exp(-(a + b * evidence)))
        people.append(
            {
                "target_key": f"p{p}",
                "group": "famous",
                "human_k": int(rng.binomial(1, probs).sum()),
                "human_n": texts,
            }
        )
        rows += [{"target_key": f"p{p}", "group": "famous", "evidence": e} for e in evidence]
    return pd.DataFrame(people), pd.DataFrame(rows)


def test_fit_recovers_the_parameters_that_made_the_data():
    persons, texts = simulated(-2.0, 3.0)
    fitted = predicted.fit(persons, texts, fitted_on="sim", n_candidates=20, attacks=["x"], draws=0)
    assert fitted.a == pytest.approx(-2.0, abs=0.35)
    assert fitted.b == pytest.approx(3.0, abs=0.8)


def test_fictitious_persons_are_predicted_at_zero_and_semifamous_at_the_prior():
    calibration = predicted.Calibration(
        a=0.0, b=0.0, n_candidates=20, attacks=["x"], fitted_on="t", persons=3,
        familiarity=dict(predicted.FAMILIARITY),
    )  # fmt: skip
    p = predicted.predict_texts(
        calibration, [1.0, 1.0, 1.0], ["famous", "semifamous", "fictitious"]
    )
    assert p.tolist() == pytest.approx([0.5, 0.5 * predicted.SEMIFAMOUS_FAMILIARITY, 0.0])


def test_leave_one_person_out_never_fits_on_the_held_out_person(monkeypatch):
    persons, texts = simulated(-1.0, 2.0, persons=6, texts=10)
    seen: list[tuple[set, set]] = []
    real_fit = predicted.fit

    def spy(train_persons, train_texts, **kwargs):
        seen.append((set(train_persons["target_key"]), set(train_texts["target_key"])))
        return real_fit(train_persons, train_texts, **kwargs)

    monkeypatch.setattr(predicted, "fit", spy)
    out = predicted.leave_one_person_out(persons, texts, ["x"], 20)
    assert len(seen) == 6 and len(out) == 6
    for key, (train_persons, train_texts) in zip(persons["target_key"], seen, strict=True):
        assert key not in train_persons and key not in train_texts
        assert len(train_persons) == 5


def test_the_calibration_nearest_the_runs_n_is_loaded(tmp_path):
    base = dict(a=0.0, b=1.0, attacks=["x"], fitted_on="t", persons=20, familiarity={})
    made = [predicted.Calibration(n_candidates=n, **base) for n in (20, 70, 520)]
    path = tmp_path / "c.json"
    predicted.save_calibrations(made, path, validation={70: {"rho": 0.5}})
    assert predicted.load_calibration(path, candidates=14).n_candidates == 20
    assert predicted.load_calibration(path, candidates=45).n_candidates == 70
    assert predicted.load_calibration(path, candidates=300).n_candidates == 520
    assert predicted.load_calibration(path).n_candidates == 520
    assert json.loads(path.read_text())["calibrations"][1]["validation"] == {"rho": 0.5}
    assert predicted.load_calibration(tmp_path / "none.json") is None
    single = tmp_path / "single.json"  # the one-calibration format of earlier versions
    single.write_text(json.dumps(made[0].to_dict()))
    assert predicted.load_calibration(single, candidates=500).n_candidates == 20


@pytest.mark.django_db
def test_a_lab_refits_on_its_own_studies_and_the_platform_reads_it(tmp_path, settings):
    from intruder.risk.selectors import calibration_path, run_report

    run = finished_cheap_run(["textwash-model"])
    out = tmp_path / "lab.json"
    call_command("fit_predicted_risk", run.study.slug, "--out", str(out))
    written = json.loads(out.read_text())["calibrations"][0]
    assert written["n_candidates"] == 4 and written["attacks"] == ["bm25", "tfidf"]
    assert written["fitted_on"].startswith(run.study.slug) and "4 persons" in written["fitted_on"]
    assert np.isfinite([written["a"], written["b"]]).all() and len(written["draws"]) > 0
    settings.INTRUDER_PREDICTED_CALIBRATION = str(out)
    assert calibration_path() == out
    report = run_report(run)
    assert "predicted_group" in report.tables
    assert f"fitted on {run.study.slug}" in report.settings["predicted_human"]
    assert "no out-of-sample validation is stored with it" in report.settings["predicted_human"]
    unjudged = risk_study()
    with pytest.raises(CommandError, match="no finished attack run"):
        call_command("fit_predicted_risk", unjudged.slug, "--out", str(out))
    with pytest.raises(CommandError, match="no study with slug"):
        call_command("fit_predicted_risk", "nope", "--out", str(out))


@pytest.mark.django_db
def test_refit_refuses_a_study_with_attacks_but_no_judgments(tmp_path):
    from intruder.risk import attack_runs
    from intruder.services import jobs
    from tests.intruder.risk_fixtures import FAST_CONFIG

    study = risk_study()
    run = attack_runs.attack_run_start(
        study=study, user=study.owner, attacks=["tfidf"], methods=["textwash-model"], folds=3,
        config=FAST_CONFIG,
    )  # fmt: skip
    assert jobs.job_execute(run.job.pk).status == "succeeded"
    with pytest.raises(CommandError, match="no intruder judgments yet"):
        call_command("fit_predicted_risk", study.slug, "--out", str(tmp_path / "x.json"))
    add_judgments(study)
    call_command("fit_predicted_risk", study.slug, "--out", str(tmp_path / "x.json"))
