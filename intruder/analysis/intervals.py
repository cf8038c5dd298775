"""Rates with their n and a Wilson score interval, the form every rate of the human analyses
and of the risk report takes (statsmodels.stats.proportion.proportion_confint, "wilson")."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

CONFIDENCE = 0.95


@dataclass
class Rate:
    """k of n, as a percent with its Wilson interval."""

    k: int
    n: int
    pct: float | None
    ci_low: float | None
    ci_high: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        """Return e.g. '25.0 % (95 % CI 11.2 to 46.9, 6 of 24)'."""
        if self.pct is None:
            return f"n/a (n = {self.n})"
        return (
            f"{self.pct:.1f} % (95 % CI {self.ci_low:.1f} to {self.ci_high:.1f}, "
            f"{self.k} of {self.n})"
        )


def wilson(k: int, n: int, confidence: float = CONFIDENCE) -> Rate:
    """Return k of n as a percent with its Wilson score interval (None for n = 0)."""
    from statsmodels.stats.proportion import proportion_confint

    k, n = int(k), int(n)
    if n <= 0:
        return Rate(k=0, n=0, pct=None, ci_low=None, ci_high=None)
    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    return Rate(k=k, n=n, pct=100.0 * k / n, ci_low=100.0 * low, ci_high=100.0 * high)
