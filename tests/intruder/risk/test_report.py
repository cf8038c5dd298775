"""The risk report of an attack run: tables, statistics and written summary from stored data."""

from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

from attacks.strongest import STRONGEST
from intruder.risk import attack_runs
from intruder.risk.selectors import run_report
from intruder.services import jobs
from tests.intruder.risk_fixtures import (
    FAST_CONFIG,
    HUMAN_HITS,
    finished_cheap_run,
    risk_study,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_run():
    return finished_cheap_run(["textwash-model", "clear", "spacy-ner"])


def test_report_puts_human_results_beside_every_attack(finished_run):
    report = run_report(finished_run)
    assert list(report.tables) == [
        "trir_by_method",
        "frontier",
        "rates_group",
        "rates_target",
        "sensitivity",
        "coverage",
        "open_world",
        "agreement",
        "per_text",
        "machine_per_text",
    ]
    target = report.tables["rates_target"].set_index("target_key")
    for key, hits in HUMAN_HITS.items():
        # A text is identified when its mean cosine reaches 0.75: 3 of 3 or 2 of 3 is not.
        expected = 100.0 if hits == 3 else 0.0
        assert target.loc[key, "human_pct_identified"] == expected
        assert target.loc[key, "n_texts"] == 3
    for column in ("trir_tfidf", "trir_bm25", f"trir_{STRONGEST}", "tfidf_ci_low"):
        assert column in target
    per_text = report.tables["per_text"]
    assert len(per_text) == 12
    # One definition: the study's rule (mean cosine >= 0.75) in the per-text table too.
    identified = per_text.set_index("text_id")["human_identified"]
    assert identified.sum() == 3  # orlena's texts only (3 of 3 judgments)
    agreement = report.tables["agreement"].set_index("attack")
    # TF-IDF names every person of these made-up texts: kappa is not printed for one outcome.
    assert per_text["tfidf_correct"].all()
    assert agreement.loc["tfidf", "kappa"] is None
    assert "not enough data" in agreement.loc["tfidf", "note"]
    if not per_text["bm25_correct"].all():
        assert agreement.loc["bm25", "kappa"] == pytest.approx(
            cohen_kappa_score(per_text["human_identified"], per_text["bm25_correct"])
        )
    sensitivity = report.tables["sensitivity"].set_index(["guess_rule", "judgments", "rule"])
    # majority: orlena and bastian (2 of 3); any: everyone but corvin. No judgment is flagged,
    # so the rows without flagged judgments are the same; no guess names another person, so
    # the other rules of a guess give the same rows too (every guess is the person's name).
    for variant in (
        ("best_match_surname", "all"),
        ("best_match_surname", "flagged excluded"),
        ("best_match", "all"),
        ("paper", "all"),
    ):
        assert sensitivity.loc[variant, "human_identified"].to_dict() == {
            "mean_cosine": 3,
            "majority": 6,
            "any": 9,
        }
        assert (sensitivity.loc[variant, "judgments_named_other"] == 0).all()
    assert sensitivity["chosen"].sum() == 2  # the study's two rules, all and flagged excluded
    assert sensitivity.loc[("best_match_surname", "all", "mean_cosine"), "chosen"]


def test_trir_by_method_has_the_clear_text_as_ceiling_and_the_masked_share(finished_run):
    report = run_report(finished_run)
    by_method = report.tables["trir_by_method"].set_index("method")
    assert set(by_method.index) == {"textwash-model", "clear", "spacy-ner"}
    assert by_method.loc["clear", "pct_words_masked"] == 0
    assert by_method.loc["textwash-model", "pct_words_masked"] > 0
    assert by_method.loc["clear", f"trir_{STRONGEST}"] >= by_method.loc["spacy-ner", "trir_tfidf"]
    summary = report.summary()
    assert set(summary["trir"]["clear"]) >= {"tfidf", "bm25", STRONGEST, "pct_words_masked"}
    assert summary["settings"]["folds"] == 3


def test_written_summary_names_persons_and_compares_humans_and_machine(finished_run):
    report = run_report(finished_run)
    text = " ".join(report.paragraphs)
    assert "Persons most at risk" in text
    assert "closed-world machine choosing among N = 4 persons" in text
    assert "open-world intruders" in text
    for word in ("matches", "overstates", "understates"):
        assert word not in text
    assert "TRIR of the strongest adversary per method" in text


def test_report_without_judgments_shows_the_machine_side_and_says_so():
    study = risk_study(per_person=2)
    run = attack_runs.attack_run_start(
        study=study,
        user=study.owner,
        attacks=["tfidf"],
        methods=["textwash-model"],
        folds=2,
        config=FAST_CONFIG,
    )
    jobs.job_execute(run.job.pk)
    report = run_report(run)
    assert "per_text" not in report.tables and "agreement" not in report.tables
    assert any("No intruder judgments" in w for w in report.warnings)
    assert "human_pct_identified" not in report.tables["rates_target"]
