"""Every range of a setting a researcher chooses, in one table, with one refusal each.

A study's settings, an attack run's and a guard run's: the tables read them here (a model
field's validators, `Bound.validators`, and the check constraints that repeat the range in
the database), and so do the forms and the API's serializers (`Bound.field_kwargs`, or a
model form's `intruder.web.model_bounds.bounded_formfield`, which reads the validators) and
the start services (`Bound.holds`). All of them refuse a value outside with the same message
(`Bound.message`): a post to the API that bypasses the form meets the same words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.validators import MaxValueValidator, MinValueValidator

from attacks.budget import DEFAULT_RESAMPLES


@dataclass(frozen=True)
class Bound:
    """A numeric setting's range [low, high] and its default (None: no default)."""

    label: str
    low: Any  # int, or float for a share
    high: Any
    default: Any = None

    @property
    def message(self) -> str:
        """Return the one refusal of a value outside the range."""
        return f"{self.label} must lie between {self.low} and {self.high}"

    def holds(self, value: Any) -> bool:
        """Return whether `value` is a number in the range (a service's check: a script may
        pass anything)."""
        try:
            number = float(value)
        except (TypeError, ValueError):
            return False
        return self.low <= number <= self.high

    def field_kwargs(self) -> dict[str, Any]:
        """Return the range of a Django form or DRF serializer field, refusing with `message`."""
        messages = {"min_value": self.message, "max_value": self.message}
        return {"min_value": self.low, "max_value": self.high, "error_messages": messages}

    def validators(self) -> list[Any]:
        """Return a model field's validators of the range, refusing with `message`."""
        return [
            MinValueValidator(self.low, message=self.message),
            MaxValueValidator(self.high, message=self.message),
        ]


# A study's settings (`intruder.models.Study`).
ITEMS_PER_PARTICIPANT = Bound("texts per participant", 1, 200, default=10)
JUDGMENTS_PER_TEXT = Bound("judgments per text", 1, 100, default=3)
MIN_DESCRIPTION_CHARS = Bound("the shortest description", 0, 20_000, default=500)
# A day: a larger limit once overflowed the expiry sweep's date arithmetic.
TIME_LIMIT_MINUTES = Bound("the time limit in minutes", 1, 24 * 60, default=60)
IDENTIFICATION_THRESHOLD = Bound("the identification threshold", 0.0, 1.0, default=0.75)
ATTENTION_CHECKS = Bound("attention checks per intruder", 0, 5, default=0)
# Catch trials served to each intruder (of the study's; `intruder.evidence.catch_trials`):
# two, so that the flag can ask for two namings (one is an honest overclaim's risk).
CATCH_TRIALS = Bound("catch trials per intruder", 0, 10, default=2)

# A study run's (attack runs and guard runs, `intruder.risk.models.StudyRun`).
# k of the k-fold background: a fold needs another to learn from; more than 20 only slows.
FOLDS = Bound("the cross-validation folds", 2, 20, default=5)
# The seed column is a 32-bit integer on PostgreSQL.
SEED = Bound("the seed", 0, 2**31 - 1, default=0)
# b: descriptions known per candidate (attack runs' knowledge budget).
KNOWLEDGE_BUDGET = Bound("the knowledge budget", 1, 1000)
# R: draws of the b descriptions; fewer than `attacks.budget`'s default leave the draw's luck
# in the median rank (docs/decisions/knowledge-budget.md: "R >= 10").
RESAMPLES = Bound("resamples", DEFAULT_RESAMPLES, 50, default=DEFAULT_RESAMPLES)

# A guard run's (`guard.GuardConfig` checks its own: k >= 2, a budget share in (0, 1]).
# Rank 1 is re-identified; more than 1000 candidates is no study's.
RANK = Bound("the rank", 2, 1000)
GUARD_BUDGET = Bound("the masking budget", 0.01, 1.0)
