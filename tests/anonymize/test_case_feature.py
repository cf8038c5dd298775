"""Capitalisation as token type ids: classes, encoding, model surgery and inference."""

from __future__ import annotations

import pytest

from anonymize.encoding import CASE_LOWER, CASE_TITLE, CASE_UPPER, encode_text, word_case
from tests.tiny_models import tiny_tagger


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("lisbon", CASE_LOWER),
        ("Lisbon", CASE_TITLE),
        ("McLaren", CASE_TITLE),
        ("I", CASE_TITLE),
        ("USA", CASE_UPPER),
        ("1981", CASE_LOWER),
        (",", CASE_LOWER),
        ("iPhone", CASE_LOWER),
    ],
)
def test_word_case_classes(word, expected):
    assert word_case(word) == expected


def test_every_subword_carries_the_case_of_its_word(minilm_tokenizer):
    encoded = encode_text(minilm_tokenizer, "Quillfeather met the NASA crew in lisbon.")
    tokens = minilm_tokenizer.convert_ids_to_tokens(encoded.input_ids)
    assert len(encoded.case_ids) == len(tokens)
    by_token = list(zip(tokens, encoded.case_ids, strict=True))
    quill = [case for token, case in by_token[: tokens.index("met")]]
    assert len(quill) > 1 and set(quill) == {CASE_TITLE}  # "##feather" too, not only "quill"
    assert dict(by_token)["nasa"] == CASE_UPPER
    assert dict(by_token)["lisbon"] == CASE_LOWER
    assert encode_text(minilm_tokenizer, "").case_ids == []


def _tiny_bert(minilm_tokenizer):
    return tiny_tagger(minilm_tokenizer.vocab_size).eval()


def test_new_case_embeddings_start_as_copies_so_predictions_do_not_change(minilm_tokenizer):
    import torch

    from anonymize.train import add_case_embeddings

    model = _tiny_bert(minilm_tokenizer)
    input_ids = torch.tensor([[101, 2000, 3000, 4000, 102]])
    before = model(input_ids=input_ids).logits
    add_case_embeddings(model)
    after = model(input_ids=input_ids, token_type_ids=torch.tensor([[0, 1, 2, 1, 0]])).logits
    assert model.config.case_feature is True and model.config.type_vocab_size == 3
    assert torch.allclose(before, after, atol=1e-6)


def test_saved_case_model_reads_capitalisation_at_inference(minilm_tokenizer, tmp_path):
    import torch

    from anonymize.model import Anonymizer
    from anonymize.train import add_case_embeddings

    model = _tiny_bert(minilm_tokenizer)
    add_case_embeddings(model)
    with torch.no_grad():  # make Title case matter, as training would (not a constant shift,
        # which the embedding LayerNorm would remove)
        model.bert.embeddings.token_type_embeddings.weight[1] += torch.randn(32)
    model.save_pretrained(tmp_path)
    minilm_tokenizer.save_pretrained(tmp_path)

    anonymizer = Anonymizer.load(tmp_path)
    assert anonymizer.case_feature
    lower, title = anonymizer.predict_words(["we met in lisbon", "we met in Lisbon"])
    assert lower.probabilities.shape == title.probabilities.shape
    assert not abs(lower.probabilities[-1] - title.probabilities[-1]).max() < 1e-4
    assert abs(lower.probabilities[0] - title.probabilities[0]).max() < 1e-4  # "we" unchanged


def test_uncased_model_gets_no_token_type_ids(fake_anonymizer_factory):
    fake = fake_anonymizer_factory({"lisbon": "LOCATION"})
    assert not fake.case_feature
    assert fake.anonymize("We met in Lisbon.").text == "We met in LOCATION_1."
