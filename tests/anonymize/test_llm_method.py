"""The LLM anonymization method (paper 002) against a real loopback server and tiny model."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest

from anonymize import cli
from anonymize.llm import LLM_CATEGORY, LLMAnonymizer, align_terms
from anonymize.llm_prompts import PROMPTS, get_prompt
from llm import LLMClient, LLMUnavailable

TEXT = "Ada Byrne coached rowing in Galway. Byrne's crew won in 2004; Ada retired in Galway."


@pytest.mark.parametrize(
    ("terms", "masked", "missing"),
    [
        (["Galway"], ["Galway", "Galway"], []),
        (["Byrne", "Byrne's"], ["Byrne", "Byrne's"], []),
        (["coach"], [], ["coach"]),  # never half a word ("coached")
        (["Ada Byrne", "Ada"], ["Ada Byrne", "Ada"], []),
        (["2004", "Dublin"], ["2004"], ["Dublin"]),
        (["  ", ""], [], []),
        (["rowing  in"], ["rowing in"], []),
    ],
)
def test_every_occurrence_of_every_term_is_aligned(terms, masked, missing):
    spans, not_found = align_terms(TEXT, terms)
    assert [span.text for span in spans] == masked
    assert not_found == missing
    assert all(TEXT[s.start : s.end] == s.text and s.category == LLM_CATEGORY for s in spans)


def test_the_four_prompts_of_paper_002_wrap_the_text():
    assert set(PROMPTS) == {"paper002", "man_vs_machine", "sparks", "student"}
    for prompt in PROMPTS.values():
        messages = prompt.messages("DOCUMENT-X")
        assert messages[-1]["role"] == "user" and "DOCUMENT-X" in messages[-1]["content"]
        assert "JSON" in json.dumps(messages)
    own = get_prompt("paper002").messages("x")
    assert [m["role"] for m in own] == ["system", "user", "assistant", "user"]
    assert json.loads(own[2]["content"])[0] == "John Oldman"


def test_terms_become_the_platforms_placeholders(llm_settings, llm_server):
    llm_server.queue_answers('["Ada Byrne", "Galway", "Byrne\'s", "Ada", "2004", "Mars"]')
    with LLMClient(llm_settings) as client:
        (outcome,) = LLMAnonymizer(client).anonymize_many([TEXT])
    assert outcome.text == (
        "OTHER_IDENTIFYING_ATTRIBUTE_1 coached rowing in OTHER_IDENTIFYING_ATTRIBUTE_2. "
        "OTHER_IDENTIFYING_ATTRIBUTE_3 crew won in OTHER_IDENTIFYING_ATTRIBUTE_4; "
        "OTHER_IDENTIFYING_ATTRIBUTE_5 retired in OTHER_IDENTIFYING_ATTRIBUTE_2."
    )
    assert outcome.unaligned_terms == ["Mars"] and outcome.attempts == 1
    assert llm_server.requests[0]["messages"][-1]["content"] == f"TEXT:\n\n{TEXT}"


def test_an_unparseable_answer_is_asked_again(llm_settings, llm_server):
    llm_server.queue_answers("Sure! The PII is Ada.", '["Ada"]')
    with LLMClient(llm_settings) as client:
        (outcome,) = LLMAnonymizer(client, "student").anonymize_many([TEXT])
    assert outcome.ok and outcome.attempts == 2 and outcome.terms == ["Ada"]


def test_nonsense_from_the_random_model_is_reported_per_text_and_nothing_passes_unmasked(
    llm_settings, llm_server
):
    """The tiny model's answers are never a JSON list: each text fails with its reason."""
    with LLMClient(llm_settings) as client:
        outcomes = LLMAnonymizer(client, "sparks", answer_retries=1).anonymize_many([TEXT, "b"])
    assert [o.ok for o in outcomes] == [False, False]
    assert {o.error_reason for o in outcomes} == {"unparseable"}
    assert all(o.text is None and o.to_dict()["error"]["attempts"] == 2 for o in outcomes)
    assert len(llm_server.requests) == 4


def test_one_failing_text_does_not_stop_the_others(llm_settings, llm_server):
    llm_server.queue_faults("500", "500", "500")  # the first request and both its retries
    llm_server.queue_answers("[]")
    with LLMClient(dataclasses.replace(llm_settings, concurrency=1)) as client:
        outcomes = LLMAnonymizer(client).anonymize_many([TEXT, "nothing here"])
    reasons = sorted(o.error_reason for o in outcomes)
    assert reasons == ["", "server_error"]


def test_an_unreachable_endpoint_stops_before_any_text_is_sent(llm_settings, llm_server):
    settings = dataclasses.replace(llm_settings, api_key="")
    settings = dataclasses.replace(settings, base_url="http://127.0.0.1:9/v1")
    with LLMClient(settings) as client, pytest.raises(LLMUnavailable):
        LLMAnonymizer(client).anonymize_many([TEXT])
    assert llm_server.requests == []


def _cli(argv, lines, env_settings, monkeypatch):
    for key, value in {
        "LLM_BASE_URL": env_settings.base_url,
        "LLM_MODEL": env_settings.model,
        "LLM_API_KEY": env_settings.api_key,
        "LLM_MAX_RETRIES": "1",
        "LLM_CONCURRENCY": "1",
        "LLM_BACKOFF_S": "0",
        "LLM_CACHE_DIR": env_settings.cache_dir,
    }.items():
        monkeypatch.setenv(key, value)
    stdin = io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode())
    stdout, stderr = io.StringIO(), io.StringIO()
    code = cli.main(["run", "--method", "llm", *argv], stdin, stdout, stderr)
    rows = [json.loads(line) for line in stdout.getvalue().splitlines()]
    return code, rows, stderr.getvalue()


def test_the_cli_reports_failures_and_a_rerun_resumes_paying_only_for_them(
    llm_settings, llm_server, monkeypatch
):
    lines = [{"id": "a", "text": TEXT}, {"id": "b", "text": "Bo from Cork."}]
    llm_server.queue_answers('["Ada", "Galway"]', "not json", "not json", "not json")
    code, rows, err = _cli(["--prompt", "man_vs_machine"], lines, llm_settings, monkeypatch)
    assert code == cli.EXIT_SOME_FAILED
    assert rows[0]["id"] == "a" and "Galway" not in rows[0]["anonymized"]
    assert rows[0]["method"]["prompt"] == "man_vs_machine" and rows[0]["method"]["seed"] is None
    assert rows[1]["error"]["reason"] == "unparseable" and "anonymized" not in rows[1]
    assert "not anonymized b: unparseable" in err and "test-key" not in err
    sent, first_a = len(llm_server.requests), rows[0]

    llm_server.queue_answers('["Bo", "Cork"]')
    code, rows, err = _cli(["--prompt", "man_vs_machine"], lines, llm_settings, monkeypatch)
    assert code == 0 and rows[1]["anonymized"].endswith("_2.")
    assert rows[0]["anonymized"] == first_a["anonymized"] and rows[0]["llm"]["cached"]
    # Text a and b's three failed attempts replay from the cache; only b's 4th is sent.
    assert len(llm_server.requests) - sent == 1 and "1 request(s) sent, 4 from cache" in err


def test_the_cli_fails_at_once_without_an_endpoint(monkeypatch, tmp_path):
    monkeypatch.delenv("LLM_BASE_URL", raising=False)
    stdin = io.BytesIO(b'{"id": 1, "text": "x"}\n')
    stderr = io.StringIO()
    code = cli.main(
        ["run", "--method", "llm", "--llm-cache-dir", str(tmp_path)], stdin, io.StringIO(), stderr
    )
    assert code == cli.EXIT_BAD_INPUT and "LLM_BASE_URL" in stderr.getvalue()


def test_a_text_folder_gets_only_its_anonymized_files(
    llm_settings, llm_server, monkeypatch, tmp_path
):
    source, target = tmp_path / "in", tmp_path / "out"
    source.mkdir()
    (source / "a.txt").write_text(TEXT, encoding="utf-8")
    (source / "b.txt").write_text("Bo from Cork.", encoding="utf-8")
    llm_server.queue_answers('["Galway"]', "x", "x", "x")
    code, _, err = _cli(
        ["--input-dir", str(source), "--output-dir", str(target)], [], llm_settings, monkeypatch
    )
    assert code == cli.EXIT_SOME_FAILED and "not anonymized b.txt" in err
    assert sorted(p.name for p in target.iterdir()) == ["a.txt"]
    assert "Galway" not in (target / "a.txt").read_text(encoding="utf-8")


def test_a_key_refused_mid_run_stops_the_run(llm_settings, llm_server):
    with LLMClient(llm_settings) as client:
        anonymizer = LLMAnonymizer(client)
        client.check()
        llm_server.api_key = "rotated"
        try:
            with pytest.raises(LLMUnavailable, match="refused the key"):
                client.complete_many([lambda: anonymizer.anonymize_one(TEXT)])
        finally:
            llm_server.api_key = "test-key"
