"""The paper's published aggregates beside a study's own numbers."""

import json

import pandas as pd
import pytest

from intruder.analysis import paper
from intruder.analysis.report import run_all

PUBLISHED = """study,type,person,mean_cosine,sd_cosine,pct_identified,se_pct_identified
1,famous,ALL,0.41,0.36,18.25,1.93
1,famous,nora quill,0.25,0.29,4.65,3.25
2,famous,ALL,0.42,0.39,26.39,1.34
2,famous,nora quill,0.53,0.41,38.98,6.40
"""


@pytest.fixture
def data_dir(tmp_path):
    (tmp_path / "human_rates.csv").write_text(PUBLISHED)
    records = [{"id": f"quill_{i}", "person": "nora quill"} for i in range(4)]
    (tmp_path / "study2.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    (tmp_path / "study1.jsonl").write_text(json.dumps({"id": "famous_1_d_1_1"}) + "\n")
    return tmp_path


def _frames(external_ids):
    texts = pd.DataFrame(
        {
            "text_id": range(1, len(external_ids) + 1),
            "description_id": range(1, len(external_ids) + 1),
            "external_id": external_ids,
            "target_key": "nora",
            "target_name": "Nora Quill",
            "group": "famous",
            "original": "Nora Quill keeps a lighthouse.",
            "anonymized": "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 keeps a lighthouse.",
            "placeholders": [[] for _ in external_ids],
        }
    )
    judgments = pd.DataFrame(
        {
            "judgment_id": range(1, len(external_ids) + 1),
            "text_id": range(1, len(external_ids) + 1),
            "participant_id": 1,
            "self_identified": True,
            "guessed_name": "",
            "revealing_text": "",
            "other_knowledge": "",
            "cosine": [1.0, 0.0, 0.0, 0.0][: len(external_ids)],
            "identified": False,
            "token_set_ratio": 0.0,
            "surname_match": False,
        }
    )
    return judgments, texts


def test_study_with_the_papers_texts_gets_its_published_numbers_beside(data_dir):
    judgments, texts = _frames([f"quill_{i}" for i in range(4)])
    report = run_all(judgments, texts, 0.75, include_construct_loss=False, paper_dir=data_dir)
    assert report.paper_match == paper.PaperMatch(study=2, n_matched=4, n_texts=4)
    row = report.tables["rates_target_paper"].iloc[0]
    assert row["pct_identified"] == pytest.approx(25.0)
    assert row["paper_pct_identified"] == pytest.approx(38.98)
    assert row["paper_se_pct_identified"] == pytest.approx(6.40)
    group = report.tables["rates_group_paper"].iloc[0]
    assert group["paper_pct_identified"] == pytest.approx(26.39)
    assert report.summary()["paper_self_report_agreement_pct"] == 78.38


def test_study_with_other_texts_gets_no_paper_columns(data_dir):
    judgments, texts = _frames(["mine_1", "mine_2", "quill_1"])
    report = run_all(judgments, texts, 0.75, include_construct_loss=False, paper_dir=data_dir)
    assert report.paper_match is None
    assert "rates_target_paper" not in report.tables


def test_missing_paper_data_is_skipped_quietly(tmp_path):
    assert paper.load_paper_rates(tmp_path) is None
    assert paper.detect_paper_study(["quill_1"], tmp_path) is None
    judgments, texts = _frames(["quill_1", "quill_2"])
    report = run_all(judgments, texts, 0.75, include_construct_loss=False, paper_dir=tmp_path)
    assert "rates_target_paper" not in report.tables


@pytest.mark.shared_data
def test_published_rates_cover_tables_3_4_and_7(shared_data):
    published = paper.load_paper_rates(shared_data / "textwash_study")
    assert published is not None
    study1 = published[published["study"] == 1]
    assert set(study1.loc[study1["person"] == "ALL", "type"]) == {
        "famous",
        "semifamous",
        "fictitious",
    }
    assert (published["study"] == 2).sum() == 21  # overall + 20 persons (Table 7)


@pytest.mark.shared_data
def test_textwash_study2_ids_are_recognised(shared_data):
    folder = shared_data / "textwash_study"
    with (folder / "study2.jsonl").open() as handle:
        ids = [json.loads(line)["id"] for _, line in zip(range(20), handle, strict=False)]
    match = paper.detect_paper_study(ids, folder)
    assert match == paper.PaperMatch(study=2, n_matched=20, n_texts=20)


def test_paper_layouts_put_published_values_beside_the_studys(data_dir):
    from intruder.analysis.layouts import paper_layouts

    judgments, texts = _frames([f"quill_{i}" for i in range(4)])
    report = run_all(judgments, texts, 0.75, include_construct_loss=False, paper_dir=data_dir)
    layouts = paper_layouts(report)
    row = layouts["table4_7"].iloc[0].to_dict()
    assert row["Name"] == "Nora Quill"
    assert (row["% identified"], row["paper % identified"]) == (25.0, 38.98)
    assert list(layouts["table3"].columns) == [
        "Name",
        "M",
        "paper M",
        "SD",
        "paper SD",
        "% identified",
        "paper % identified",
        "SE % identified",
        "paper SE % identified",
    ]
    assert list(layouts["table9"].columns) == ["Variable", "M0", "SD0", "M1", "SD1", "d [95% CI]"]
