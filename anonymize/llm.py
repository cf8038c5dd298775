"""Anonymize with an LLM, as paper 002 does: ask for a JSON list of terms, mask every occurrence.

The model only names terms; this module finds each term at every place it occurs in the
original (paper 002: "for each sensitive term detected by the LLM, all its instances within
the document are masked") and turns those places into the platform's spans, so the result
is rendered by `anonymize.placeholders` like any other method's and goes through review,
risk checks and intruder studies. An answer that cannot be parsed, was cut off or refused is
asked for again (a new attempt, with its own cache entry); a text that still fails is
reported with its reason and left out, never passed through unmasked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from anonymize.llm_prompts import DEFAULT_PROMPT, get_prompt
from anonymize.placeholders import Span, assign_placeholders, render

if TYPE_CHECKING:
    from llm.client import LLMClient

# The LLM names terms without a category; they take Textwash's catch-all category, so their
# placeholders read OTHER_IDENTIFYING_ATTRIBUTE_N (paper 002 writes SENSITIVE for all).
LLM_CATEGORY = "OTHER_IDENTIFYING_ATTRIBUTE"
DEFAULT_ANSWER_RETRIES = 2


def term_pattern(term: str) -> re.Pattern[str] | None:
    """Return the pattern of `term` verbatim, any whitespace run matching any other.

    A term that starts or ends with a word character must do so at a word boundary, so the
    term "coach" masks "coach" but not the start of "coaching" (the paper does not say; a
    half-masked word would leak the rest of it).
    """
    words = term.split()
    if not words:
        return None
    body = r"\s+".join(re.escape(word) for word in words)
    head = r"(?<!\w)" if re.match(r"\w", words[0]) else ""
    tail = r"(?!\w)" if re.search(r"\w$", words[-1]) else ""
    return re.compile(head + body + tail)


def align_terms(text: str, terms: Sequence[str]) -> tuple[list[Span], list[str]]:
    """Return the spans of every occurrence of every term in `text`, and the terms not found.

    Longer terms claim their characters first ("Oldman's" before "Oldman"), so spans never
    overlap; a term covered entirely by longer ones is not reported as missing.
    """
    taken = [False] * len(text)
    spans: list[Span] = []
    missing: list[str] = []
    unique = list(dict.fromkeys(t.strip() for t in terms if t and t.strip()))
    for term in sorted(unique, key=lambda t: (-len(t), t)):
        pattern = term_pattern(term)
        matches = list(pattern.finditer(text)) if pattern else []
        if not matches:
            missing.append(term)
            continue
        for match in matches:
            start, end = match.span()
            if any(taken[start:end]):
                continue
            taken[start:end] = [True] * (end - start)
            spans.append(Span(start, end, match.group(), LLM_CATEGORY, "", 1.0))
    missing.sort(key=unique.index)
    return sorted(spans, key=lambda s: s.start), missing


@dataclass
class LLMOutcome:
    """What the LLM method made of one text: the anonymization, or why there is none."""

    text: str | None
    spans: list[Span] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    unaligned_terms: list[str] = field(default_factory=list)
    attempts: int = 0
    cached: bool = False
    error_reason: str = ""
    error_detail: str = ""

    @property
    def ok(self) -> bool:
        """Return whether the text was anonymized."""
        return self.text is not None

    def to_dict(self) -> dict[str, Any]:
        """Return the fields the CLI adds to each output line."""
        if not self.ok:
            return {
                "error": {
                    "reason": self.error_reason,
                    "detail": self.error_detail,
                    "attempts": self.attempts,
                }
            }
        return {
            "anonymized": self.text,
            "spans": [span.to_dict() for span in self.spans],
            "llm": {
                "terms": self.terms,
                "unaligned_terms": self.unaligned_terms,
                "attempts": self.attempts,
                "cached": self.cached,
            },
        }


class LLMAnonymizer:
    """Anonymize texts with one prompt through one `llm.LLMClient`."""

    def __init__(
        self,
        client: LLMClient,
        prompt: str = DEFAULT_PROMPT,
        *,
        answer_retries: int = DEFAULT_ANSWER_RETRIES,
        operator: str = "placeholder",
    ) -> None:
        self.client = client
        self.prompt = get_prompt(prompt)
        self.answer_retries = answer_retries
        self.operator = operator

    @property
    def method(self) -> dict[str, Any]:
        """Return what produced the texts: prompt, model and every sampling setting."""
        return {"method": "llm", "prompt": self.prompt.name, **self.client.settings.sampling()}

    def anonymize_one(self, text: str) -> LLMOutcome:
        """Ask for the terms of `text` (retrying unusable answers) and mask them."""
        from llm.answers import parse_string_list
        from llm.errors import LLMAnswerError

        try:
            terms, completion, attempts = self.client.complete_parsed(
                self.prompt.messages(text), parse_string_list, self.answer_retries
            )
        except LLMAnswerError as error:
            return LLMOutcome(
                text=None,
                attempts=error.attempts,
                error_reason=error.reason,
                error_detail=error.detail,
            )
        spans, missing = align_terms(text, terms)
        spans = assign_placeholders(spans, self.operator)
        return LLMOutcome(
            text=render(text, spans, self.operator),
            spans=spans,
            terms=terms,
            unaligned_terms=missing,
            attempts=attempts,
            cached=completion.cached,
        )

    def anonymize_many(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> list[LLMOutcome]:
        """Return one outcome per text, in order; `concurrency` requests run at once.

        Raise `llm.LLMUnavailable` where the endpoint or key fails: checked before any text
        is sent, and again if it goes away mid-run (answers received stay in the cache).
        """
        self.client.check()
        jobs = [lambda text=text: self.anonymize_one(text) for text in texts]
        outcomes = self.client.complete_many(jobs, progress)
        return [
            outcome
            if isinstance(outcome, LLMOutcome)
            else LLMOutcome(text=None, error_reason="error", error_detail=str(outcome))
            for outcome in outcomes
        ]
