"""The familiarity split against a hand computation, and its use in the report."""

from __future__ import annotations

import pandas as pd
import pytest

from intruder.analysis.intervals import wilson
from intruder.risk import predicted
from intruder.risk.familiarity import familiarity_split, measured_familiarity


def frames():
    # Five intruders judged texts of "ada" (famous); four answered the question for her.
    judgments = pd.DataFrame(
        [
            # participant, identified
            (1, True),
            (2, True),
            (3, False),
            (4, False),
            (5, True),  # did not answer the question: left out of the split
            (1, False),  # a second judgment by intruder 1 (another text of ada)
        ],
        columns=["participant_id", "identified"],
    ).assign(target_key="ada", target_name="Ada Quill", group="famous")
    answers = pd.DataFrame(
        [(1, "ada", True), (2, "ada", True), (3, "ada", True), (4, "ada", False)],
        columns=["participant_id", "target_key", "heard_of"],
    )
    return judgments, answers


def test_the_split_matches_a_hand_computation():
    judgments, answers = frames()
    row = familiarity_split(judgments, answers).iloc[0]
    # Five judgments by intruders who answered: 1 (twice), 2, 3 familiar; 4 not.
    assert row["n_judgments"] == 5
    assert (row["naming_k"], row["naming_n"]) == (2, 5)  # intruder 1 once, intruder 2
    assert (row["familiarity_k"], row["familiarity_n"]) == (4, 5)
    assert (row["naming_given_familiar_k"], row["naming_given_familiar_n"]) == (2, 4)
    assert (row["naming_given_unfamiliar_k"], row["naming_given_unfamiliar_n"]) == (0, 1)
    assert row["naming_pct"] == pytest.approx(40.0)
    assert row["familiarity_pct"] == pytest.approx(80.0)
    assert row["naming_given_familiar_pct"] == pytest.approx(50.0)
    # naming = familiarity x naming|familiar + (1 - familiarity) x naming|unfamiliar
    assert row["naming_pct"] == pytest.approx(
        row["familiarity_pct"] * row["naming_given_familiar_pct"] / 100
        + (100 - row["familiarity_pct"]) * row["naming_given_unfamiliar_pct"] / 100
    )
    # Wilson interval of 4 of 5 (statsmodels, by hand: 37.6 to 96.4 %).
    assert row["familiarity_ci_low"] == pytest.approx(37.553, abs=0.01)
    assert row["familiarity_ci_high"] == pytest.approx(96.378, abs=0.01)


def test_measured_familiarity_is_the_share_of_intruders_who_had_heard_of_the_person():
    _, answers = frames()
    assert measured_familiarity(answers) == {"ada": 0.75}
    assert familiarity_split(*frames()[:1], answers.iloc[0:0]).empty


def test_the_predicted_model_uses_measured_familiarity_where_given():
    calibration = predicted.Calibration(
        a=0.0,
        b=0.0,
        n_candidates=10,
        attacks=["tfidf"],
        fitted_on="t",
        persons=2,
        familiarity=dict(predicted.FAMILIARITY),
    )
    texts = pd.DataFrame(
        {
            "target_key": ["ada", "bo"],
            "group": ["famous", "famous"],
            "evidence": [0.0, 0.0],
            "measured_familiarity": [0.25, float("nan")],
        }
    )
    table = predicted.predict_with_intervals(calibration, texts, ["target_key"])
    # sigmoid(0) = 0.5: measured 0.25 for ada, the declared famous 1.0 for bo.
    assert dict(zip(table["target_key"], table["predicted_pct"], strict=True)) == {
        "ada": pytest.approx(12.5),
        "bo": pytest.approx(50.0),
    }


@pytest.mark.django_db
def test_the_report_splits_measured_familiarity_and_renders_it():
    from intruder.models import FamiliarityAnswer, Participant
    from intruder.risk.rendering import table_csv
    from intruder.risk.selectors import run_report
    from tests.intruder.risk_fixtures import HUMAN_HITS, finished_cheap_run

    run = finished_cheap_run(["textwash-model"])
    study = run.study
    study.targets.update(group="famous")
    intruders = list(Participant.objects.filter(study=study).order_by("pk"))
    for target in study.targets.all():
        for slot, intruder in enumerate(intruders, 1):
            # Everyone who named the person had heard of them, and one more did.
            heard = slot <= HUMAN_HITS[target.key] + 1
            FamiliarityAnswer.objects.create(participant=intruder, target=target, heard_of=heard)
    report = run_report(run, human_method="textwash-model")
    split = report.tables["familiarity_split"].set_index("target_key")
    assert split.loc["orlena", "familiarity_pct"] == pytest.approx(100.0)
    assert split.loc["corvin", "familiarity_pct"] == pytest.approx(100 / 3)
    assert split.loc["corvin", "naming_given_familiar_pct"] == 0
    assert split.loc["bastian", "naming_given_familiar_pct"] == pytest.approx(200 / 3)
    assert split.loc["maelis", "familiarity_pct"] == pytest.approx(200 / 3)
    assert split.loc["maelis", "naming_given_familiar_pct"] == pytest.approx(50.0)
    assert "orlena" in table_csv(report, "familiarity_split")
    from intruder.risk.report.summary import FAMILIARITY_NOTE

    assert report.notes["familiarity_split"] == FAMILIARITY_NOTE  # real intruders: no label
    # The decoys each intruder was asked about beside the persons: how they were answered.
    from intruder.models import FamiliarityDecoyAnswer

    for n, intruder in enumerate(intruders):
        FamiliarityDecoyAnswer.objects.create(
            participant=intruder, name="Tom Hanks", heard_of=n == 0
        )
        FamiliarityDecoyAnswer.objects.create(participant=intruder, name="Pele", heard_of=False)
    report = run_report(run, human_method="textwash-model")
    ticked = wilson(1, 2 * len(intruders)).text()
    assert f"ticked as heard of: {ticked}." in report.notes["familiarity_split"]


@pytest.mark.django_db
def test_the_split_is_named_a_share_of_judgments_and_never_the_human_rate():
    """Issue 46: 8 of 9 judgments named a person whose texts were identified 2 of 3 times
    under the study's rule; the split says "share of judgments naming the person"."""
    from intruder.risk.rendering import display_frame
    from intruder.risk.report.tables import RISK_TABLE_TITLES

    judgments = pd.DataFrame(
        {"participant_id": range(9), "identified": [True] * 8 + [False]}
    ).assign(target_key="ada", target_name="Ada Quill", group="famous")
    answers = pd.DataFrame(
        {"participant_id": range(9), "target_key": "ada", "heard_of": [True] * 9}
    )
    split = familiarity_split(judgments, answers)
    assert split.iloc[0]["naming_pct"] == pytest.approx(800 / 9)
    assert not [c for c in split.columns if c.startswith("human")]
    title = RISK_TABLE_TITLES["familiarity_split"]
    assert "share of judgments naming the person (not the human rate)" in title
    # Each share and its interval read as one cell, as every rate of the report does.
    shown = display_frame(split)
    assert "naming_pct [95 % CI]" in shown.columns and "naming_ci_low" not in shown.columns
    assert shown.iloc[0]["naming_pct [95 % CI]"].startswith("88.9 [")
