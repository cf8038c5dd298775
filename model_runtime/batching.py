"""Length-grouped order for prediction batches (the padding itself is ``tokenizer.pad``'s)."""

from __future__ import annotations

from collections.abc import Sequence


def length_order(lengths: Sequence[int], *, longest_first: bool = False) -> list[int]:
    """Return the indices of ``lengths`` sorted by length (ties keep their order).

    Consecutive batches of this order hold sequences of similar length, so each batch pads
    to little more than its own longest sequence. Callers put results back by index.
    """
    sign = -1 if longest_first else 1
    return sorted(range(len(lengths)), key=lambda i: sign * lengths[i])
