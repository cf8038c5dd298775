"""A fake anonymizer with the interface of `anonymize.Anonymizer`, for fast tests.

It masks capitalised words that do not start a sentence as PERSON_FIRSTNAME, and can be
told to crash after a number of texts to test that a job resumes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from anonymize import AnonymizationResult, Span, render
from anonymize.placeholders import assign_placeholders

CAPITALISED = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+")


class FakeCrash(RuntimeError):
    """Raised by the fake to simulate a worker dying mid-job."""


class FakeAnonymizer:
    """An `anonymize.TextAnonymizer` without a model (the threshold is accepted, not used)."""

    model_version = "fake-1"
    threshold = 0.5

    def __init__(self, crash_after: int | None = None) -> None:
        self.crash_after = crash_after
        self.seen = 0
        self.calls: list[int] = []

    def anonymize(self, text: str, **options: object) -> AnonymizationResult:
        return self.anonymize_many([text], **options)[0]

    def anonymize_many(
        self,
        texts: Sequence[str],
        batch_size: int = 16,
        progress: Callable[[int, int], None] | None = None,
        **options: object,
    ) -> list[AnonymizationResult]:
        self.calls.append(len(texts))
        results = []
        for text in texts:
            if self.crash_after is not None and self.seen >= self.crash_after:
                raise FakeCrash(f"simulated crash after {self.seen} texts")
            self.seen += 1
            spans = assign_placeholders(
                [
                    Span(m.start(), m.end(), m.group(), "PERSON_FIRSTNAME", "", 0.9)
                    for m in CAPITALISED.finditer(text)
                ]
            )
            results.append(AnonymizationResult(render(text, spans), spans))
        return results
