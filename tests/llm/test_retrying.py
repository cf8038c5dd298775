"""The one retrying transport of the LLM and Prolific clients (httpx-retries underneath)."""

from __future__ import annotations

import httpx
import pytest

from http_retrying import NO_RETRY, retrying_transport


def _client(answers: list, waits: list, seen: list | None = None, **options) -> httpx.Client:
    """A client whose server gives `answers` in turn (a status, (status, headers) or an error)."""
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        answer = answers[min(len(calls), len(answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        status, headers = answer if isinstance(answer, tuple) else (answer, {})
        return httpx.Response(status, headers=headers, json={"ok": status < 400})

    settings = {"statuses": {429, 503}, "retries": 3, "backoff": 0.5, "max_wait": 30.0} | options
    transport = retrying_transport(
        sleep=waits.append,
        on_retry=lambda request, failure, wait: (seen if seen is not None else []).append(
            (request.method, request.url.path, wait)
        ),
        transport=httpx.MockTransport(handler),
        **settings,
    )
    client = httpx.Client(base_url="http://x/", transport=transport)
    client.calls = calls  # type: ignore[attr-defined]
    return client


def test_posts_are_retried_with_exponential_back_off_and_the_hook_names_the_call():
    waits, seen = [], []
    client = _client([503, 503, 200], waits, seen)
    assert client.post("studies/", json={}).status_code == 200
    assert waits == [0.5, 1.0] and client.calls == ["POST"] * 3
    assert seen == [("POST", "/studies/", 0.5), ("POST", "/studies/", 1.0)]


def test_retry_after_is_honoured_zero_included_and_capped():
    waits = []
    client = _client([(429, {"Retry-After": "7"}), (429, {"Retry-After": "0"}), 200], waits)
    assert client.get("a").status_code == 200
    assert waits == [7.0, 0.0]
    waits.clear()
    client = _client([(429, {"Retry-After": "600"}), 200], waits)
    assert client.get("a").status_code == 200 and waits == [30.0]


def test_the_last_answer_comes_back_after_the_retries_and_other_statuses_at_once():
    waits = []
    client = _client([503], waits, retries=2)
    assert client.get("a").status_code == 503 and len(client.calls) == 3
    client = _client([404], waits)
    assert client.get("a").status_code == 404 and len(client.calls) == 1


def test_network_errors_are_retried_then_raised():
    waits = []
    client = _client([httpx.ConnectError("refused")], waits, retries=1)
    with pytest.raises(httpx.ConnectError):
        client.get("a")
    assert len(client.calls) == 2 and waits == [0.5]


def test_jitter_stretches_each_wait_by_at_most_its_share():
    waits = []
    client = _client([503, 503, 503, 200], waits, jitter=0.25, backoff=1.0)
    client.get("a")
    for wait, base in zip(waits, [1.0, 2.0, 4.0], strict=True):
        assert base <= wait <= base * 1.25


def test_one_call_can_opt_out():
    waits = []
    client = _client([503, 200], waits)
    assert client.get("a", extensions={"retry": NO_RETRY}).status_code == 503
    assert len(client.calls) == 1 and waits == []
