"""The risk report of an attack run: tables, statistics and written summary from stored data."""

from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

from intruder.analysis.risk import STRONGEST
from intruder.selectors.risk import run_report
from intruder.services import attack_runs, jobs
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
        "rates_group",
        "rates_target",
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
    for column in ("trir_tfidf", "trir_bm25", f"trir_{STRONGEST}", "se_tfidf"):
        assert column in target
    per_text = report.tables["per_text"]
    assert len(per_text) == 12
    majority = per_text.set_index("text_id")["human_majority_identified"]
    assert majority.sum() == 6  # orlena (3/3) and bastian (2/3) texts
    row = report.tables["agreement"].set_index("attack").loc["tfidf"]
    assert row["kappa"] == pytest.approx(
        cohen_kappa_score(per_text["human_majority_identified"], per_text["tfidf_correct"])
    )


def test_trir_by_method_has_the_clear_text_as_ceiling_and_the_masked_share(finished_run):
    report = run_report(finished_run)
    by_method = report.tables["trir_by_method"].set_index("method")
    assert set(by_method.index) == {"textwash-model", "clear", "spacy-ner"}
    assert by_method.loc["clear", "pct_words_masked"] == 0
    assert by_method.loc["textwash-model", "pct_words_masked"] > 0
    assert by_method.loc["clear", f"trir_{STRONGEST}"] >= by_method.loc["spacy-ner", "trir_tfidf"]
    summary = report.summary()
    assert set(summary["trir"]["clear"]) >= {"tfidf", "bm25", STRONGEST, "pct_words_masked"}
    assert summary["settings"]["k"] == 3


def test_written_summary_names_persons_and_compares_humans_and_machine(finished_run):
    report = run_report(finished_run)
    text = " ".join(report.paragraphs)
    assert "Persons most at risk" in text
    assert "human risk" in text
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
