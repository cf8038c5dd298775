"""One retrying HTTP transport for the project's API clients: the LLM client (`llm`) and
Prolific's (`intruder.prolific`), a shared package so that neither imports the other.

Both clients once carried a loop of their own around each call. The transport of the
maintained `httpx-retries` package retries below the client instead, so every call of an
`httpx.Client` built with `retrying_transport` follows one set of rules:

- the statuses each client names (429 and 5xx; the LLM client adds 408 and 409) and network
  errors and timeouts (`httpx.TransportError`) are retried, every method included (the
  clients' POSTs are safe to repeat: a chat completion, Prolific calls keyed by study);
- a Retry-After (seconds, 0 meaning at once, or an HTTP date) is honoured, else the wait is
  ``backoff * 2 ** (retry - 1)``, times ``1 + jitter * U(0, 1)``; both capped at ``max_wait``;
- ``sleep`` is injectable (tests record the waits) and ``on_retry(request, failure, wait)``
  sees each retry before its wait (logging, usage counters; it may raise to stop);
- after ``retries`` retries the last answer comes back (the client turns a retried status
  into its own error) or the last network error is raised.

A single call opts out with ``extensions={"retry": NO_RETRY}`` (a health check that must fail
at once).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from typing import Any

import httpx
from httpx_retries import Retry, RetryTransport

ALL_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
RETRIED_EXCEPTIONS = (httpx.TransportError,)

OnRetry = Callable[[httpx.Request | None, httpx.Response | Exception, float], None]


class ClientRetry(Retry):
    """httpx-retries' Retry with the clients' back-off, an injectable sleep and a retry hook."""

    def __init__(
        self,
        *args: Any,
        jitter: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
        on_retry: OnRetry | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.jitter = jitter
        self.sleep_function = sleep
        self.on_retry = on_retry
        self.request: httpx.Request | None = None

    def copy_with(self, **changes: Any) -> ClientRetry:
        """Return the next attempt's Retry; the hooks travel with it (the base drops them)."""
        new = super().copy_with(**changes)
        assert isinstance(new, ClientRetry)
        new.jitter, new.sleep_function, new.on_retry = (
            self.jitter,
            self.sleep_function,
            self.on_retry,
        )
        new.request = self.request
        return new

    def for_request(self, request: httpx.Request) -> ClientRetry:
        """Return a copy that knows its request (the hook names the call it retries)."""
        new = self.copy_with()
        new.request = request
        return new

    def backoff_strategy(self) -> float:
        """Return ``backoff * 2 ** (retry - 1) * (1 + jitter * U)``, capped at the maximum."""
        base = self.backoff_factor * 2 ** (self.attempts_made - 1)
        return min(base * (1 + self.jitter * random.random()), self.max_backoff_wait)

    def retry_after(self, response: httpx.Response | Exception) -> float | None:
        """Return the answer's Retry-After in seconds (a number, 0 included, or an HTTP date)."""
        if not isinstance(response, httpx.Response):
            return None
        value = response.headers.get("retry-after", "").strip()
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            return self.parse_retry_after(value)
        except ValueError:
            return None

    def sleep(self, response: httpx.Response | Exception) -> None:
        """Tell ``on_retry``, then wait (Retry-After where given, else the back-off)."""
        after = self.retry_after(response)
        wait = self.backoff_strategy() if after is None else min(after, self.max_backoff_wait)
        if self.on_retry is not None:
            self.on_retry(self.request, response, wait)
        self.sleep_function(wait)
        self.elapsed_sleep += wait


class ClientRetryTransport(RetryTransport):
    """RetryTransport whose Retry knows the request it retries."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        retry = request.extensions.get("retry", self.retry)
        if isinstance(retry, ClientRetry):
            request.extensions["retry"] = retry.for_request(request)
        return super().handle_request(request)


# For one call that must not be retried.
NO_RETRY = ClientRetry(total=0, allowed_methods=ALL_METHODS)


def retrying_transport(
    *,
    statuses: Iterable[int],
    retries: int,
    backoff: float,
    max_wait: float,
    jitter: float = 0.0,
    sleep: Callable[[float], None] = time.sleep,
    on_retry: OnRetry | None = None,
    transport: httpx.BaseTransport | None = None,
) -> ClientRetryTransport:
    """Return the transport a client's ``httpx.Client`` sends through (``transport``: the one
    it wraps, e.g. a test's mock; default httpx's own)."""
    retry = ClientRetry(
        total=retries,
        allowed_methods=ALL_METHODS,
        status_forcelist=list(statuses),
        retry_on_exceptions=RETRIED_EXCEPTIONS,
        backoff_factor=backoff,
        max_backoff_wait=max_wait,
        backoff_jitter=0.0,
        jitter=jitter,
        sleep=sleep,
        on_retry=on_retry,
    )
    return ClientRetryTransport(transport=transport or httpx.HTTPTransport(), retry=retry)
