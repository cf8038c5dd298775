"""The risk report's privacy-utility frontier: TRIR beside TPI per method, its own section."""

from __future__ import annotations

import pandas as pd
import pytest
from django.urls import reverse

from intruder.risk.frontier import frontier_table
from intruder.risk.report.tables import machine_per_text, trir_by_method
from intruder.risk.stats import strongest_null
from tests.intruder.factories import logged_in
from tests.intruder.risk_fixtures import finished_cheap_run


def _results() -> pd.DataFrame:
    """Two methods x two attacks x four texts over persons a..d (hand-countable)."""
    rows = []
    outcomes = {
        # method: attack -> true ranks of texts 1..4
        "clear": {"tfidf": [1, 1, 1, 2], "bm25": [1, 1, 2, 1]},
        "masked": {"tfidf": [1, 3, 4, 2], "bm25": [2, 3, 4, 2]},
    }
    for method, by_attack in outcomes.items():
        for attack, ranks in by_attack.items():
            for text, rank in enumerate(ranks, 1):
                person = "abcd"[text - 1]
                rows.append(
                    {
                        "description_id": text,
                        "method": method,
                        "attack": attack,
                        "true_rank": rank,
                        "predicted_key": person if rank == 1 else "z",
                        "target_key": person,
                        "masked_share": 0.0 if method == "clear" else 0.5,
                        "true_prob": 0.5,
                        "target_name": person.upper(),
                        "group": "famous",
                        "external_id": f"t{text}",
                    }
                )
    return pd.DataFrame(rows)


def _frontier(tpi: dict) -> pd.DataFrame:
    """The frontier as the report makes it: from its TRIR table and its chance levels."""
    results = _results()
    chance = {m: strongest_null(results, m, permutations=200) for m in ("clear", "masked")}
    return frontier_table(trir_by_method(machine_per_text(results)), tpi, chance)


def test_frontier_table_gives_trir_per_attack_strongest_tpi_and_dominance():
    table = _frontier({"clear": 100.0, "masked": 60.0}).set_index("method")
    assert table.loc["clear", "trir_tfidf"] == 75.0 and table.loc["clear", "trir_bm25"] == 75.0
    assert table.loc["clear", "trir_strongest"] == 100.0  # each text hit by one attack or other
    assert table.loc["masked", "trir_strongest"] == 25.0
    assert table.loc["masked", "pct_words_masked"] == 50.0
    assert 0.0 <= table.loc["masked", "strongest_null_pct"] <= 100.0
    # Neither has both lower TRIR and higher TPI than the other.
    assert not table["dominated"].any()
    # Every TRIR has its Wilson interval (n = 4 texts).
    assert table.loc["masked", "strongest_ci_low"] < 25.0 < table.loc["masked", "strongest_ci_high"]
    worse = _frontier({"clear": 50.0, "masked": 60.0}).set_index("method")
    assert worse.loc["clear", "dominated"] and not worse.loc["masked", "dominated"]


def test_frontier_without_tpi_keeps_the_trir_columns():
    table = _frontier({})
    assert table["tpi"].isna().all() and not table["dominated"].any()
    assert frontier_table(pd.DataFrame(), {}, {}).empty


@pytest.mark.django_db
def test_a_finished_run_stores_tpi_and_the_risk_page_shows_the_frontier():
    run = finished_cheap_run(["textwash-model", "clear"])
    tpi = run.summary["tpi"]
    assert tpi["metric"] == "TPI-wordfreq" and tpi["ic_source"] == "wordfreq"
    assert tpi["methods"]["clear"] == 100.0
    assert 0.0 <= tpi["methods"]["textwash-model"] < 100.0
    response = logged_in(run.study.owner).get(reverse("risk-page", args=[run.study.slug]))
    body = response.content.decode()
    assert 'id="frontier"' in body and "TPI-wordfreq" in body
    assert "not paper 002's TPI" in body
