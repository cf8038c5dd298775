"""K-fold attacks: each fold's background as person -> texts, an attack fitted on it, and
the fold x attack x method loop over them.

One path for everything that attacks a corpus with its own other texts as the background
(the platform's attack runs, its guard job, the benchmarks): the folds come from
``attacks.background`` (no text in its own background, nor its writer's twin), the fit
from ``PreparedTexts`` (each text pretreated once, whatever the fold), and the fitted
``PreparedAttack`` predicts raw texts. ``attack_cells`` walks the folds, attacks and methods
and yields each cell's predictions; callers keep only what is theirs: which cells are still
to do (one resume hook, ``remaining``), progress and storage (the platform resumes per fold,
attack and method), or a background split in halves (the guard benchmark).

A knowledge budget (``attacks.budget``) is one more dimension of the same loop: its folds
are the draws of R resamples (``FoldBackground.resample``), and a cell then holds one attack's
predictions of one method's texts in every draw (``Cell.draws``), for the caller to reduce
per text.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from attacks.background import BackgroundRecord, cross_validation_folds
from attacks.base import Attack
from attacks.prediction import Prediction
from attacks.prepared import AttackFactory, PreparedAttack, PreparedTexts
from attacks.registry import get_attack


@dataclass(frozen=True)
class FoldBackground:
    """One fold: the texts attacked in it and each person's texts outside it (the fit input)."""

    index: int | None  # None: one background for every text (uploaded, not folded)
    test_ids: list[str]
    texts_by_person: dict[str, list[str]]
    resample: int | None = None  # the knowledge budget's draw this fold belongs to

    @classmethod
    def of_ids(
        cls,
        index: int,
        test_ids: Sequence[str],
        background_ids: Mapping[str, Sequence[str]],
        text_of: Mapping[str, str],
        resample: int | None = None,
    ) -> FoldBackground:
        """Return a fold (of a resample) whose background ids are turned into raw texts."""
        texts = {person: [text_of[i] for i in ids] for person, ids in background_ids.items()}
        return cls(index, list(test_ids), texts, resample)


def fold_backgrounds(
    records: Sequence[BackgroundRecord], *, folds: int = 5, seed: int = 0
) -> list[FoldBackground]:
    """Return the folds of ``records`` with each fold's background as person -> texts.

    The texts are raw: ``PreparedTexts`` pretreats and joins them, so every fold reuses
    one pretreatment of each text.
    """
    text_of = {r.text_id: r.text for r in records}
    return [
        FoldBackground.of_ids(fold.index, fold.test_ids, fold.background_ids, text_of)
        for fold in cross_validation_folds(records, folds=folds, seed=seed)
    ]


def run_backgrounds(
    records: Sequence[BackgroundRecord],
    *,
    uploaded: Mapping[str, Sequence[str]] | None = None,
    folds: int = 5,
    seed: int = 0,
) -> list[FoldBackground]:
    """Return the backgrounds a run attacks ``records`` with: the ``uploaded`` one (person ->
    texts) for every text, or else the folds of the records themselves."""
    if uploaded is not None:
        return [
            FoldBackground(
                index=None,
                test_ids=[r.text_id for r in records],
                texts_by_person={person: list(texts) for person, texts in uploaded.items()},
            )
        ]
    return fold_backgrounds(records, folds=folds, seed=seed)


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


@dataclass
class Cell:
    """One fold's predictions by one attack of one method's texts (text id -> raw text).

    ``predictions`` holds one per text, None for every text where the fold's background was
    empty; ``documents`` are the texts as pretreated for the attack; ``attack`` is the fitted
    attack (None without a background), for what the caller reads off it (shared terms,
    stats). A resampled cell (a knowledge budget: ``fold`` and ``attack`` None, no
    ``predictions``) holds instead each text's predictions in the draws that attacked it,
    in draw order, each beside its draw (``draws``).
    """

    fold: int | None
    attack_name: str
    method: str
    texts: dict[str, str]
    predictions: dict[str, Prediction | None]
    documents: dict[str, str] = field(default_factory=dict)
    attack: Attack | None = None
    draws: dict[str, list[tuple[FoldBackground, Prediction]]] | None = None


# The resume hook: (fold, attack, method, the fold's text ids) -> the ids still to predict.
Remaining = Callable[[int | None, str, str, list[str]], list[str]]


def attack_cells(
    prepared: PreparedTexts,
    folds: Sequence[FoldBackground],
    attacks: Sequence[str],
    methods: Sequence[str],
    *,
    texts: Callable[[str, list[str]], Mapping[str, str]],
    true_names: Mapping[str, str],
    remaining: Remaining,
    factory: AttackFactory | None = None,
    reuse: dict[str, Attack] | None = None,
    reusable: Collection[str] = (),
    on_fit: Callable[[FoldBackground, str], None] | None = None,
) -> Iterator[Cell]:
    """Yield each (fold, attack, method) cell still to do, attack fitted once per fold.

    ``remaining`` is the caller's resume rule: the cell's texts not yet done (all of them on
    a first run); an attack is fitted on a fold only when one of its cells has any.
    ``texts(method, ids)`` returns each id's text under ``method``; ``reuse`` serves the
    ``reusable`` attacks across folds (see ``fit_on_fold``); ``on_fit`` is told before each fit.

    Folds that are a knowledge budget's draws (``resample`` set) yield one cell per attack and
    method over all of them (fold None): ``remaining`` is asked once per such cell, with
    fold None and every text of the draws, and each method's texts are predicted apart in
    each draw (those of the draw still to do, in its order), so a text's predictions do not
    depend on which other methods are attacked; a draw with an empty background predicts
    nothing.
    """

    def fit(fold: FoldBackground, name: str) -> PreparedAttack | None:
        if on_fit is not None:
            on_fit(fold, name)
        mine = reuse if name in reusable else None
        return fit_on_fold(prepared, name, fold.texts_by_person, factory=factory, reuse=mine)

    def predict(
        fold: FoldBackground,
        name: str,
        method: str,
        chosen: dict[str, str],
        fitted: PreparedAttack | None,
    ) -> Cell:
        return _predicted(prepared, fold.index, name, method, chosen, fitted, true_names)

    if not any(fold.resample is not None for fold in folds):
        for fold in folds:
            for name in attacks:
                pending = {
                    m: ids
                    for m in methods
                    if (ids := remaining(fold.index, name, m, fold.test_ids))
                }
                if pending:
                    fitted = fit(fold, name)
                    for method, ids in pending.items():
                        yield predict(fold, name, method, dict(texts(method, ids)), fitted)
        return
    every = list(dict.fromkeys(i for draw in folds for i in draw.test_ids))
    for name in attacks:
        pending = {m: set(ids) for m in methods if (ids := remaining(None, name, m, every))}
        chosen = {m: dict(texts(m, [i for i in every if i in ids])) for m, ids in pending.items()}
        found: dict[str, dict[str, list[tuple[FoldBackground, Prediction]]]] = {
            m: {} for m in pending
        }
        for draw in folds:
            wanted = {
                method: mine
                for method, of_method in chosen.items()
                if (mine := {i: of_method[i] for i in draw.test_ids if i in of_method})
            }
            fitted = fit(draw, name) if wanted else None
            if fitted is None:
                continue
            for method, mine in wanted.items():
                cell = predict(draw, name, method, mine, fitted)
                for i, prediction in cell.predictions.items():
                    if prediction is not None:
                        found[method].setdefault(i, []).append((draw, prediction))
        for method in pending:
            yield Cell(None, name, method, chosen[method], {}, draws=found[method])


def _predicted(
    prepared: PreparedTexts,
    fold: int | None,
    name: str,
    method: str,
    chosen: dict[str, str],
    fitted: PreparedAttack | None,
    true_names: Mapping[str, str],
) -> Cell:
    """Return one cell: the chosen texts pretreated as the fold's background and predicted."""
    if fitted is None:
        return Cell(fold, name, method, chosen, dict.fromkeys(chosen))
    ids = list(chosen)
    treated = prepared.documents([chosen[i] for i in ids], curate=fitted.curate)
    documents = dict(zip(ids, treated, strict=True))
    found = fitted.fitted.predict(
        documents, top_k=prepared.config.top_k, true_names={i: true_names[i] for i in ids}
    )
    predictions: dict[str, Prediction | None] = {p.doc_id: p for p in found}
    return Cell(fold, name, method, chosen, predictions, documents, fitted.fitted)
