"""Self-report agreement and leakage n-grams on tiny hand-made tables."""

import pandas as pd
import pytest

from intruder.analysis.agreement import self_report_agreement
from intruder.analysis.leakage import content_tokens, leakage_ngrams, ngrams, paper_layout
from tests.intruder.analysis_fixtures import THRESHOLD, fixture_judgments, fixture_texts


def test_agreement_counts_match_hand_computation():
    row = self_report_agreement(fixture_judgments(), fixture_texts(), THRESHOLD).iloc[0]
    # Agreeing judgments: t1 1 of 2, t2 2 of 3, t3 1, t4 2, t6 1 of 2 -> 7 of 10.
    assert (row["n_judgments"], row["n_agree"]) == (10, 7)
    assert row["pct_agreement"] == pytest.approx(70.0)
    assert (row["self_yes_scored_yes"], row["self_yes_scored_no"]) == (3, 2)
    assert (row["self_no_scored_yes"], row["self_no_scored_no"]) == (1, 4)


def test_agreement_per_group():
    table = self_report_agreement(fixture_judgments(), fixture_texts(), THRESHOLD, by="group")
    famous, fictitious = table.to_dict(orient="records")
    assert (famous["n_judgments"], famous["n_agree"]) == (6, 4)
    assert (fictitious["n_judgments"], fictitious["n_agree"]) == (4, 3)


def test_stopwords_go_before_ngrams_are_formed():
    tokens = content_tokens("She married a Spice Girl.")
    assert tokens == ["married", "spice", "girl"]
    assert ngrams(tokens) == [
        "married",
        "spice",
        "girl",
        "married_spice",
        "spice_girl",
        "married_spice_girl",
    ]


def test_tokens_keep_initials_and_apostrophes():
    assert content_tokens("J.K. Rowling's books; Formula 1!") == [
        "j.k",
        "rowling's",
        "books",
        "formula",
        "1",
    ]


def _leakage_judgments() -> pd.DataFrame:
    judgments = fixture_judgments()
    answers = {
        1: ("She married a Spice Girl.", ""),  # t1, cosine 1.0: identified
        2: ("", "A singer, I think."),  # t1, cosine 0.5: not identified
        6: ("Married to the spice girl, plays football", ""),  # t3, 0.9: identified
        3: ("", "a singer with ginger hair"),  # t2, 0.2
        7: ("guessed", "nothing"),  # t4 (Bo), 0.1: revealing text of a failure is ignored
    }
    for judgment_id, (revealing, other) in answers.items():
        index = judgments.index[judgments["judgment_id"] == judgment_id][0]
        judgments.loc[index, ["revealing_text", "other_knowledge"]] = [revealing, other]
    return judgments


def test_revealing_ngrams_of_successful_identifications_are_ranked_by_count():
    table = leakage_ngrams(_leakage_judgments(), fixture_texts(), THRESHOLD, "identified", k=6)
    ann = table[table["target_key"] == "ann"]
    # married, spice, girl, married_spice, spice_girl, married_spice_girl occur twice each;
    # plays, football and the rest once. Ties: unigrams first, then alphabetical.
    assert ann["ngram"].tolist() == [
        "girl",
        "married",
        "spice",
        "married_spice",
        "spice_girl",
        "married_spice_girl",
    ]
    assert ann["count"].tolist() == [2] * 6
    assert ann["n"].tolist() == [1, 1, 1, 2, 2, 3]
    assert set(ann["n_answers"]) == {2}
    assert "bo" not in set(table["target_key"])  # Bo's only revealing text was a failure


def test_other_knowledge_ngrams_come_from_unsuccessful_judgments_only():
    table = leakage_ngrams(_leakage_judgments(), fixture_texts(), THRESHOLD, "not_identified")
    ann = table[table["target_key"] == "ann"].set_index("ngram")
    assert ann.loc["singer", "count"] == 2
    assert ann.loc["singer", "n_answers"] == 2
    assert "ginger_hair" in ann.index and "think" in ann.index
    assert "married" not in ann.index
    bo = table[table["target_key"] == "bo"]
    assert bo["ngram"].tolist() == ["nothing"]


def test_paper_layout_joins_ngrams_per_person():
    table = leakage_ngrams(_leakage_judgments(), fixture_texts(), THRESHOLD, "identified", k=3)
    assert paper_layout(table).to_dict(orient="records") == [
        {"Name": "Ann Lee", "Top n-grams": "girl, married, spice"}
    ]
