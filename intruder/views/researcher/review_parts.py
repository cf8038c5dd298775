"""What risk shows on the review pages, registered by risk so that these pages import none
of it (`intruder.risk.review_parts`, registered when the app is ready): the guard's panel on
the review list (its context, and its row per text) and the texts the pre-release risk check
flags on the bulk release's confirmation page. Without them the pages show neither.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from intruder.models import Study


def _no_panel(study: Study) -> tuple[dict[str, Any], Mapping[int, Any]]:
    return {}, {}


def _no_flags(study: Study) -> Collection[int]:
    return ()


@dataclass
class ReviewParts:
    """`guard_panel(study)`: (the list page's context, text id -> its guard row);
    `machine_flags(study)`: the ids of the texts the machine ranks first."""

    guard_panel: Callable[[Study], tuple[dict[str, Any], Mapping[int, Any]]] = _no_panel
    machine_flags: Callable[[Study], Collection[int]] = _no_flags


PARTS = ReviewParts()


def register(parts: ReviewParts) -> None:
    """Install risk's parts of the review pages (once, when the app is ready)."""
    PARTS.guard_panel, PARTS.machine_flags = parts.guard_panel, parts.machine_flags
