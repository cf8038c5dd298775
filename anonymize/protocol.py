"""The interface the web side needs of an anonymizer, shared by the real one and test fakes.

`anonymize.Anonymizer` satisfies it; so does the fake the tests install (which masks without
a model). Callers type against `TextAnonymizer`, not `Any`, so a fake that drifts from the
real engine's interface is a type error rather than a surprise in production.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from anonymize.model import AnonymizationResult


@runtime_checkable
class TextAnonymizer(Protocol):
    """Find PSI in texts and replace it; `threshold` is the default P(PSI) cut-off."""

    model_version: str
    threshold: float

    def anonymize(self, text: str, *, threshold: float | None = None) -> AnonymizationResult:
        """Return one text anonymized (threshold None = the anonymizer's own)."""
        ...

    def anonymize_many(
        self,
        texts: Sequence[str],
        batch_size: int = 16,
        progress: Callable[[int, int], None] | None = None,
        *,
        threshold: float | None = None,
    ) -> list[AnonymizationResult]:
        """Return the texts anonymized, in order; `progress(done, total)` after each chunk."""
        ...
