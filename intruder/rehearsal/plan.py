"""The rehearsal's plan: how precise the study's human rate will be, and what it takes.

The human rate is the share of judged texts identified under the study's rule (one text
judged by J intruders), with a Wilson 95 % interval (`intruder.analysis.intervals`). At a
design of N intruders judging m texts each, N * m / J texts are fully judged (no more than
the study has). The expected rate per text follows from the expected share q of judgments
naming the person (the crowd's right-name rate, Textwash Table 3 by default) and the rule:
"any" 1 - (1 - q)^J; "majority" P(Binomial(J, q) > J / 2); the paper's mean-cosine rule is
planned as "majority" (a text's mean cosine reaches 0.75 about when most judgments name the
person). Assumptions: judgments independent, q the same for every text of a group, and the
Wilson interval's coverage; a real study's q is what it measures, so the plan is a forecast.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from intruder.analysis.intervals import wilson


def text_rate(q: float, judgments: int, rule: str) -> float:
    """Return the expected share of texts identified when each judgment names with chance q."""
    if rule == "any":
        return 1 - (1 - q) ** judgments
    need = judgments // 2 + 1
    return sum(
        math.comb(judgments, k) * q**k * (1 - q) ** (judgments - k)
        for k in range(need, judgments + 1)
    )


def half_width(p: float, n: int) -> float | None:
    """Return the Wilson 95 % interval's half-width in points for a rate p over n texts."""
    if n <= 0:
        return None
    rate = wilson(round(p * n), n)
    return (rate.ci_high - rate.ci_low) / 2


def texts_needed(p: float, target: float, ceiling: int = 100_000) -> int | None:
    """Return the fewest judged texts whose interval half-width is at most `target` points."""
    low, high = 1, ceiling
    if (half_width(p, high) or 100) > target:
        return None
    while low < high:
        middle = (low + high) // 2
        if (half_width(p, middle) or 100) <= target:
            high = middle
        else:
            low = middle + 1
    return low


@dataclass(frozen=True)
class GroupPlan:
    """One group's (or the whole study's) forecast at the rehearsal's design."""

    group: str
    texts: int  # texts of the group in the study
    judged_texts: int  # fully judged at this design
    expected_rate_pct: float
    half_width_pct: float | None
    texts_for_target: int | None
    intruders_for_target: int | None
    note: str


def study_plan(
    *,
    texts_by_group: dict[str, int],
    q_by_group: dict[str, float],
    participants: int,
    items: int,
    judgments_per_text: int,
    rule: str,
    target_ci: float,
) -> list[GroupPlan]:
    """Return the plan per group and overall ("all" last) for `participants` intruders."""
    total_texts = sum(texts_by_group.values())
    judged_total = min(total_texts, participants * items // max(1, judgments_per_text))
    plans, expected = [], 0.0
    for group, texts in sorted(texts_by_group.items()):
        share = texts / total_texts if total_texts else 0
        judged = min(texts, round(judged_total * share))
        p = text_rate(q_by_group.get(group, 0.0), judgments_per_text, rule)
        expected += share * p
        plans.append(_plan(group, texts, judged, p, items, judgments_per_text, target_ci, share))
    plans.append(
        _plan("all", total_texts, judged_total, expected, items, judgments_per_text, target_ci, 1)
    )
    return plans


def _plan(
    group: str,
    texts: int,
    judged: int,
    p: float,
    items: int,
    per_text: int,
    target: float,
    share: float,
) -> GroupPlan:
    needed = texts_needed(p, target)
    intruders = None
    note = ""
    if needed is not None and share > 0:
        if needed > texts:
            note = f"needs {needed} judged texts; the study has {texts}: add texts"
        else:
            intruders = math.ceil(needed / share * per_text / max(1, items))
    return GroupPlan(
        group=group,
        texts=texts,
        judged_texts=judged,
        expected_rate_pct=round(100 * p, 2),
        half_width_pct=None if judged == 0 else round(half_width(p, judged) or 0, 2),
        texts_for_target=needed,
        intruders_for_target=intruders,
        note=note,
    )


def plan_dicts(plans: list[GroupPlan]) -> list[dict[str, Any]]:
    return [asdict(plan) for plan in plans]
