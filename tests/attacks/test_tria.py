"""TRIA end to end on made-up people with a tiny random BERT (seconds)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from attacks import AttackConfig, get_attack, load_attack, load_dataset, trir
from attacks.cli import main as cli_main
from attacks.curation import pretreat_background
from attacks.runner import run_attack, write_outputs
from attacks.tria.model import training_attention
from attacks.windows import split_sentences
from tests.attacks.builders import PEOPLE


@pytest.fixture(scope="module")
def tria_run(tmp_path_factory, tiny_bert_dir):
    """Fit TRIA once on the synthetic data and return (dataset, result, out_dir)."""
    from tests.attacks.builders import synthetic_frame

    tmp = tmp_path_factory.mktemp("tria")
    data = tmp / "synthetic.json"
    synthetic_frame().to_json(data, orient="records")
    config = AttackConfig(
        data_file_path=str(data),
        dev_set_column_name="dev_abstract",
        base_model_name=str(tiny_bert_dir),
        pretraining_epochs=1,
        pretraining_sliding_window="64-16",
        finetuning_epochs=12,
        finetuning_batch_size=8,
        finetuning_learning_rate=2e-3,
        finetuning_sliding_window="32-8",
        early_stopping_patience=0,
        # The random 64-wide rig needs its large unclipped steps to learn in 12 epochs.
        max_grad_norm=0.0,
        precision="fp32",
        cache_dir=str(tmp / "cache"),
    )
    dataset = load_dataset(None, config)
    result = run_attack(dataset, config, "tria")
    out_dir = write_outputs(result, tmp / "out")
    return dataset, result, out_dir


def test_tria_reidentifies_clear_texts(tria_run):
    _, result, _ = tria_run
    assert trir(result.predictions["clear_abstract"]).trir_pct == 100.0


def test_tria_falls_to_chance_on_fully_masked_texts(tria_run):
    _, result, _ = tria_run
    masked = result.predictions["masked_abstract"]
    # Identical masked inputs get one and the same prediction: exactly one hit out of n.
    assert len({p.predicted_name for p in masked}) == 1
    assert trir(masked).trir_pct == pytest.approx(100.0 / len(PEOPLE))


def test_predictions_carry_rank_probability_and_top_k(tria_run):
    _, result, _ = tria_run
    for prediction in result.predictions["clear_abstract"]:
        assert prediction.true_rank == 1
        assert 0.0 < prediction.true_prob <= 1.0
        assert len(prediction.top_k) == len(PEOPLE)
        assert prediction.top_k[0][0] == prediction.predicted_name
        probs = [prob for _, prob in prediction.top_k]
        assert probs == sorted(probs, reverse=True)


def test_run_writes_per_epoch_results_final_json_and_predictions(tria_run):
    _, result, out_dir = tria_run
    rows = (out_dir / "results.csv").read_text().splitlines()
    assert rows[0].startswith("epoch,train_loss,")
    assert len(rows) == 1 + len(result.history) == 13
    final = json.loads((out_dir / "final.json").read_text())
    assert final["trir"]["clear_abstract"]["accuracy"] == 100.0
    assert {"pretreatment", "pretraining", "finetuning"} <= set(final["stats"]["stages"])
    lines = (out_dir / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 3 * len(PEOPLE)  # clear, masked and dev columns


def test_saved_attack_scores_new_documents_without_retraining(tria_run, tmp_path):
    dataset, result, out_dir = tria_run
    attack = load_attack(out_dir / "model")
    clear = dataset.document_sets["clear_abstract"]
    predictions = attack.predict(clear.texts, top_k=2, true_names=clear.true_names)
    assert trir(predictions).trir_pct == 100.0
    assert [p.predicted_name for p in predictions] == [
        p.predicted_name for p in result.predictions["clear_abstract"]
    ]
    assert all(len(p.top_k) == 2 for p in predictions)


def test_cli_predict_writes_jsonl(tria_run, tmp_path):
    dataset, _, out_dir = tria_run
    docs = tmp_path / "docs.jsonl"
    clear = dataset.document_sets["clear_abstract"]
    docs.write_text(
        "\n".join(
            json.dumps({"doc_id": d, "text": t, "true_name": clear.true_names[d]})
            for d, t in clear.texts.items()
        )
    )
    out = tmp_path / "preds.jsonl"
    assert (
        cli_main(
            ["predict", "--model", str(out_dir / "model"), "--input", str(docs), "--out", str(out)]
        )
        == 0
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["predicted_name"] == r["true_name"] for r in rows)


def test_sentence_splitting_trains_and_predicts_every_document(tiny_config_values):
    values = {
        **tiny_config_values,
        "finetuning_sliding_window": "No",
        "use_additional_pretraining": False,
        "finetuning_epochs": 2,
    }
    config = AttackConfig.from_dict(values)
    dataset = load_dataset(None, config)
    result = run_attack(dataset, config, "tria")
    windowing = result.attack.stats["stages"]["windowing"]
    train_texts, _ = pretreat_background(dataset.background, config, None)
    background_sentences = sum(max(len(split_sentences(text)), 1) for text in train_texts)
    assert windowing["finetuning_windows"] == background_sentences
    for column, documents in dataset.document_sets.items():
        assert len(result.predictions[column]) == len(documents)


def test_progress_callback_reports_every_stage(tiny_config_values):
    config = AttackConfig.from_dict({**tiny_config_values, "finetuning_epochs": 1})
    dataset = load_dataset(None, config)
    seen: dict[str, tuple[int, int]] = {}
    attack = get_attack("tria", config)
    attack.fit(dataset.background, progress=lambda s, d, t: seen.__setitem__(s, (d, t)))
    assert {"curation", "ner_anonymization", "pretraining", "finetuning"} <= set(seen)
    assert all(done == total for done, total in seen.values())


def test_pretreatment_and_pretraining_are_cached_across_runs(tiny_config_values):
    config = AttackConfig.from_dict({**tiny_config_values, "finetuning_epochs": 1})
    dataset = load_dataset(None, config)
    first = get_attack("tria", config)
    first.fit(dataset.background)
    second = get_attack("tria", config)
    second.fit(dataset.background)
    assert first.stats["stages"]["pretraining"]["cached"] is False
    assert second.stats["stages"]["pretraining"]["cached"] is True
    assert Path(config.cache_dir, "pretreatment").is_dir()


def test_head_warmup_trains_the_mlm_head_alone(tiny_bert_dir, tmp_path):
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

    from attacks.tria.pretraining import mlm_head_parameters, pretrain_mlm
    from attacks.windows import build_windows

    model = AutoModelForMaskedLM.from_pretrained(tiny_bert_dir)
    head = {id(p) for p in mlm_head_parameters(model)}
    embeddings = model.get_input_embeddings().weight
    assert head and id(embeddings) not in head  # the tied decoder stays frozen with the encoder
    assert all(id(p) not in head for p in model.base_model.parameters())

    tokenizer = AutoTokenizer.from_pretrained(tiny_bert_dir)
    windows = build_windows(tokenizer, ["an actor born in Lyon who plays in films"] * 4, 16, 4)
    config = AttackConfig(
        base_model_name=str(tiny_bert_dir),
        pretraining_epochs=0,
        pretraining_head_warmup_epochs=2,
        precision="fp32",
        cache_dir=str(tmp_path / "cache"),
    )
    encoder_dir = pretrain_mlm(str(tiny_bert_dir), tokenizer, windows, config, torch.device("cpu"))
    warmed, base = AutoModel.from_pretrained(encoder_dir), AutoModel.from_pretrained(tiny_bert_dir)
    for a, b in zip(warmed.parameters(), base.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_training_attention_lever_changes_speed_not_results(tiny_bert_dir):
    from transformers import AutoModelForSequenceClassification

    assert training_attention(torch.device("cpu")) == "eager"
    assert training_attention(torch.device("cuda")) == "sdpa"
    models = {
        impl: AutoModelForSequenceClassification.from_pretrained(
            tiny_bert_dir, num_labels=3, attn_implementation=impl
        ).eval()
        for impl in ("eager", "sdpa")
    }
    models["sdpa"].load_state_dict(models["eager"].state_dict())
    ids = torch.randint(1000, 2000, (2, 12))
    mask = torch.ones_like(ids)
    mask[1, 8:] = 0  # a padded row: the case where CPU SDPA takes its slow path
    eager, sdpa = (m(input_ids=ids, attention_mask=mask).logits for m in models.values())
    torch.testing.assert_close(eager, sdpa, rtol=1e-4, atol=1e-5)
