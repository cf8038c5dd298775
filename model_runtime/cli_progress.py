"""Progress bars of the library CLIs (anonymize, attacks, guard), in one home.

A bar goes to stderr only when a person watches it: `--quiet` or a stderr that is not a
terminal (a pipe, a log file, a job) silences every bar, ours and those of the libraries
underneath (transformers' "Loading weights", huggingface_hub's downloads).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO


def progress_wanted(*, quiet: bool, stream: TextIO | None = None) -> bool:
    """Return whether to draw progress bars: not --quiet, and the stream is a terminal."""
    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    return not quiet and bool(isatty and isatty())


def silence_library_bars(*, bars: bool) -> None:
    """Keep transformers' load reports off stderr, and its bars too unless `bars`."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.set_verbosity_error()
    if bars:
        hf_logging.enable_progress_bar()
    else:
        hf_logging.disable_progress_bar()


class StageBars:
    """One tqdm bar per stage for a `(stage, done, total)` progress callback."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.bars: dict[str, object] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        from tqdm import tqdm

        bar = self.bars.get(stage)
        if bar is None:
            bar = self.bars[stage] = tqdm(total=total, desc=stage, leave=True, file=self.stream)
        bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()
            del self.bars[stage]


def counting_bar(
    description: str, *, enabled: bool, stream: TextIO | None = None
) -> Callable[[int, int], None] | None:
    """Return a `(done, total)` callback drawing one bar, or None when bars are off."""
    if not enabled:
        return None
    stages = StageBars(stream)
    return lambda done, total: stages(description, done, total)
