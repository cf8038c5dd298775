"""The knowledge budget: attack with as much background as one crowd intruder has.

A k-fold attack knows each candidate through every other writer's description of them (43
per person in Textwash study 2), which no human intruder does. One writer's description of a
person is a fair stand-in for what one intruder knows about that person, so a budget of b
keeps b descriptions per candidate in the background, drawn at random:

- each of R resamples deals the texts into k folds as ``attacks.background`` does (a text and
  its writer's other texts about the same person land in one fold) with its own seed;
- each fold's background keeps b of every person's texts outside the fold, drawn with a
  seeded generator (all of them for b = all, which is the plain k-fold attack).

So a text is never in its own background, nor another text by its writer about the same
person, and the same records, budget, R, k and seed give the same draws. The draws are folds
of ``attacks.crossval`` (``budget_backgrounds``), attacked by its one loop; a text's outcome
over its draws is ``resampled_outcome`` (median rank, share ranked first).
"""

from __future__ import annotations

import dataclasses
import math
import random
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from attacks.background import BackgroundRecord, Fold, FoldError, assign_folds, check_folds
from attacks.base import Attack
from attacks.crossval import FoldBackground, attack_cells
from attacks.prediction import Prediction
from attacks.prepared import AttackFactory, PreparedTexts

ALL = "all"
DEFAULT_RESAMPLES = 10
MIN_RESAMPLES = 1
# run_budget attacks one set of texts, its queries: the one "method" of attack_cells' loop.
QUERY = "query"


def parse_budget(value: str | int | None) -> int | None:
    """Return a budget from "all"/None (every description) or a positive count."""
    if value is None or (isinstance(value, str) and value.strip().lower() in (ALL, "")):
        return None
    try:
        budget = int(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"budget must be a positive whole number or 'all', got {value!r}"
        ) from None
    if budget < 1:
        raise ValueError(f"budget must be at least 1, got {budget}")
    return budget


def budget_label(budget: int | None) -> str:
    """Return the budget as it is written in summaries and reports: "1", ..., "all"."""
    return ALL if budget is None else str(budget)


@dataclass(frozen=True)
class BudgetDraw:
    """One fold of one resample: texts attacked and the b texts known per candidate."""

    resample: int
    fold: int
    test_ids: list[str]
    background_ids: dict[str, list[str]]


def budget_draws(
    records: Sequence[BackgroundRecord],
    budget: int | None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    folds: int = 5,
    seed: int = 0,
    attacked: set[str] | None = None,
) -> list[BudgetDraw]:
    """Return every (resample, fold) draw; ``attacked`` limits the texts attacked (default all).

    Texts outside ``attacked`` still serve as background (the pooled open world: one study's
    texts attacked, both studies' persons as candidates).
    """
    if resamples < MIN_RESAMPLES:
        raise ValueError(f"resamples must be at least {MIN_RESAMPLES}, got {resamples}")
    draws = []
    for resample in range(resamples):
        # Distinct integer seeds per resample; the string seed of the draw is hashed by
        # random.Random with SHA-512, so it is the same on every machine and Python run.
        fold_of = assign_folds(records, folds=folds, seed=seed * 100_003 + resample)
        rng = random.Random(f"knowledge-budget:{seed}:{resample}")
        for fold in range(folds):
            outside: dict[str, list[str]] = {}
            for record in records:
                if fold_of[record.text_id] != fold:
                    outside.setdefault(record.target, []).append(record.text_id)
            background = {
                person: ids if budget is None or len(ids) <= budget else rng.sample(ids, budget)
                for person, ids in sorted(outside.items())
            }
            test_ids = [
                r.text_id
                for r in records
                if fold_of[r.text_id] == fold and (attacked is None or r.text_id in attacked)
            ]
            draws.append(BudgetDraw(resample, fold, test_ids, background))
    check_draws(records, draws, budget)
    return draws


def check_draws(
    records: Sequence[BackgroundRecord], draws: Sequence[BudgetDraw], budget: int | None
) -> None:
    """Raise FoldError if a draw leaks a text or its writer's twin, or exceeds the budget."""
    for resample in sorted({d.resample for d in draws}):
        mine = [d for d in draws if d.resample == resample]
        folds = [Fold(d.fold, list(d.test_ids), {}, d.background_ids) for d in mine]
        attacked = {i for d in mine for i in d.test_ids}
        # check_folds wants every record attacked once; texts kept as background only are
        # checked through a fold of their own that nothing else sees.
        rest = [r.text_id for r in records if r.text_id not in attacked]
        if rest:
            folds.append(Fold(len(folds), rest, {}, {}))
        check_folds(records, folds)
        for draw in mine:
            over = [p for p, ids in draw.background_ids.items() if budget and len(ids) > budget]
            if over:
                raise FoldError(f"resample {resample}: {over[0]!r} has more than {budget} texts")


def budget_backgrounds(
    records: Sequence[BackgroundRecord], draws: Sequence[BudgetDraw]
) -> list[FoldBackground]:
    """Return the draws (``budget_draws``) of ``records`` as folds of ``attacks.crossval``
    (raw texts per person, the resample set), for ``attack_cells`` to attack."""
    text_of = {r.text_id: r.text for r in records}
    return [
        FoldBackground.of_ids(d.fold, d.test_ids, d.background_ids, text_of, d.resample)
        for d in draws
    ]


@dataclass(frozen=True)
class ResampledOutcome:
    """One text's result over the draws that attacked it (the run's one TRIR counts
    ``true_rank == 1``)."""

    true_rank: int | None  # the median rank, unranked counted last; None when that is last
    true_prob: float | None  # the mean probability of the true person where it was ranked
    predicted: str  # agrees with true_rank (see resampled_outcome)
    hit_share: float  # the share of draws that ranked the true person first


def resampled_outcome(predictions: Sequence[Prediction]) -> ResampledOutcome:
    """Return a text's outcome over its draws' predictions (in draw order, at least one).

    The prediction is the true person when the median rank is 1, else the person most often
    ranked first among the others (the first so ranked on a tie), so ``predicted == target``
    and ``true_rank == 1`` never disagree.
    """
    ranks = [p.true_rank if p.true_rank is not None else math.inf for p in predictions]
    median = statistics.median_low(ranks)
    probs = [p.true_prob for p in predictions if p.true_prob is not None]
    if median == 1:
        predicted = str(predictions[0].true_name)
    else:
        others = Counter(p.predicted_name for p in predictions if p.predicted_name != p.true_name)
        predicted = others.most_common(1)[0][0] if others else ""
    return ResampledOutcome(
        true_rank=None if median == math.inf else int(median),
        true_prob=sum(probs) / len(probs) if probs else None,
        predicted=predicted,
        hit_share=sum(p.true_rank == 1 for p in predictions) / len(predictions),
    )


def run_budget(
    prepared: PreparedTexts,
    attacks: Sequence[str],
    records: Sequence[BackgroundRecord],
    queries: Mapping[str, str],
    budget: int | None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    folds: int = 5,
    seed: int = 0,
    reuse: dict[str, Attack] | None = None,
    factory: AttackFactory | None = None,
    distractors: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Attack ``queries`` (text id -> text to attack) at one budget; one row per draw and text.

    ``distractors`` (candidate -> its one document) are persons outside the records, added
    as they are to every draw's background and never attacked: each is known through one
    document, within any budget b >= 1, so the budget draws only the records' persons.

    The background is the records' texts (e.g. the clear descriptions); the query of a text
    is what is attacked (e.g. its anonymized version). Rows, in draw order: resample, fold,
    text_id, target, attack, candidates, true_rank (None when the person is not among the
    candidates), true_prob and predicted (the person ranked first). The loop is
    ``attacks.crossval.attack_cells`` (the platform's attack runs walk the same one).
    ``reuse`` keeps one attack instance per name across budgets (the dense embeddings).
    """
    target_of = {r.text_id: r.target for r in records}
    extra = {name: [text] for name, text in (distractors or {}).items()}
    clash = sorted(set(extra) & set(target_of.values()))
    if clash:
        raise ValueError(f"distractor {clash[0]!r} is a person of the records")
    chosen = budget_draws(
        records, budget, resamples=resamples, folds=folds, seed=seed, attacked=set(queries)
    )
    draws = [
        dataclasses.replace(draw, texts_by_person=draw.texts_by_person | extra)
        for draw in budget_backgrounds(records, chosen)
    ]
    rows = []
    for cell in attack_cells(
        prepared,
        draws,
        attacks,
        [QUERY],
        texts=lambda _, ids: {i: queries[i] for i in ids},
        true_names=target_of,
        remaining=lambda _fold, _name, _method, ids: [i for i in ids if i in queries],
        factory=factory,
        reuse={} if reuse is None else reuse,
        reusable=attacks,
    ):
        for text_id, found in (cell.draws or {}).items():
            for draw, prediction in found:
                rows.append(
                    {
                        "resample": draw.resample,
                        "fold": draw.index,
                        "text_id": text_id,
                        "target": target_of[text_id],
                        "attack": cell.attack_name,
                        "candidates": len(draw.texts_by_person),
                        "true_rank": prediction.true_rank,
                        "true_prob": prediction.true_prob,
                        "predicted": prediction.predicted_name,
                    }
                )
    # Draw by draw, each draw's attacks in their order, each attack's texts in the draw's.
    position = {name: n for n, name in enumerate(attacks)}
    place = {(d.resample, d.index, i): n for d in draws for n, i in enumerate(d.test_ids)}
    return sorted(
        rows,
        key=lambda r: (
            r["resample"],
            r["fold"],
            position[r["attack"]],
            place[r["resample"], r["fold"], r["text_id"]],
        ),
    )


def budget_trir(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Return attack -> TRIR % averaged over resamples, n texts, resamples and their range.

    Every resample attacks every text once, so the mean over rows is the mean over resamples.
    """
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(row["attack"] for row in rows):
        mine = [row for row in rows if row["attack"] == name]
        per_resample: dict[int, list[bool]] = {}
        for row in mine:
            per_resample.setdefault(row["resample"], []).append(row["true_rank"] == 1)
        rates = [100.0 * sum(v) / len(v) for v in per_resample.values()]
        out[name] = {
            "trir": 100.0 * sum(row["true_rank"] == 1 for row in mine) / len(mine),
            "n": len({row["text_id"] for row in mine}),
            "resamples": len(per_resample),
            "resample_min": min(rates),
            "resample_max": max(rates),
        }
    return out
