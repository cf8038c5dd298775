"""The LLM client against a real OpenAI-compatible server on loopback (tiny random model)."""

from __future__ import annotations

import dataclasses

import pytest

from llm import LLMAnswerError, LLMClient, LLMSettings, LLMUnavailable
from llm.answers import parse_string_list
from tests.llm_server import MODEL_NAME

HELLO = [{"role": "user", "content": "Who is described?"}]


def test_the_tiny_model_answers_with_usage_and_the_sampling_is_recorded(llm_settings, llm_server):
    with LLMClient(llm_settings) as client:
        assert client.check() == [MODEL_NAME]
        answer = client.complete(HELLO)
    assert answer.content.strip() and answer.model == MODEL_NAME and not answer.cached
    assert answer.prompt_tokens > 0 and answer.completion_tokens > 0
    sent = llm_server.requests[0]
    assert sent["seed"] == 1 and sent["max_tokens"] == 64 and sent["model"] == MODEL_NAME
    assert llm_settings.sampling() == {
        "model": MODEL_NAME,
        "temperature": None,
        "max_tokens": 64,
        "seed": 1,
        "json_mode": False,
    }


def test_a_second_run_replays_the_cache_and_pays_nothing(llm_settings, llm_server):
    with LLMClient(llm_settings) as first:
        answer = first.complete(HELLO)
    with LLMClient(llm_settings) as second:
        replay = second.complete(HELLO)
    assert replay.content == answer.content and replay.cached
    assert len(llm_server.requests) == 1
    assert second.usage.requests == 0 and second.usage.cache_hits == 1
    assert second.usage.cached_prompt_tokens == answer.prompt_tokens


def test_the_cache_key_holds_the_sampling_settings(llm_settings, llm_server):
    with LLMClient(llm_settings) as client:
        client.complete(HELLO)
    hotter = dataclasses.replace(llm_settings, temperature=0.7)
    with LLMClient(hotter) as client:
        assert not client.complete(HELLO).cached
    assert len(llm_server.requests) == 2


@pytest.mark.parametrize("fault", ["429", "500", "503", "stall", "non_json"])
def test_a_failed_request_is_retried_and_then_answered(llm_settings, llm_server, fault):
    llm_server.queue_faults(fault)
    llm_server.queue_answers('["Ada"]')
    # The server stalls 1 s: past this timeout, so the client gives up and retries.
    settings = dataclasses.replace(llm_settings, timeout_s=0.3)
    with LLMClient(settings) as client:
        answer = client.complete(HELLO)
    assert answer.content == '["Ada"]'
    assert client.usage.retries == 1 and client.usage.failures == 0


def test_a_request_that_keeps_failing_reports_its_reason(llm_settings, llm_server):
    llm_server.queue_faults("429", "429", "429")
    with LLMClient(llm_settings) as client, pytest.raises(LLMAnswerError) as raised:
        client.complete(HELLO)
    assert raised.value.reason == "rate_limited"
    assert len(llm_server.requests) == 3  # one try and max_retries=2
    assert client.usage.failures == 1


def test_waits_grow_between_retries(llm_settings, llm_server):
    waits: list[float] = []
    settings = dataclasses.replace(llm_settings, backoff_s=0.01)
    llm_server.queue_faults("500", "500")
    with LLMClient(settings, sleep=waits.append) as client:
        client.complete(HELLO)
    assert len(waits) == 2 and waits[1] > waits[0] > 0


@pytest.mark.parametrize(("fault", "reason"), [("truncated", "truncated"), ("refusal", "refused")])
def test_a_truncated_or_refused_answer_is_an_answer_error(llm_settings, llm_server, fault, reason):
    llm_server.queue_faults(fault)
    with LLMClient(llm_settings) as client, pytest.raises(LLMAnswerError) as raised:
        client.complete(HELLO)
    assert raised.value.reason == reason


def test_a_wrong_key_fails_the_check_before_any_text_is_sent(llm_settings, llm_server):
    with (
        LLMClient(dataclasses.replace(llm_settings, api_key="wrong")) as client,
        pytest.raises(LLMUnavailable, match="refused the key"),
    ):
        client.check()
    assert llm_server.requests == []


def test_an_unreachable_endpoint_fails_the_check_at_once(tmp_path):
    settings = LLMSettings(
        base_url="http://127.0.0.1:9/v1", model="m", timeout_s=2, cache_dir=str(tmp_path)
    )
    with LLMClient(settings) as client, pytest.raises(LLMUnavailable, match="cannot reach"):
        client.check()


def test_a_hosted_endpoint_without_a_key_is_refused_by_name():
    settings = LLMSettings(base_url="https://api.example.org/v1", model="m", cache_dir="")
    with pytest.raises(LLMUnavailable, match="LLM_API_KEY"):
        settings.require_endpoint()


def test_an_unserved_model_fails_the_check(llm_settings):
    with (
        LLMClient(dataclasses.replace(llm_settings, model="gpt-9")) as client,
        pytest.raises(LLMUnavailable, match="does not serve"),
    ):
        client.check()


def test_settings_come_from_the_environment_and_hide_the_key():
    settings = LLMSettings.from_env(
        {
            "LLM_BASE_URL": "http://127.0.0.1:8080/v1",
            "LLM_MODEL": "m",
            "LLM_API_KEY": "sk-secret",
            "LLM_TEMPERATURE": "0",
            "LLM_CONCURRENCY": "8",
        }
    )
    assert settings.temperature == 0.0 and settings.concurrency == 8
    assert "sk-secret" not in repr(settings) and "sk-secret" not in str(settings.sampling())


def test_token_cost_is_counted_where_prices_are_set(llm_settings, llm_server):
    llm_server.queue_answers("[]")
    settings = dataclasses.replace(
        llm_settings, prompt_price_per_mtok=1.0, completion_price_per_mtok=2.0
    )
    with LLMClient(settings) as client:
        client.complete(HELLO)
    usage = client.usage
    paid = usage.prompt_tokens + 2 * usage.completion_tokens
    assert usage.cost_usd == pytest.approx(paid / 1e6)


@pytest.mark.parametrize(
    ("content", "terms"),
    [
        ('["John Oldman", "coach", 2004]', ["John Oldman", "coach", "2004"]),
        ('```json\n["Paris"]\n```', ["Paris"]),
        ('Here you go: ["a", "b"] Hope it helps.', ["a", "b"]),
        ('{"terms": ["x"]}', ["x"]),
        ("[]", []),
    ],
)
def test_json_lists_are_parsed_as_the_paper_asks(content, terms):
    assert parse_string_list(content) == terms


@pytest.mark.parametrize("content", ["no list here", '["open', '{"a": [1], "b": [2]}', '"x"'])
def test_anything_else_is_unparseable(content):
    with pytest.raises(LLMAnswerError) as raised:
        parse_string_list(content)
    assert raised.value.reason == "unparseable"


def test_an_answer_over_the_size_limit_is_refused_unread_and_not_asked_again(
    llm_settings, llm_server
):
    from llm.errors import LLMAnswerError as AnswerError

    settings = dataclasses.replace(llm_settings, max_answer_chars=1000)
    llm_server.queue_answers("x" * 3_000_000)  # a hostile endpoint's 3 MB "name"
    with LLMClient(settings) as client, pytest.raises(AnswerError) as raised:
        client.complete(HELLO)
    assert raised.value.reason == "too_long" and "1000 characters" in str(raised.value)
    assert len(llm_server.requests) == 1  # never retried: the endpoint would only repeat it


def test_an_answer_just_over_the_limit_in_characters_is_refused_too(llm_settings, llm_server):
    settings = dataclasses.replace(llm_settings, max_answer_chars=50)
    llm_server.queue_answers("y" * 51)
    with LLMClient(settings) as client, pytest.raises(LLMAnswerError, match="too_long"):
        client.complete(HELLO)
    llm_server.queue_answers("z" * 50)
    with LLMClient(settings) as client:
        assert client.complete(HELLO, attempt=1).content == "z" * 50


def test_the_answer_limit_is_itself_bounded():
    with pytest.raises(ValueError, match="max_answer_chars must lie in"):
        LLMSettings(max_answer_chars=0)
    with pytest.raises(ValueError, match="max_answer_chars must lie in"):
        LLMSettings.from_env({"LLM_MAX_ANSWER_CHARS": "100000000"})


def test_a_stop_sends_nothing_more_and_returns_without_waiting_for_the_rest(
    llm_settings, llm_server
):
    from llm import LLMCancelled

    settings = dataclasses.replace(llm_settings, concurrency=2)
    answers: list[int] = []
    sent_at_stop: list[int] = []

    def answered(done: int, total: int) -> None:
        answers.append(done)

    def stop_after_two_answers() -> bool:  # a researcher presses Cancel after two answers
        if len(answers) >= 2 and not sent_at_stop:
            sent_at_stop.append(len(llm_server.requests))
        return bool(sent_at_stop)

    prompts = [[{"role": "user", "content": f"Who is text {n}?"}] for n in range(12)]
    with LLMClient(settings, should_stop=stop_after_two_answers, stop_poll_s=0.05) as client:
        with pytest.raises(LLMCancelled, match="stopped after"):
            client.complete_many([lambda p=p: client.complete(p) for p in prompts], answered)
        with pytest.raises(LLMCancelled):  # the client stays stopped
            client.complete(prompts[-1])
    # After the stop, at most the `concurrency` requests already on their way were sent.
    assert len(llm_server.requests) <= sent_at_stop[0] + settings.concurrency < len(prompts)
