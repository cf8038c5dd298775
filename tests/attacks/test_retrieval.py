"""Cheap attacks (BM25, TF-IDF, dense) share TRIA's outputs and re-identify clear texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from attacks import TRIAConfig, get_attack, load_attack, load_dataset, trir
from attacks.base import Prediction
from attacks.cli import main as cli_main
from attacks.metrics import TRIRResult
from tests.attacks.builders import PEOPLE


@pytest.mark.parametrize("name", ["bm25", "tfidf", "dense"])
def test_retrieval_attack_reidentifies_clear_texts_and_round_trips(
    name: str, synthetic_json: Path, tmp_path: Path
):
    config = TRIAConfig(cache_dir=str(tmp_path / "cache"))
    dataset = load_dataset(synthetic_json, config)
    attack = get_attack(name, config)
    attack.fit(dataset.background)
    clear = dataset.document_sets["clear_abstract"]
    predictions = attack.predict(clear.texts, top_k=3, true_names=clear.true_names)
    assert trir(predictions).accuracy == 100.0
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
    TRIAConfig(data_file_path=str(synthetic_json), cache_dir=str(tmp_path / "c")).to_json(config)
    out = tmp_path / "run"
    assert cli_main(["run", "--config", str(config), "--attack", "bm25", "--out", str(out)]) == 0
    for name in ("results.csv", "final.json", "predictions.jsonl", "predictions.csv"):
        assert (out / name).is_file()
    assert (out / "model" / "attack.json").is_file()


def test_trir_reports_cap_for_individuals_absent_from_background():
    predictions = [
        Prediction("a", "Ann", "Ann", 1, 0.9),
        Prediction("b", "Bob", "Ann", 2, 0.1),
        Prediction("c", "Zed", "Ann", None, None),  # no background for Zed
        Prediction("d", None, "Ann", None, None),  # unlabelled: ignored
    ]
    assert trir(predictions) == TRIRResult(
        accuracy=pytest.approx(100 / 3),
        n=3,
        correct=1,
        n_absent=1,
        cap=pytest.approx(200 / 3),
        mean_true_rank=1.5,
    )


def test_absent_individual_gets_no_rank(synthetic_json: Path, tmp_path: Path):
    config = TRIAConfig(cache_dir=str(tmp_path / "cache"))
    dataset = load_dataset(synthetic_json, config)
    names = list(PEOPLE)
    background = {n: t for n, t in dataset.background.items() if n != names[0]}
    attack = get_attack("tfidf", config)
    attack.fit(background)
    clear = dataset.document_sets["clear_abstract"]
    result = trir(attack.predict(clear.texts, true_names=clear.true_names))
    assert result.n_absent == 1
    assert result.cap == 75.0
    assert result.accuracy == 75.0


def test_unknown_attack_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown attack 'bert'"):
        get_attack("bert")
