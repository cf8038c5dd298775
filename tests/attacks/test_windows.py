"""Sliding windows and length-bucketed batches."""

from __future__ import annotations

import itertools
import random

import pytest

from attacks.windows import batch_indices, padding_ratio, sliding_windows


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


def test_bucketing_removes_most_padding_and_keeps_every_window():
    rng = random.Random(0)
    lengths = [rng.randint(5, 100) for _ in range(1000)]
    plain = batch_indices(lengths, 16, shuffle=True, bucketing=False, rng=random.Random(1))
    bucketed = batch_indices(lengths, 16, shuffle=True, bucketing=True, rng=random.Random(1))
    assert sorted(i for b in bucketed for i in b) == list(range(1000))
    assert padding_ratio(lengths, bucketed) < 0.05 < padding_ratio(lengths, plain)
