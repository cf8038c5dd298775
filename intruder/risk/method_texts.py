"""The text of each description under each method an attack run attacks.

Stored methods (the model's output, imported Textwash texts, researcher edits) are read from
`AnonymizedText`; the baselines (`clear`, `spacy-ner`, `model@T`, `intruder.risk.methods`)
are made on the fly, when first asked, and never stored or served.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from anonymize.baseline_spacy import SpacyBaseline
from intruder.models import AnonymizedText, Description
from intruder.risk.methods import CLEAR, SPACY_NER, is_baseline, model_threshold
from intruder.services.anonymization import get_anonymizer

if TYPE_CHECKING:
    from anonymize import TextAnonymizer


class MethodTexts:
    """The text of each description under each method; baselines are made when first asked."""

    def __init__(
        self, descriptions: list[Description], anonymizer: TextAnonymizer | None = None
    ) -> None:
        self.descriptions = {d.pk: d for d in descriptions}
        self.anonymizer = anonymizer
        self._cache: dict[str, dict[int, tuple[str, int | None]]] = {}
        self._stored: dict[str, dict[int, tuple[str, int]]] = {}
        for text in AnonymizedText.objects.filter(description__in=descriptions).only(
            "pk", "description_id", "method", "text"
        ):
            self._stored.setdefault(text.method, {})[text.description_id] = (text.text, text.pk)

    def available(self, method: str) -> set[int]:
        """Return the descriptions that have a text under `method`."""
        if method in self._stored:
            return set(self._stored[method])
        if is_baseline(method):
            return set(self.descriptions)
        return set()

    def raw(self, method: str, ids: Iterable[str]) -> dict[str, str]:
        """Return text id (a description id as a string) -> text under `method`: the texts
        `attacks.crossval.attack_cells` asks for."""
        return {str(i): text for i, (text, _) in self.texts(method, map(int, ids)).items()}

    def texts(self, method: str, ids: Iterable[int]) -> dict[int, tuple[str, int | None]]:
        """Return description id -> (text, stored AnonymizedText id or None)."""
        ids = [i for i in ids if i in self.available(method)]
        if method in self._stored:
            return {i: self._stored[method][i] for i in ids}
        cache = self._cache.setdefault(method, {})
        missing = [i for i in ids if i not in cache]
        if missing:
            originals = [self.descriptions[i].text for i in missing]
            for i, text in zip(missing, self._make(method, originals), strict=True):
                cache[i] = (text, None)
        return {i: cache[i] for i in ids}

    def _make(self, method: str, originals: list[str]) -> list[str]:
        if method == CLEAR:
            return originals
        if method == SPACY_NER:
            return [r.text for r in _spacy_baseline().mask_many(originals)]
        anonymizer = self.anonymizer or get_anonymizer()
        results = anonymizer.anonymize_many(originals, threshold=model_threshold(method))
        return [r.text for r in results]


_spacy: Any = None


def _spacy_baseline() -> Any:
    global _spacy
    if _spacy is None:
        # Made when first asked: loading spaCy's pipeline takes seconds, and most runs never
        # attack this baseline (importing its module loads no spaCy).
        _spacy = SpacyBaseline()
    return _spacy
