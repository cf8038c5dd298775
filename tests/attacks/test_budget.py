"""The knowledge budget: b texts per candidate, never the text's own nor its writer's twin."""

from __future__ import annotations

import random

import numpy as np
import pytest

from attacks import AttackConfig
from attacks.background import TEXT_SEPARATOR, BackgroundRecord, FoldError
from attacks.budget import budget_draws, check_draws, parse_budget, run_budget
from attacks.prepared import PreparedTexts
from attacks.retrieval import RetrievalAttack


def _records(seed: int = 3, persons: int = 5, texts: int = 70) -> list[BackgroundRecord]:
    """Made-up records; some writers describe one person several times, some are unknown."""
    rng = random.Random(seed)
    records = []
    for n in range(texts):
        target = f"person{n % persons}"
        writer = None if n % 7 == 0 else f"w{rng.randrange(6)}"
        records.append(BackgroundRecord(f"t{n}", target, writer, f"text-{n} about {target}"))
    return records


class SpyAttack(RetrievalAttack):
    """Record the background each fit saw and the texts each prediction was asked about."""

    name = "spy"
    uses_curation = False
    seen: list[tuple[dict[str, str], list[str]]] = []

    def _index(self, progress):
        self.background_seen = dict(self.profiles)

    def _scores(self, texts, progress):
        SpyAttack.seen.append((self.background_seen, list(texts)))
        rng = np.random.default_rng(len(SpyAttack.seen))
        return rng.random((len(texts), len(self.names)))


def _spy(name, config):
    return SpyAttack(config)


@pytest.mark.parametrize("budget", [1, 2, 4, None])
@pytest.mark.parametrize("seed", [0, 5])
def test_no_query_sees_its_own_text_or_its_writers_twin_in_the_background(budget, seed):
    records = _records(seed)
    by_text = {r.text: r for r in records}
    prepared = PreparedTexts(
        AttackConfig(
            cache_dir="", use_document_curation=False, anonymize_background_knowledge=False
        )
    )
    SpyAttack.seen = []
    queries = {r.text_id: r.text for r in records}  # attack the clear text: a leak would show
    rows = run_budget(
        prepared, ["tfidf"], records, queries, budget, resamples=3, folds=4, seed=seed, factory=_spy
    )
    assert len(rows) == 3 * len(records)
    assert SpyAttack.seen
    for background, texts in SpyAttack.seen:
        known = {
            person: [by_text[t] for t in profile.split(TEXT_SEPARATOR)]
            for person, profile in background.items()
        }
        for person, described in known.items():
            assert budget is None or len(described) <= budget
            assert all(r.target == person for r in described)
        for text in texts:
            query = by_text[text]
            for other in known.get(query.target, []):
                assert other.text_id != query.text_id
                assert not (query.writer and other.writer == query.writer)


def test_budgets_keep_b_texts_per_candidate_and_all_keeps_every_text_outside_the_fold():
    records = _records()
    for budget in (1, 3):
        for draw in budget_draws(records, budget, resamples=2, folds=5, seed=1):
            assert {len(ids) for ids in draw.background_ids.values()} == {budget}
    everything = budget_draws(records, None, resamples=1, folds=5, seed=1)
    for draw in everything:
        outside = {r.text_id for r in records} - set(draw.test_ids)
        assert {i for ids in draw.background_ids.values() for i in ids} == outside


def test_the_same_seed_gives_the_same_draws_and_another_seed_or_resample_others():
    records = _records()
    first = budget_draws(records, 2, resamples=4, folds=5, seed=9)
    again = budget_draws(records, 2, resamples=4, folds=5, seed=9)
    other = budget_draws(records, 2, resamples=4, folds=5, seed=10)
    assert first == again
    assert first != other
    by_resample = [[d.background_ids for d in first if d.resample == r] for r in range(4)]
    assert by_resample[0] != by_resample[1]


def test_attacked_texts_are_limited_but_every_record_is_background():
    records = _records()
    attacked = {r.text_id for r in records[:20]}
    draws = budget_draws(records, None, resamples=1, folds=5, seed=0, attacked=attacked)
    assert sorted(i for d in draws for i in d.test_ids) == sorted(attacked)
    used = {i for d in draws for ids in d.background_ids.values() for i in ids}
    assert used - attacked  # the texts not attacked still serve as background


def test_a_leaking_draw_is_refused():
    records = _records()
    draws = budget_draws(records, 2, resamples=1, folds=5, seed=0)
    victim = draws[0].test_ids[0]
    person = next(r.target for r in records if r.text_id == victim)
    draws[0].background_ids[person] = [victim]
    with pytest.raises(FoldError, match="own background"):
        check_draws(records, draws, 2)


@pytest.mark.parametrize("value", ["0", "-1", "two", 0])
def test_a_bad_budget_is_refused(value):
    with pytest.raises(ValueError, match="budget"):
        parse_budget(value)


def test_budgets_parse():
    assert parse_budget("all") is None
    assert parse_budget(None) is None
    assert parse_budget("4") == 4


def test_a_real_attack_at_budget_one_still_links_texts():
    records = [
        BackgroundRecord(f"{p}{n}", p, f"w{n}", f"{p} {fact} number {n}")
        for p, fact in {
            "alma": "paints rivers",
            "bruno": "plays chess",
            "cleo": "bakes bread",
        }.items()
        for n in range(6)
    ]
    prepared = PreparedTexts(AttackConfig(cache_dir=""))
    queries = {r.text_id: r.text.split(" number")[0] for r in records}
    rows = run_budget(prepared, ["tfidf"], records, queries, 1, resamples=2, folds=3, seed=0)
    assert len(rows) == 2 * len(records)
    assert sum(row["true_rank"] == 1 for row in rows) / len(rows) > 0.9


def test_the_cli_attacks_the_example_at_each_budget_and_refuses_tria(tmp_path, capsys):
    import json

    from attacks.cli import main

    example = "docs/examples/crowd_descriptions.jsonl"
    args = ["budget", "--descriptions", example, "--attack", "tfidf", "--budget", "1,all"]
    assert main([*args, "--resamples", "2", "--folds", "3", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert set(summary["knowledge_budget"]) == {"1", "all"}
    assert summary["knowledge_budget"]["1"]["tfidf"]["n"] == 9
    assert summary["knowledge_budget"]["1"]["tfidf"]["resamples"] == 2
    ranks = (tmp_path / "ranks.jsonl").read_text().splitlines()
    assert len(ranks) == 2 * 9 * 2
    assert (
        main(["budget", "--descriptions", example, "--attack", "tria", "--out", str(tmp_path)]) == 2
    )
    assert main([*args[:-1], "0", "--out", str(tmp_path)]) == 2
    assert "budget" in capsys.readouterr().err
