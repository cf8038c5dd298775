"""The ranges of a study run's settings (attack runs and guard runs): the one home of each.

The tables (`StudyRun`: default and check constraint), the forms, the API's serializers and
the start services read them here, and all of them refuse a value outside with the same
message (`Bound.message`): before, "2 to 20, default 5" was written in five places.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attacks.budget import DEFAULT_RESAMPLES


@dataclass(frozen=True)
class Bound:
    """An integer setting's range [low, high] and its default (None: no default)."""

    label: str
    low: int
    high: int
    default: int | None = None

    @property
    def message(self) -> str:
        """Return the one refusal of a value outside the range."""
        return f"{self.label} must lie between {self.low} and {self.high}"

    def holds(self, value: int) -> bool:
        return self.low <= int(value) <= self.high

    def field_kwargs(self) -> dict[str, Any]:
        """Return the range of a Django form or DRF serializer field, refusing with `message`."""
        messages = {"min_value": self.message, "max_value": self.message}
        return {"min_value": self.low, "max_value": self.high, "error_messages": messages}


# k of the k-fold background: a fold needs another to learn from; more than 20 only slows.
FOLDS = Bound("the cross-validation folds", 2, 20, default=5)
# The seed column is a 32-bit integer on PostgreSQL.
SEED = Bound("the seed", 0, 2**31 - 1, default=0)
# b: descriptions known per candidate (attack runs' knowledge budget).
KNOWLEDGE_BUDGET = Bound("the knowledge budget", 1, 1000)
# R: draws of the b descriptions; fewer than `attacks.budget`'s default leave luck in the rate.
RESAMPLES = Bound("resamples", DEFAULT_RESAMPLES, 50, default=DEFAULT_RESAMPLES)
