"""Send chat requests to an OpenAI-compatible endpoint with retries, a concurrency limit,
token accounting and the answer cache.

Hand-written over `httpx` rather than the `openai` package: the project needs exactly the
chat-completions and models routes, the same retry rules for every server (vLLM, llama.cpp,
Ollama, hosted), and the cache in front of them.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from typing import Any

import httpx

from http_retrying import NO_RETRY, retrying_transport
from llm.cache import AnswerCache, cache_key
from llm.errors import LLMAnswerError, LLMCancelled, LLMUnavailable
from llm.settings import LLMSettings

Messages = list[dict[str, str]]
RETRIED_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
# Each back-off wait is stretched by up to a quarter, so parallel requests spread out.
BACKOFF_JITTER = 0.25


@dataclass(frozen=True)
class Completion:
    """One answer: its content, why it stopped, its tokens, and whether it came from cache."""

    content: str
    finish_reason: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool = False

    def to_cache(self) -> dict[str, Any]:
        """Return the fields stored in the cache."""
        values = asdict(self)
        values.pop("cached")
        return values


@dataclass
class RunUsage:
    """Count a run's requests and tokens; `cost_usd` where prices are configured."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    cost_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the counts as JSON-ready values."""
        return asdict(self)


class LLMClient:
    """Talk to one endpoint and model; share one instance across a run's threads."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        should_stop: Callable[[], bool] | None = None,
        stop_poll_s: float = 1.0,
    ) -> None:
        """`should_stop` (e.g. "was the job cancelled?") is asked every `stop_poll_s` while
        `complete_many` waits; once it says yes, no request is sent any more."""
        self.settings = settings
        self._should_stop = should_stop
        self._stop_poll_s = stop_poll_s
        self._stopped = threading.Event()
        self.usage = RunUsage()
        self._lock = threading.Lock()
        self._sleep = sleep
        headers = {"Content-Type": "application/json"}
        if settings.api_key:
            headers["Authorization"] = f"Bearer {settings.api_key}"
        self._retry = retrying_transport(
            statuses=RETRIED_STATUSES,
            retries=settings.max_retries,
            backoff=settings.backoff_s,
            max_wait=settings.max_backoff_s,
            jitter=BACKOFF_JITTER,
            sleep=self._wait_unless_stopped,
            on_retry=self._count_retry,
            transport=transport,
        )
        self._http = httpx.Client(
            base_url=settings.base_url.rstrip("/") + "/",
            headers=headers,
            timeout=settings.timeout_s,
            transport=self._retry,
            limits=httpx.Limits(max_connections=settings.concurrency),
        )
        self.cache = AnswerCache(settings.cache_dir) if settings.cache_dir else None

    def close(self) -> None:
        """Close the HTTP connections and the cache."""
        self._http.close()
        if self.cache is not None:
            self.cache.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check(self) -> list[str]:
        """Fail at once, before any text is sent, where the run cannot work.

        Check the settings, reach GET /models, and see that the key is accepted and the
        model served (where the server lists its models). Return the served model names.
        """
        self.settings.require_endpoint()
        try:
            response = self._http.get(
                "models",
                timeout=min(self.settings.timeout_s, 15.0),
                extensions={"retry": NO_RETRY},
            )
        except httpx.HTTPError as error:
            raise LLMUnavailable(
                f"cannot reach the LLM endpoint {self.settings.base_url}: {error}"
            ) from None
        if response.status_code in (401, 403):
            raise LLMUnavailable(
                f"the LLM endpoint refused the key (HTTP {response.status_code}); check LLM_API_KEY"
            )
        if response.status_code == 404:
            return []  # some servers do not list models; the first request will tell
        if response.status_code >= 400:
            raise LLMUnavailable(
                f"the LLM endpoint answered GET /models with HTTP {response.status_code}"
            )
        try:
            served = [str(item["id"]) for item in response.json().get("data", [])]
        except (ValueError, KeyError, TypeError, AttributeError):
            raise LLMUnavailable(
                f"{self.settings.base_url} is not an OpenAI-compatible endpoint "
                "(GET /models did not return a model list)"
            ) from None
        if served and self.settings.model not in served:
            raise LLMUnavailable(
                f"the endpoint does not serve model {self.settings.model!r}; it serves "
                f"{', '.join(served[:10])}"
            )
        return served

    def request_body(self, messages: Messages) -> dict[str, Any]:
        """Return the chat-completions body (the cache key is computed from it)."""
        body: dict[str, Any] = {"model": self.settings.model, "messages": messages}
        for name in ("temperature", "max_tokens", "seed"):
            value = getattr(self.settings, name)
            if value is not None:
                body[name] = value
        if self.settings.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def complete(self, messages: Messages, *, attempt: int = 0) -> Completion:
        """Return the answer to `messages` (from the cache where stored).

        `attempt` > 0 asks again for an answer the caller could not use: it has its own
        cache entry. HTTP failures are retried with back-off; a request that still fails,
        or an answer that was cut off or refused, raises LLMAnswerError with its reason.
        """
        body = self.request_body(messages)
        key = cache_key(body, attempt)
        if self.cache is not None:
            stored = self.cache.get(key)
            if stored is not None:
                completion = Completion(**stored, cached=True)
                self._count(completion)
                return self._usable(completion)
        completion = self._send_with_retries(body)
        if self.cache is not None:
            self.cache.put(key, self.settings.model, completion.to_cache())
        self._count(completion)
        return self._usable(completion)

    def complete_parsed(
        self, messages: Messages, parse: Callable[[str], Any], answer_retries: int = 2
    ) -> tuple[Any, Completion, int]:
        """Return (parsed answer, completion, attempts), re-asking an unusable answer.

        An answer that `parse` rejects (LLMAnswerError), that was cut off or refused, is
        asked for again as a new attempt, up to `answer_retries` more times. Unusable answers
        replayed from the cache cost nothing and do not count, so a re-run replays them and
        then asks anew. HTTP failures (already retried) and the last unusable answer raise.
        """
        failure = LLMAnswerError("unparseable")
        attempt, fresh = -1, 0
        while fresh <= answer_retries:
            attempt += 1
            try:
                completion = self.complete(messages, attempt=attempt)
            except LLMAnswerError as error:
                if error.reason not in ("truncated", "refused"):
                    raise
                failure = error
                fresh += not error.cached
                continue
            try:
                return parse(completion.content), completion, attempt + 1
            except LLMAnswerError as error:
                failure = error
                fresh += not completion.cached
        failure.attempts = attempt + 1
        raise failure

    def complete_many(
        self,
        jobs: Sequence[Callable[[], Any]],
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Any]:
        """Run `jobs` (each calling `complete`) at most `concurrency` at a time, in order.

        A job's exception is returned in its place, so one bad text never stops the rest;
        LLMUnavailable (the endpoint or key went away) is raised for the whole run.
        """
        results: list[Any] = [None] * len(jobs)
        done = 0

        def run(index: int) -> None:
            if self._stopped.is_set():
                return  # stopped before its turn: never sent
            try:
                results[index] = jobs[index]()
            except (LLMUnavailable, LLMCancelled):
                raise
            except Exception as error:  # recorded per text by the caller
                results[index] = error

        pool = ThreadPoolExecutor(max_workers=self.settings.concurrency)
        pending = {pool.submit(run, index) for index in range(len(jobs))}
        try:
            while pending:
                finished, pending = wait(
                    pending, timeout=self._stop_poll_s, return_when=FIRST_COMPLETED
                )
                for future in finished:
                    future.result()
                    done += 1
                    if progress is not None:
                        progress(done, len(jobs))
                if self._should_stop is not None and self._should_stop():
                    self._stopped.set()
                    raise LLMCancelled(f"stopped after {done} of {len(jobs)} answers")
        finally:
            # After a stop or LLMUnavailable nothing more is sent (queued texts are dropped,
            # running ones see the stop before each try); answers already cached stay. A stop
            # returns at once rather than waiting for answers in flight.
            pool.shutdown(wait=not self._stopped.is_set(), cancel_futures=True)
        return results

    def _usable(self, completion: Completion) -> Completion:
        """Return the completion, or raise for an answer cut off or refused (`cached` kept)."""
        error = None
        if completion.finish_reason == "length":
            error = LLMAnswerError("truncated", "the answer reached max_tokens")
        elif not completion.content.strip() or completion.finish_reason == "content_filter":
            error = LLMAnswerError("refused", completion.content[:200])
        if error is None:
            return completion
        error.cached = completion.cached
        raise error

    def _count(self, completion: Completion) -> None:
        with self._lock:
            usage = self.usage
            if completion.cached:
                usage.cache_hits += 1
                usage.cached_prompt_tokens += completion.prompt_tokens
                usage.cached_completion_tokens += completion.completion_tokens
                return
            usage.requests += 1
            usage.prompt_tokens += completion.prompt_tokens
            usage.completion_tokens += completion.completion_tokens
            prompt_price = self.settings.prompt_price_per_mtok
            completion_price = self.settings.completion_price_per_mtok
            if prompt_price is not None and completion_price is not None:
                usage.cost_usd = (
                    usage.prompt_tokens * prompt_price + usage.completion_tokens * completion_price
                ) / 1e6

    def _send_with_retries(self, body: dict[str, Any]) -> Completion:
        """POST until an answer comes back or the retries are spent.

        The transport (`http_retrying`) retries HTTP failures (statuses, timeouts, network
        errors); this loop asks again, within the same `max_retries`, when a 200 answer is
        not a completion (non-JSON), which no transport can see.
        """
        failure = LLMAnswerError("connection")
        for attempt in range(self.settings.max_retries + 1):
            if attempt:
                wait = self._retry.retry.copy_with(attempts_made=attempt).backoff_strategy()
                self._count_retry(None, failure, wait)
                self._wait_unless_stopped(wait)
            elif self._stopped.is_set():
                raise LLMCancelled("stopped; this request was not sent")
            try:
                return self._send(body)
            except LLMAnswerError as error:
                failure = error
                if not getattr(error, "retry", True):
                    break
        with self._lock:
            self.usage.failures += 1
        raise failure

    def _count_retry(self, request: Any, failure: Any, wait: float) -> None:
        """Count one retry (the transport's or this client's own)."""
        with self._lock:
            self.usage.retries += 1

    def _wait_unless_stopped(self, seconds: float) -> None:
        """Wait before a retry; after a stop nothing more is sent."""
        self._sleep(seconds)
        if self._stopped.is_set():
            raise LLMCancelled("stopped; this request was not sent")

    def _send(self, body: dict[str, Any]) -> Completion:
        """POST once and turn every failure into an LLMAnswerError with its reason."""
        try:
            with self._http.stream("POST", "chat/completions", json=body) as response:
                raw = self._read_capped(response)
        except httpx.TimeoutException as error:  # the transport's retries spent
            raise _final(LLMAnswerError("timeout", str(error) or "no answer in time")) from None
        except httpx.HTTPError as error:
            raise _final(LLMAnswerError("connection", str(error))) from None
        text = raw.decode("utf-8", errors="replace")
        if response.status_code in (401, 403):
            raise LLMUnavailable(f"the LLM endpoint refused the key (HTTP {response.status_code})")
        if response.status_code >= 400:
            reason = (
                "rate_limited"
                if response.status_code == 429
                else "server_error"
                if response.status_code >= 500
                else f"http_{response.status_code}"
            )
            raise _final(LLMAnswerError(reason, text[:200]))  # retried by the transport
        try:
            payload = json.loads(text)
            choice = payload["choices"][0]
            message = choice.get("message") or {}
            usage = payload.get("usage") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            raise LLMAnswerError("non_json", text[:200]) from None
        content = message.get("content") or ""
        if not isinstance(content, str):
            raise LLMAnswerError("non_json", "the answer's content is not text")
        if len(content) > self.settings.max_answer_chars:
            raise self._too_long(f"{len(content)} characters")
        return Completion(
            content=content,
            finish_reason=str(choice.get("finish_reason") or "stop")[:40],
            model=str(payload.get("model") or body["model"])[:200],
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )

    def _read_capped(self, response: httpx.Response) -> bytes:
        """Return the body, reading no more than an answer of `max_answer_chars` can need."""
        # UTF-8 takes at most 4 bytes a character, JSON escapes 6 (\uXXXX); 64 KiB for the rest.
        cap = self.settings.max_answer_chars * 6 + 65_536
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > cap:
                raise self._too_long(f"over {cap} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def _too_long(self, detail: str) -> LLMAnswerError:
        error = LLMAnswerError(
            "too_long", f"{detail}; the limit is {self.settings.max_answer_chars} characters"
        )
        error.retry = False  # type: ignore[attr-defined]
        return error


def _final(error: LLMAnswerError) -> LLMAnswerError:
    """Mark an HTTP failure as final: the transport has already retried what it retries."""
    error.retry = False  # type: ignore[attr-defined]
    return error
