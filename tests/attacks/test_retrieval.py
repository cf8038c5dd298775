"""Cheap attacks (BM25, TF-IDF, dense) share TRIA's outputs and re-identify clear texts."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from attacks import AttackConfig, get_attack, load_attack, load_dataset, trir
from attacks.cli import main as cli_main
from attacks.config import ConfigError
from attacks.metrics import TRIRResult
from attacks.prediction import Prediction
from attacks.runner import attack_names
from tests.attacks.builders import PEOPLE


# dense loads the real sentence encoder: slow.
@pytest.mark.parametrize("name", ["bm25", "tfidf", pytest.param("dense", marks=pytest.mark.slow)])
def test_retrieval_attack_reidentifies_clear_texts_and_round_trips(
    name: str, synthetic_json: Path, tmp_path: Path
):
    config = AttackConfig(cache_dir=str(tmp_path / "cache"))
    dataset = load_dataset(synthetic_json, config)
    attack = get_attack(name, config)
    attack.fit(dataset.background)
    clear = dataset.document_sets["clear_abstract"]
    predictions = attack.predict(clear.texts, top_k=3, true_names=clear.true_names)
    assert trir(predictions).trir_pct == 100.0
    assert all(p.true_rank == 1 and len(p.top_k) == 3 for p in predictions)

    masked = dataset.document_sets["masked_abstract"]
    masked_predictions = attack.predict(masked.texts, true_names=masked.true_names)
    assert len({p.predicted_name for p in masked_predictions}) == 1

    attack.save(tmp_path / "model")
    reloaded = load_attack(tmp_path / "model")
    again = reloaded.predict(clear.texts, top_k=3, true_names=clear.true_names)
    assert [[n for n, _ in p.top_k] for p in again] == [
        [n for n, _ in p.top_k] for p in predictions
    ]
    assert [p.true_prob for p in again] == pytest.approx([p.true_prob for p in predictions])


def test_cli_run_writes_results_final_and_predictions(synthetic_json: Path, tmp_path: Path):
    config = tmp_path / "config.json"
    AttackConfig(data_file_path=str(synthetic_json), cache_dir=str(tmp_path / "c")).to_json(config)
    out = tmp_path / "run"
    assert cli_main(["run", "--config", str(config), "--attack", "bm25", "--out", str(out)]) == 0
    for name in ("results.csv", "final.json", "predictions.jsonl", "predictions.csv"):
        assert (out / name).is_file()
    assert (out / "model" / "attack.json").is_file()


def test_cli_runs_several_attacks_and_adds_the_strongest(synthetic_json: Path, tmp_path: Path):
    config = tmp_path / "config.json"
    AttackConfig(data_file_path=str(synthetic_json), cache_dir=str(tmp_path / "c")).to_json(config)
    out = tmp_path / "run"
    args = ["run", "--config", str(config), "--attack", "tfidf,bm25", "--out", str(out)]
    assert cli_main([*args, "--no-progress"]) == 0
    final = json.loads((out / "final.json").read_text())
    by_attack = final["trir_by_attack"]
    assert set(by_attack) == {"tfidf", "bm25", "strongest"}
    for column, value in by_attack["strongest"].items():
        assert value >= max(by_attack["tfidf"][column], by_attack["bm25"][column])
    assert by_attack["strongest"]["clear_abstract"] == 100.0
    assert (out / "tfidf" / "final.json").is_file() and (out / "bm25" / "final.json").is_file()
    rows = list(csv.DictReader((out / "reidentification.csv").open()))
    clear = [r for r in rows if r["column"] == "clear_abstract"]
    assert len(clear) == len(PEOPLE)
    assert all(r["strongest"] == "1" and r["reidentified_by"] for r in clear)


def test_attack_names_expand_all_with_tria_last():
    assert attack_names("all")[-1] == "tria"
    assert set(attack_names("all")) == {"tria", "bm25", "tfidf", "dense"}
    assert attack_names("bm25, tfidf,bm25") == ["bm25", "tfidf"]
    with pytest.raises(ConfigError, match="unknown attack"):
        attack_names("tfidf,lda")


def test_trir_reports_cap_for_individuals_absent_from_background():
    predictions = [
        Prediction("a", "Ann", "Ann", 1, 0.9),
        Prediction("b", "Bob", "Ann", 2, 0.1),
        Prediction("c", "Zed", "Ann", None, None),  # no background for Zed
        Prediction("d", None, "Ann", None, None),  # unlabelled: ignored
    ]
    assert trir(predictions) == TRIRResult(
        trir_pct=pytest.approx(100 / 3),
        n=3,
        correct=1,
        n_absent=1,
        cap=pytest.approx(200 / 3),
        mean_true_rank=1.5,
    )
    # Result files and the Django side read TRIR under the reference's key.
    assert trir(predictions).to_dict()["accuracy"] == pytest.approx(100 / 3)


def test_absent_individual_gets_no_rank(synthetic_json: Path, tmp_path: Path):
    config = AttackConfig(cache_dir=str(tmp_path / "cache"))
    dataset = load_dataset(synthetic_json, config)
    names = list(PEOPLE)
    background = {n: t for n, t in dataset.background.items() if n != names[0]}
    attack = get_attack("tfidf", config)
    attack.fit(background)
    clear = dataset.document_sets["clear_abstract"]
    result = trir(attack.predict(clear.texts, true_names=clear.true_names))
    assert result.n_absent == 1
    assert result.cap == 75.0
    assert result.trir_pct == 75.0


def test_unknown_attack_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown attack 'bert'"):
        get_attack("bert")


def test_tfidf_shared_terms_sum_to_the_cosine(synthetic_json: Path, tmp_path: Path):
    config = AttackConfig(cache_dir=str(tmp_path / "cache"))
    dataset = load_dataset(synthetic_json, config)
    attack = get_attack("tfidf", config)
    attack.fit(dataset.background)
    text = "the glassblower raced sled dogs on the glacier"
    name = "Orlena Vasquith"
    terms = attack.shared_terms(text, name, top=1000)
    cosine = attack._scores(attack._pretreat([text], None), None)[0][attack.names.index(name)]
    assert sum(v for _, v in terms) == pytest.approx(cosine)
    assert [v for _, v in terms] == sorted((v for _, v in terms), reverse=True)
    assert "glassblower" in {term for term, _ in terms}
    with pytest.raises(KeyError):
        attack.shared_terms(text, "Nobody Known")


def test_bm25_shared_terms_sum_to_the_score(synthetic_json: Path, tmp_path: Path):
    """BM25 is additive over the query's words: the shares are exact, the words repeated in
    the text counted each time (issue 40: a BM25-only flag had no words to show)."""
    config = AttackConfig(cache_dir=str(tmp_path / "cache"))
    dataset = load_dataset(synthetic_json, config)
    attack = get_attack("bm25", config)
    attack.fit(dataset.background)
    text = "the glassblower raced sled dogs on the glacier, a glassblower all winter"
    name = "Orlena Vasquith"
    words = attack.shared_terms(text, name, top=1000)
    score = attack._scores(attack._pretreat([text], None), None)[0][attack.names.index(name)]
    positive = sum(v for _, v in words)
    # Words with a non-positive share (none in this background) are left out of the list.
    assert positive == pytest.approx(score) and score > 0
    assert [v for _, v in words] == sorted((v for _, v in words), reverse=True)
    assert "glassblower" in {word for word, _ in words}
    with pytest.raises(KeyError):
        attack.shared_terms(text, "Nobody Known")


def test_tfidf_shared_terms_follow_a_refit():
    """The term names kept between calls are those of the latest fit's vocabulary."""
    attack = get_attack("tfidf", AttackConfig(use_document_curation=False, cache_dir=""))
    attack.config.anonymize_background_knowledge = False
    attack.fit({"p": "glassblower quellmar", "q": "beekeeper marsh"})
    assert [t for t, _ in attack.shared_terms("glassblower", "p")] == ["glassblower"]
    attack.fit({"p": "cartographer trench", "q": "beekeeper marsh"})
    assert [t for t, _ in attack.shared_terms("cartographer", "p")] == ["cartographer"]
