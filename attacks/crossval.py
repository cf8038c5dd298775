"""K-fold attacks: each fold's background as person -> texts, and an attack fitted on it.

One path for everything that attacks a corpus with its own other texts as the background
(the platform's attack runs, its guard job, the benchmarks): the folds come from
``attacks.background`` (no text in its own background, nor its writer's twin), the fit
from ``PreparedTexts`` (each text pretreated once, whatever the fold), and the fitted
``PreparedAttack`` predicts raw texts. Callers keep only what is theirs: which folds and
attacks are still to do, progress and storage (the platform resumes per fold, attack and
method), or a background split in halves (the guard benchmark).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from attacks.background import BackgroundRecord, cross_validation_folds
from attacks.base import Attack
from attacks.prepared import AttackFactory, PreparedAttack, PreparedTexts
from attacks.registry import get_attack


@dataclass(frozen=True)
class FoldBackground:
    """One fold: the texts attacked in it and each person's texts outside it (the fit input)."""

    index: int
    test_ids: list[str]
    texts_by_person: dict[str, list[str]]


def fold_backgrounds(
    records: Sequence[BackgroundRecord], *, k: int = 5, seed: int = 0
) -> list[FoldBackground]:
    """Return the k folds of ``records`` with each fold's background as person -> texts.

    The texts are raw: ``PreparedTexts`` pretreats and joins them, so every fold reuses
    one pretreatment of each text.
    """
    text_of = {r.text_id: r.text for r in records}
    return [
        FoldBackground(
            index=fold.index,
            test_ids=list(fold.test_ids),
            texts_by_person={
                person: [text_of[i] for i in ids] for person, ids in fold.background_ids.items()
            },
        )
        for fold in cross_validation_folds(records, k=k, seed=seed)
    ]


def fit_on_fold(
    prepared: PreparedTexts,
    name: str,
    texts_by_person: Mapping[str, Sequence[str]],
    *,
    factory: AttackFactory | None = None,
    reuse: dict[str, Attack] | None = None,
) -> PreparedAttack | None:
    """Fit attack ``name`` on one fold's background; None when the background is empty.

    ``reuse`` (name -> an attack fitted before) refits that instance instead of building a
    new one: a loaded encoder and its embedding cache then serve every fold. The caller
    passes it only for attacks whose ``fit`` starts afresh (the cheap ones).
    """
    curate = prepared.curates(name)
    background = prepared.background(texts_by_person, curate=curate)
    if not background:
        return None
    attack = (reuse or {}).get(name) or (factory or get_attack)(name, prepared.attack_config())
    if reuse is not None:
        reuse[name] = attack
    attack.fit(background)
    return PreparedAttack(attack, prepared, curate)
