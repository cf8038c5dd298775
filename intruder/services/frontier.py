"""Utility beside privacy: each method's TPI, computed once when an attack run finishes.

TPI (`anonymize.tpi`, paper 002) needs every method's texts, and the baselines' texts
(spaCy masking, the model at a threshold) exist only inside the run, so the run computes it
and keeps it in `AttackRun.summary["tpi"]` for the report's frontier section.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

# One scorer per worker process: spaCy loads once, and each original's term ICs (keyed by
# the text itself, so never stale) are computed once for every later run on the same texts.
_SCORER_LOCK = threading.Lock()


@cache
def _scorer() -> Any:
    from anonymize.information import information_source
    from anonymize.tpi import TPIScorer

    return TPIScorer(information_source())


def method_tpi(
    originals: Mapping[int, str], texts_by_method: Mapping[str, Mapping[int, str]]
) -> dict[str, Any]:
    """Return {"metric", "ic_source", "methods": {method: TPI %}, "n": {method: texts}}.

    The offline IC source (wordfreq: `TPI-wordfreq`, docs/decisions/tpi.md); a masked word is
    an original word the method's text does not keep unchanged.
    """
    from anonymize.tpi import masked_ranges_from_texts

    scorer = _scorer()
    values: dict[str, float | None] = {}
    counts: dict[str, int] = {}
    for method, texts in texts_by_method.items():
        items: Iterable = (
            (str(i), originals[i], masked_ranges_from_texts(originals[i], text))
            for i, text in texts.items()
        )
        with _SCORER_LOCK:  # a spaCy pipeline is not safe to share between threads
            result = scorer.corpus(items)
        values[method] = None if result.tpi is None else round(100.0 * result.tpi, 2)
        counts[method] = len(result.documents) - result.undefined
    return {
        "metric": scorer.source.metric,
        "ic_source": scorer.source.name,
        "methods": values,
        "n": counts,
    }
