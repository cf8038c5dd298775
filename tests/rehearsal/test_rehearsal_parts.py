"""The rehearsal's pure parts: the crowd's mix and draws, the plan, the database guard."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from intruder.analysis.intervals import wilson
from intruder.rehearsal.crowd import (
    DEFAULT_MIX,
    OVERCLAIM,
    Kind,
    MixError,
    crowd_draw,
    honest_guess,
    misspell,
    mix_for,
    mix_parse,
)
from intruder.rehearsal.plan import half_width, study_plan, text_rate, texts_needed
from intruder.rehearsal.players import Player
from intruder.rehearsal.runner import database_check


def test_the_default_mix_is_a_distribution_over_every_kind():
    # The random-name responder joins where catch trials can catch it (`mix_for`).
    assert set(DEFAULT_MIX) == set(Kind) - {Kind.RANDOM_FAMOUS}
    assert sum(DEFAULT_MIX.values()) == pytest.approx(1.0)
    assert mix_parse("") == DEFAULT_MIX
    with_catch = mix_for(DEFAULT_MIX, catch_trials=True, default=True)
    assert set(with_catch) == set(Kind) and sum(with_catch.values()) == pytest.approx(1.0)
    assert with_catch[Kind.RANDOM_FAMOUS] == 0.05
    assert mix_for(DEFAULT_MIX, catch_trials=False, default=True) == DEFAULT_MIX
    own = {Kind.HONEST_DESKTOP: 1.0}
    assert mix_for(own, catch_trials=True, default=False) == own  # a researcher's mix stays
    assert mix_parse("careless=0.25, honest_phone=0.75") == {
        Kind.CARELESS: 0.25,
        Kind.HONEST_PHONE: 0.75,
    }
    for bad in ("careless=2", "careless=x", "careless=0.5"):
        with pytest.raises(MixError):
            mix_parse(bad)


def test_a_crowd_holds_each_kind_at_its_share_by_largest_remainders():
    crowd = crowd_draw({Kind.HONEST_DESKTOP: 0.5, Kind.CARELESS: 0.3, Kind.CODE_ONLY: 0.2}, 7, 0)
    assert len(crowd) == 7
    counts = {kind: crowd.count(kind) for kind in set(crowd)}
    # 3.5, 2.1, 1.4 -> 3, 2, 1 and the largest remainder (0.5) gets the seventh.
    assert counts == {Kind.HONEST_DESKTOP: 4, Kind.CARELESS: 2, Kind.CODE_ONLY: 1}
    assert crowd_draw(DEFAULT_MIX, 50, 3) == crowd_draw(DEFAULT_MIX, 50, 3)


def guesses(
    count: int,
    rng: random.Random,
    *,
    person: str,
    others: list[str],
    rate: float,
    group: str = "famous",
    catch: bool = False,
) -> list:
    """`count` honest guesses at `person`, whose group's right rate is `rate`."""
    return [
        honest_guess(
            rng=rng, person=person, group=group, others=others, right_rate={group: rate},
            catch=catch,
        )
        for _ in range(count)
    ]  # fmt: skip


def test_honest_guesses_follow_the_rates_and_never_name_an_unknown_person_by_chance():
    rng = random.Random(0)
    draws = guesses(5000, rng, person="Ada Lovelace", others=["Bob Marley"], rate=0.2)
    right = sum(g.names_the_person for g in draws) / len(draws)
    assert 0.18 < right < 0.22
    assert {g.intent for g in draws} == {
        "right",
        "misspelled",
        "other_person",
        "famous_name",
        "dont_know",
    }
    assert all(g.name == "Bob Marley" for g in draws if g.intent == "other_person")
    # A random famous name is never a person of the study (it would not be a wrong guess).
    study = guesses(2000, rng, person="Judi Dench", others=["Keanu Reeves"], rate=0.0)
    assert {g.name for g in study if g.intent == "famous_name"}.isdisjoint(
        {"Judi Dench", "Keanu Reeves"}
    )
    assert misspell("Ada Lovelace", random.Random(1)) != "Ada Lovelace"


def test_an_honest_intruder_names_someone_for_a_made_up_person_at_the_overclaim_rate():
    rng = random.Random(0)
    # A catch trial's person is never named, whatever the group's rate.
    draws = guesses(
        5000, rng, person="Liana Glover", others=["Judi Dench"], rate=1.0, group="fictitious",
        catch=True,
    )  # fmt: skip
    assert {g.intent for g in draws} == {"famous_name", "dont_know"}
    named = sum(g.intent == "famous_name" for g in draws) / len(draws)
    assert OVERCLAIM - 0.01 < named < OVERCLAIM + 0.01
    assert "Judi Dench" not in {g.name for g in draws}


def test_the_plan_against_a_hand_computation():
    # "any" rule, q = 0.2, J = 3: 1 - 0.8^3 = 0.488; majority: 3 * 0.2^2 * 0.8 + 0.2^3 = 0.104.
    assert text_rate(0.2, 3, "any") == pytest.approx(0.488)
    assert text_rate(0.2, 3, "majority") == pytest.approx(0.104)
    rate = wilson(10, 40)
    assert half_width(0.25, 40) == pytest.approx((rate.ci_high - rate.ci_low) / 2)
    needed = texts_needed(0.25, 5.0)
    assert half_width(0.25, needed) <= 5.0 < half_width(0.25, needed - 1)
    plans = study_plan(
        texts_by_group={"famous": 100},
        q_by_group={"famous": 0.2},
        participants=30,
        items=10,
        judgments_per_text=3,
        rule="any",
        target_ci=5.0,
    )
    overall = plans[-1]
    assert overall.group == "all" and overall.judged_texts == 100  # 30 x 10 / 3
    assert overall.expected_rate_pct == pytest.approx(48.8)
    assert overall.texts_for_target == texts_needed(0.488, 5.0)
    assert "add texts" in overall.note  # 100 texts cannot reach +-5 points at 48.8 %


def test_the_runner_refuses_any_database_but_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://real/study")
    with pytest.raises(SystemExit, match="refusing to run"):
        database_check(tmp_path)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{(tmp_path / 'rehearsal.sqlite3').resolve()}")
    database_check(tmp_path)


def test_the_runner_takes_only_a_postgresql_database_named_for_a_rehearsal(tmp_path, monkeypatch):
    for refused in ("postgres://h/study", "postgres://h/rehearsal", "mysql://h/rehearsal_x"):
        monkeypatch.setenv("DATABASE_URL", refused)
        with pytest.raises(SystemExit, match="refusing to run"):
            database_check(tmp_path)
    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rehearsal_bench")
    database_check(tmp_path)  # its tables are checked once Django is set up


def test_a_player_the_rehearsal_fails_is_named_not_lost():
    """A failure of the rehearsal's own (500 threads once took every PostgreSQL connection)
    becomes the player's error, which the invariants count as `players_failed`, instead of a
    record that is missing and a rehearsal that crashes at its verdict."""

    class Broken:
        def submission_start(self, study_id: str, pid: str) -> str:
            raise RuntimeError("too many clients already")

    stage = SimpleNamespace(site="http://127.0.0.1:9", fake=Broken(), prolific_study_id="s")
    record = Player(stage, Kind.HONEST_DESKTOP, 0, 0).play()

    assert record.errors == ["rehearsal: RuntimeError('too many clients already')"]
    assert not record.entered and record.cpu_seconds >= 0
