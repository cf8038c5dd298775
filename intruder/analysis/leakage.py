"""Leakage n-grams: what intruders said revealed the person, or what they could still tell.

Paper Tables 5 and 8: the top uni-, bi- and trigrams of "what revealed the identity for
you?" in successful identifications, per person; Table 6: the same from "what can you tell
about the person" in unsuccessful ones. Stopwords are removed *before* n-grams are formed
(paper footnote 10), so "married a spice girl" yields "married_spice_girl"; words are joined
with "_". N-grams of all three orders are ranked together by how often they occur (ties:
shorter n-gram first, then alphabetical), like a top-features list over one dfm of
uni-, bi- and trigrams.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

import pandas as pd

from intruder.analysis.frames import judged_texts
from intruder.analysis.text import STOPWORDS, word_tokens

Outcome = Literal["identified", "not_identified"]
SOURCE_OF: dict[str, str] = {"identified": "revealing_text", "not_identified": "other_knowledge"}
COLUMNS = [
    "group",
    "target_key",
    "target_name",
    "rank",
    "ngram",
    "n",
    "count",
    "n_answers_with",
    "n_answers",
]


def content_tokens(text: str | None, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """Return the lower-cased word tokens of `text` without stopwords."""
    return [token for token in word_tokens(text) if token not in stopwords]


def ngrams(tokens: list[str], orders: Iterable[int] = (1, 2, 3), joiner: str = "_") -> list[str]:
    """Return the n-grams of `tokens` for each order in `orders`, words joined by `joiner`."""
    grams: list[str] = []
    for n in orders:
        grams += [joiner.join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    return grams


def top_ngrams_of(answers: Iterable[str], k: int = 10) -> list[tuple[str, int, int]]:
    """Return the top-`k` (ngram, count, answers containing it) over `answers`."""
    counts: Counter[str] = Counter()
    answer_counts: Counter[str] = Counter()
    for answer in answers:
        grams = ngrams(content_tokens(answer))
        counts.update(grams)
        answer_counts.update(set(grams))
    ranked = sorted(counts, key=lambda g: (-counts[g], g.count("_"), g))
    return [(gram, counts[gram], answer_counts[gram]) for gram in ranked[:k]]


def leakage_ngrams(
    judgments: pd.DataFrame,
    texts: pd.DataFrame,
    threshold: float,
    outcome: Outcome = "identified",
    k: int = 10,
) -> pd.DataFrame:
    """Return the top-`k` n-grams per target person, one row per (person, rank).

    outcome="identified": from revealing_text of judgments with cosine >= threshold
    (Tables 5, 8); outcome="not_identified": from other_knowledge of the others (Table 6).
    Persons with no such (non-empty) answer get no rows.
    """
    if outcome not in SOURCE_OF:
        raise ValueError(f"outcome must be one of {sorted(SOURCE_OF)}, got {outcome!r}")
    judged = judged_texts(judgments, texts, threshold)
    wanted = judged["identified"] if outcome == "identified" else ~judged["identified"]
    source = SOURCE_OF[outcome]
    answers = judged[wanted & judged[source].fillna("").str.strip().ne("")]
    rows = []
    for (group, key, name), part in answers.groupby(["group", "target_key", "target_name"]):
        for rank, (gram, count, with_gram) in enumerate(top_ngrams_of(part[source], k), 1):
            rows.append(
                {
                    "group": group,
                    "target_key": key,
                    "target_name": name,
                    "rank": rank,
                    "ngram": gram,
                    "n": gram.count("_") + 1,
                    "count": count,
                    "n_answers_with": with_gram,
                    "n_answers": len(part),
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def paper_layout(ngram_table: pd.DataFrame) -> pd.DataFrame:
    """Return one row per person with its n-grams joined by ", " (the paper's layout)."""
    if ngram_table.empty:
        return pd.DataFrame(columns=["Name", "Top n-grams"])
    joined = (
        ngram_table.sort_values(["target_name", "rank"])
        .groupby("target_name", sort=True)["ngram"]
        .agg(", ".join)
    )
    return joined.rename("Top n-grams").rename_axis("Name").reset_index()
