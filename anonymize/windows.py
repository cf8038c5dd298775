"""Split long token sequences into overlapping model windows and stitch predictions back.

A person description is usually shorter than one window, but any text may be longer. Every
token lands in at least one window, and where windows overlap each token takes its
prediction from the window in which it sits farthest from an edge (most context both sides).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Window:
    """A [start, end) slice of a document's tokens, and the part of it whose predictions count."""

    start: int
    end: int
    keep_start: int
    keep_end: int


def covering_windows(n_tokens: int, window_size: int, stride: int) -> list[Window]:
    """Return overlapping windows covering `n_tokens` tokens, each at most `window_size` long.

    `stride` is how far each window moves; the overlap (window_size - stride) is split so
    that each token is kept from exactly one window, the one where it is most central.
    """
    if window_size < 1 or not 0 < stride <= window_size:
        raise ValueError(f"need 0 < stride <= window_size, got {stride=} {window_size=}")
    if n_tokens <= window_size:
        return [Window(0, n_tokens, 0, n_tokens)]
    starts = [*range(0, n_tokens - window_size, stride), n_tokens - window_size]
    windows = []
    for position, start in enumerate(starts):
        end = start + window_size
        keep_start = 0 if position == 0 else (windows[-1].end + start) // 2
        windows.append(Window(start, end, keep_start, end))
        if position:
            previous = windows[-2]
            windows[-2] = Window(previous.start, previous.end, previous.keep_start, keep_start)
    return windows


def stitch_window_outputs(
    n_tokens: int, windows: list[Window], outputs: list[np.ndarray]
) -> np.ndarray:
    """Return one row per token, taken from the window that keeps it."""
    if not windows:
        return np.zeros((0, 0), dtype=np.float32)
    stitched = np.zeros((n_tokens, outputs[0].shape[-1]), dtype=np.float32)
    for window, output in zip(windows, outputs, strict=True):
        rows = slice(window.keep_start - window.start, window.keep_end - window.start)
        stitched[window.keep_start : window.keep_end] = output[rows]
    return stitched
