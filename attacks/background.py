"""Cross-validated background knowledge built from a study's own descriptions.

When no outside text about the target persons exists, an attacker's background can be the
other descriptions of the same persons: k folds, and each text is attacked with a
background made from the texts outside its fold. Two rules keep the estimate honest:

- a text is never in its own background;
- no text by the same writer about the same person is in its background either (a writer
  repeats their own phrasing, which would overstate the risk), where the writer is known.

Both hold by construction: every (writer, target) pair is one group that lands in one fold
(a text with an unknown writer is a group of its own), and a fold's background is built
only from the other folds. Groups are dealt to folds per target, so every person's texts
spread over the folds and each fold's background holds as many persons as possible.

The API is stable (issue 13 reuses it): ``BackgroundRecord``, ``assign_folds``,
``cross_validation_folds`` -> ``[Fold]``, and ``check_folds``.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

# Texts of one person inside a background are joined by a blank line, so sentence and
# window splitters see a boundary between two writers.
TEXT_SEPARATOR = "\n\n"

# The one background-document format of the platform, the guard and the docs: a row per
# document, {"target": person key, "text": ...} (docs/examples/background.jsonl). "name"
# (the guard's earlier key, TRIA's individual column) is accepted for the person where it
# is unambiguous: alone, or equal to "target".
BACKGROUND_PERSON_KEY = "target"
BACKGROUND_PERSON_ALIASES = ("name",)


def background_row(values: dict, where: str) -> tuple[str, str]:
    """Return (person, text) of one background row, or raise ValueError naming the field.

    `where` names the file and line for the message, e.g. "bg.jsonl, line 3".
    """
    keys = [BACKGROUND_PERSON_KEY, *BACKGROUND_PERSON_ALIASES]
    given = {key: values[key] for key in keys if values.get(key) not in (None, "")}
    persons = {v.strip() if isinstance(v, str) else v for v in given.values()}
    if len(persons) > 1:
        fields = " and ".join(repr(k) for k in given)
        raise ValueError(f"{where}: fields {fields} name different persons; keep 'target'")
    person = next(iter(persons), None)
    if not isinstance(person, str) or not person:
        raise ValueError(f"{where}, field 'target': missing or empty")
    text = values.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{where}, field 'text': missing or empty")
    return person, text.strip()


class FoldError(ValueError):
    """Raise for records or folds that break the cross-validation rules."""


@dataclass(frozen=True)
class BackgroundRecord:
    """One description: its id, the person it describes, its writer (None = unknown), text."""

    text_id: str
    target: str
    writer: str | None
    text: str


@dataclass
class Fold:
    """One cross-validation fold: texts attacked here and the background they are attacked with.

    ``background`` maps each person to the joined texts about them outside this fold (the
    ``Attack.fit`` input); ``background_ids`` names those texts. Persons whose every text is
    in this fold are absent from ``background``: their texts can never be matched here.
    """

    index: int
    test_ids: list[str]
    background: dict[str, str] = field(default_factory=dict)
    background_ids: dict[str, list[str]] = field(default_factory=dict)

    def missing_targets(self, records: Sequence[BackgroundRecord]) -> set[str]:
        """Return the persons attacked in this fold that have no background in it."""
        test = set(self.test_ids)
        return {r.target for r in records if r.text_id in test} - set(self.background)


def _group_key(record: BackgroundRecord) -> Hashable:
    """Return the unit that must stay in one fold: (writer, target), or the text alone."""
    if record.writer:
        return ("writer", record.writer, record.target)
    return ("text", record.text_id)


def _validate(records: Sequence[BackgroundRecord], folds: int) -> None:
    if folds < 2:
        raise FoldError(f"folds must be at least 2, got {folds}")
    seen: set[str] = set()
    for record in records:
        if record.text_id in seen:
            raise FoldError(f"text id {record.text_id!r} appears twice")
        if not record.target:
            raise FoldError(f"text {record.text_id!r} has no target person")
        seen.add(record.text_id)


def assign_folds(
    records: Sequence[BackgroundRecord], *, folds: int = 5, seed: int = 0
) -> dict[str, int]:
    """Return text_id -> fold (0..folds-1); the same records, folds and seed give the same
    assignment.

    Each person's (writer, person) groups are shuffled and dealt round-robin, starting where
    the previous person stopped, so fold sizes stay balanced across persons.
    """
    _validate(records, folds)
    rng = random.Random(seed)
    groups_by_target: dict[str, dict[Hashable, list[str]]] = {}
    for record in records:
        groups = groups_by_target.setdefault(record.target, {})
        groups.setdefault(_group_key(record), []).append(record.text_id)
    fold_of: dict[str, int] = {}
    next_fold = 0
    for target in sorted(groups_by_target):
        groups = list(groups_by_target[target].values())
        rng.shuffle(groups)
        for text_ids in groups:
            for text_id in text_ids:
                fold_of[text_id] = next_fold
            next_fold = (next_fold + 1) % folds
    return fold_of


def cross_validation_folds(
    records: Sequence[BackgroundRecord], *, folds: int = 5, seed: int = 0
) -> list[Fold]:
    """Return the folds; fold i attacks its texts with a background of every other fold's."""
    fold_of = assign_folds(records, folds=folds, seed=seed)
    text_of = {r.text_id: r.text for r in records}
    made = [Fold(index=i, test_ids=[]) for i in range(folds)]
    for record in records:
        made[fold_of[record.text_id]].test_ids.append(record.text_id)
    for fold in made:
        parts: dict[str, list[str]] = {}
        for record in records:
            if fold_of[record.text_id] != fold.index:
                parts.setdefault(record.target, []).append(record.text_id)
        fold.background_ids = dict(sorted(parts.items()))
        fold.background = {
            target: TEXT_SEPARATOR.join(text_of[i].strip() for i in ids)
            for target, ids in fold.background_ids.items()
        }
    check_folds(records, made)
    return made


def check_folds(records: Sequence[BackgroundRecord], folds: Sequence[Fold]) -> None:
    """Raise FoldError unless every text is attacked once and no background holds it or its twin.

    A twin is another text by the same (known) writer about the same person.
    """
    by_id = {r.text_id: r for r in records}
    attacked: dict[str, int] = {}
    for fold in folds:
        for text_id in fold.test_ids:
            if text_id in attacked:
                raise FoldError(
                    f"text {text_id!r} is attacked in folds {attacked[text_id]} and {fold.index}"
                )
            attacked[text_id] = fold.index
    missing = set(by_id) - set(attacked)
    if missing:
        raise FoldError(f"{len(missing)} texts are in no fold, e.g. {sorted(missing)[0]!r}")
    for fold in folds:
        background = {i for ids in fold.background_ids.values() for i in ids}
        for text_id in fold.test_ids:
            record = by_id[text_id]
            if text_id in background:
                raise FoldError(f"text {text_id!r} is in its own background (fold {fold.index})")
            if record.writer:
                for other_id in fold.background_ids.get(record.target, []):
                    if by_id[other_id].writer == record.writer:
                        raise FoldError(
                            f"text {other_id!r} by the writer of {text_id!r} about the same "
                            f"person is in its background (fold {fold.index})"
                        )
