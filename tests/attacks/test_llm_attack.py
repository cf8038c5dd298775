"""LLM intruders (closed and open world) against a real loopback server and tiny model."""

from __future__ import annotations

import dataclasses
import json

import pytest

from attacks import cli
from attacks.config import AttackConfig
from attacks.llm import LLMAttack, guess_identities, parse_candidate_answer
from attacks.metrics import trir
from attacks.runner import attack_names, run_many_from_config
from attacks.strongest import strongest_adversary
from llm import LLMAnswerError, LLMClient
from tests.attacks.builders import PEOPLE, synthetic_frame

NAMES = sorted(PEOPLE)


@pytest.fixture
def llm_env(llm_settings, monkeypatch):
    """Point the attack's environment settings at the test server."""
    for key, value in {
        "LLM_BASE_URL": llm_settings.base_url,
        "LLM_MODEL": llm_settings.model,
        "LLM_API_KEY": llm_settings.api_key,
        "LLM_MAX_RETRIES": "1",
        "LLM_BACKOFF_S": "0",
        "LLM_CONCURRENCY": "1",
        "LLM_SEED": "3",
        "LLM_CACHE_DIR": llm_settings.cache_dir,
    }.items():
        monkeypatch.setenv(key, value)
    return llm_settings


def _fitted(**config) -> LLMAttack:
    attack = LLMAttack(AttackConfig(llm_candidates=3, llm_chunk_words=12, **config))
    frame = synthetic_frame()
    attack.fit(dict(zip(frame["name"], frame["public_knowledge"], strict=True)))
    return attack


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            '[{"name": "Ilse Marrowby", "probability": 0.6}, {"name": "ilse marowby", '
            '"probability": 0.1}, {"name": "Tobiah Ferncastle", "probability": 0.2}]',
            [("Ilse Marrowby", 0.75), ("Tobiah Ferncastle", 0.25)],
        ),
        ('["Bastian Kreoll", "Nobody Known"]', [("Bastian Kreoll", 1.0)]),
        ('{"ranking": ["Orlena Vasquith", "Ilse Marrowby"]}', [(NAMES[2], 0.5), (NAMES[1], 0.5)]),
    ],
)
def test_candidate_answers_become_probabilities(content, expected):
    parsed = parse_candidate_answer(content, NAMES)
    assert [name for name, _ in parsed] == [name for name, _ in expected]
    assert [p for _, p in parsed] == pytest.approx([p for _, p in expected])


def test_an_answer_naming_no_candidate_is_unparseable():
    with pytest.raises(LLMAnswerError, match="no candidate"):
        parse_candidate_answer('["Someone Else"]', NAMES)


def test_retrieval_shows_the_likeliest_candidates_with_their_best_chunks():
    attack = _fitted()
    candidates, chunks, _ = attack.retrieve("a glassblower from Quellmar with cobalt lanterns")
    assert candidates[0] == "Orlena Vasquith" and len(candidates) == 3
    assert all(1 <= len(chunks[c]) <= 3 for c in candidates)
    content = attack.messages("TXT", candidates, chunks)[-1]["content"]
    assert "1. Orlena Vasquith" in content and content.endswith("TEXT:\n\nTXT")


def test_the_models_choice_ranks_every_individual(llm_env, llm_server):
    attack = _fitted()
    llm_server.queue_answers(
        '[{"name": "Ilse Marrowby", "probability": 0.7}, '
        '{"name": "Orlena Vasquith", "probability": 0.3}]'
    )
    (prediction,) = attack.predict(
        {"d": "a glassblower from Quellmar"}, top_k=4, true_names={"d": "Orlena Vasquith"}
    )
    assert prediction.predicted_name == "Ilse Marrowby"
    assert prediction.true_rank == 2 and prediction.true_prob == pytest.approx(0.3)
    assert [name for name, _ in prediction.top_k][:2] == ["Ilse Marrowby", "Orlena Vasquith"]
    assert sorted(name for name, _ in prediction.top_k) == NAMES
    assert attack.stats["llm"]["sampling"]["seed"] == 3


def test_nonsense_answers_count_as_not_reidentified_and_are_reported(llm_env, llm_server):
    """The tiny random model never names a candidate: each text fails with its reason."""
    attack = _fitted()
    predictions = attack.predict(
        {"a": "glassblower", "b": "lighthouse keeper"}, true_names={"a": NAMES[2], "b": NAMES[3]}
    )
    assert [p.true_rank for p in predictions] == [None, None]
    assert attack.stats["llm"]["failures"] == {"unparseable": 2}
    assert trir(predictions).trir_pct == 0.0


def test_the_cli_runs_the_llm_attack_into_trir_and_the_strongest_adversary(
    llm_env, llm_server, tmp_path
):
    frame = synthetic_frame()[["name", "public_knowledge", "clear_abstract"]]
    data = tmp_path / "data.json"
    frame.to_json(data, orient="records")
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "data_file_path": str(data),
                "llm_candidates": 4,
                "cache_dir": str(tmp_path / "c"),
                "anonymize_background_knowledge": False,
                "use_document_curation": False,
            }
        )
    )
    # The server answers in document order (one request at a time): each the true person.
    llm_server.queue_answers(*[json.dumps([name]) for name in frame["name"]])
    out = str(tmp_path / "o")
    code = cli.main(["run", "--config", str(config), "--attack", "bm25,llm", "--out", out])
    assert code == 0
    final = json.loads((tmp_path / "o" / "final.json").read_text())
    assert set(final["trir_by_attack"]) >= {"bm25", "llm", "strongest"}
    assert final["trir_by_attack"]["llm"]["clear_abstract"] == pytest.approx(100.0)


def test_all_never_includes_the_llm_attack():
    assert "llm" not in attack_names("all")


def test_a_missing_endpoint_fails_the_cli_before_any_text_is_sent(
    monkeypatch, tmp_path, synthetic_json, capsys
):
    monkeypatch.delenv("LLM_BASE_URL", raising=False)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"data_file_path": str(synthetic_json), "cache_dir": ""}))
    code = cli.main(["run", "--config", str(config), "--attack", "llm", "--out", str(tmp_path)])
    assert code == 2 and "LLM_BASE_URL" in capsys.readouterr().err


def test_open_world_guesses_are_scored_like_human_guesses(llm_settings, llm_server):
    llm_server.queue_answers('["Ilse Marowby", "Tobiah Ferncastle"]', '["Ferncastle"]', "[]")
    documents = {"a": "beekeeper", "b": "acrobat", "c": "nothing"}
    true_names = {"a": "Ilse Marrowby", "b": "Tobiah Ferncastle", "c": "Bastian Kreoll"}
    aliases = {"b": ["The Lighthouse Acrobat", "Ferncastle"]}
    with LLMClient(dataclasses.replace(llm_settings, concurrency=1)) as client:
        guesses = guess_identities(client, documents, true_names, aliases, k=2)
    assert [g.identified for g in guesses] == [True, True, False]
    assert guesses[0].score.cosine == pytest.approx(0.98, abs=0.02)
    assert guesses[1].score.matched_alias == "Ferncastle"
    assert guesses[2].guesses == [] and guesses[2].score.cosine == 0.0


def test_an_open_world_guess_of_another_person_is_not_an_identification(llm_settings, llm_server):
    # The documents' persons are the candidates a guess may name (issue 46): "Daniel
    # Radcliffe" for Daniel Craig scores 0.845 but names the other person.
    llm_server.queue_answers('["Daniel Radcliffe"]', '["Daniel Radcliffe"]')
    documents = {"craig": "a spy", "radcliffe": "a wizard"}
    true_names = {"craig": "Daniel Craig", "radcliffe": "Daniel Radcliffe"}
    with LLMClient(dataclasses.replace(llm_settings, concurrency=1)) as client:
        best = guess_identities(client, documents, true_names, k=1)
    assert best[0].score.cosine == pytest.approx(0.845, abs=1e-3)
    assert (best[0].identified, best[0].score.named_other) == (False, True)
    assert best[0].score.other_key == "Daniel Radcliffe"
    assert (best[1].identified, best[1].score.named_other) == (True, False)
    llm_server.queue_answers('["Daniel Radcliffe"]', '["Daniel Radcliffe"]')
    with LLMClient(dataclasses.replace(llm_settings, concurrency=1)) as client:
        paper = guess_identities(client, documents, true_names, k=1, rule="paper")
    # The paper's rule (replication) counts it, and still says whom it named.
    assert (paper[0].identified, paper[0].score.named_other) == (True, True)


def test_the_guess_cli_writes_scored_guesses(llm_env, llm_server, tmp_path, capsys):
    source = tmp_path / "docs.jsonl"
    source.write_text(
        json.dumps({"doc_id": "1", "text": "beekeeper", "true_name": "Ilse Marrowby"}) + "\n"
    )
    llm_server.queue_answers('["Ilse Marrowby"]')
    assert cli.main(["guess", "--input", str(source), "--out", str(tmp_path / "g.jsonl")]) == 0
    row = json.loads((tmp_path / "g.jsonl").read_text())
    assert row["identified"] and row["llm"]["model"] == llm_env.model
    assert "1 of 1 (100.0%)" in capsys.readouterr().out


def test_the_llm_attack_saves_and_loads(tmp_path):
    attack = _fitted()
    attack.save(tmp_path)
    loaded = LLMAttack.load(tmp_path)
    assert loaded.retrieve("Quellmar glassblower")[0] == attack.retrieve("Quellmar glassblower")[0]


def test_strongest_adversary_takes_the_llm_prediction_where_it_ranks_best():
    from attacks.prediction import Prediction

    bm25 = [Prediction("d", "A", "B", 2, 0.4, [])]
    llm = [Prediction("d", "A", "A", 1, 0.9, [])]
    assert strongest_adversary({"bm25": bm25, "llm": llm}) == llm
    assert run_many_from_config  # the CLI test above drives it end to end
