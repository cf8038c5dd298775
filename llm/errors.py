"""What can go wrong talking to an LLM endpoint, split by what the caller must do about it."""

from __future__ import annotations


class LLMError(Exception):
    """Base of every LLM failure."""


class LLMUnavailable(LLMError):
    """The run cannot start or go on: no key, a refused key, an unreachable endpoint, no model.

    Raised before any text is sent (by `LLMClient.check`), so a job fails at once.
    """


class LLMAnswerError(LLMError):
    """One request failed after every retry, or its answer was unusable; `reason` says which.

    Reasons: `rate_limited` (429), `server_error` (5xx), `timeout`, `connection`, `non_json`
    (the HTTP body was not JSON), `too_long` (the answer exceeded `max_answer_chars`; never
    retried: a hostile or broken endpoint), `truncated` (max_tokens reached), `refused` (the model
    declined or answered nothing), `unparseable` (the content was not the JSON asked for),
    `http_<status>` (another 4xx).
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        # Whether the unusable answer came from the cache (a replayed attempt costs nothing).
        self.cached = False
        # How many answers were asked for before giving up (set by `complete_parsed`).
        self.attempts = 1


class LLMCancelled(LLMError):
    """The run was stopped (`should_stop` said so): nothing more is sent."""
