"""Covering windows cover every token once; stitched predictions equal one long window."""

from __future__ import annotations

import numpy as np
import pytest

from anonymize.windows import covering_windows, stitch_window_outputs


@pytest.mark.parametrize("n_tokens", [0, 1, 7, 8, 9, 30, 101])
@pytest.mark.parametrize(("window_size", "stride"), [(8, 8), (8, 6), (8, 1), (16, 12)])
def test_every_token_is_kept_from_exactly_one_window(n_tokens, window_size, stride):
    windows = covering_windows(n_tokens, window_size, stride)
    kept = np.zeros(n_tokens, dtype=int)
    for window in windows:
        assert window.end - window.start <= window_size
        assert window.start <= window.keep_start <= window.keep_end <= window.end
        kept[window.keep_start : window.keep_end] += 1
    assert kept.tolist() == [1] * n_tokens


def test_overlapping_tokens_come_from_the_window_where_they_are_central():
    windows = covering_windows(12, 8, 4)
    # Tokens 4..7 sit in both windows; the first half goes to window 0, the rest to window 1.
    assert [(w.start, w.end, w.keep_start, w.keep_end) for w in windows] == [
        (0, 8, 0, 6),
        (4, 12, 6, 12),
    ]
    outputs = [np.full((8, 1), index, dtype=np.float32) for index in range(len(windows))]
    stitched = stitch_window_outputs(12, windows, outputs)
    assert stitched[:, 0].tolist() == [0] * 6 + [1] * 6


@pytest.mark.parametrize(("window_size", "stride"), [(0, 1), (8, 0), (8, 9)])
def test_invalid_window_settings_are_rejected(window_size, stride):
    with pytest.raises(ValueError):
        covering_windows(10, window_size, stride)
