"""Risk-guided anonymization: mask until the machine attacker can no longer rank the person.

Sits on top of both plain libraries (it imports `anonymize` and `attacks`; neither imports
it), and like them it never imports Django. `guard_texts` takes anonymized texts (original
text plus spans) with their target persons and fitted attacks, and adds spans of category
`anonymize.labels.GUARD_CATEGORY` until every attack ranks the person at k or worse.
"""

from guard.greedy import (
    GuardConfig,
    GuardItem,
    GuardResult,
    fit_attacks,
    guard_document,
    guard_texts,
    ordinal,
)
from guard.scorers import DEFAULT_ATTACKS

__all__ = [
    "DEFAULT_ATTACKS",
    "GuardConfig",
    "GuardItem",
    "GuardResult",
    "fit_attacks",
    "guard_document",
    "guard_texts",
    "ordinal",
]
