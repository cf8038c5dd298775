"""K-fold background integrity: no text in its own background, nor its writer's twin."""

from __future__ import annotations

import random

import pytest

from attacks.background import (
    BackgroundRecord,
    Fold,
    FoldError,
    assign_folds,
    check_folds,
    cross_validation_folds,
)


def _records(seed: int = 1, persons: int = 6, writers: int = 9) -> list[BackgroundRecord]:
    """Build made-up records: some writers describe a person twice, some writers unknown."""
    rng = random.Random(seed)
    records = []
    for n in range(60):
        target = f"person{rng.randrange(persons)}"
        writer = None if n % 5 == 0 else f"w{rng.randrange(writers)}"
        records.append(BackgroundRecord(f"t{n}", target, writer, f"text {n} about {target}"))
    return records


@pytest.mark.parametrize("folds", [2, 3, 5, 10])
@pytest.mark.parametrize("seed", [0, 7])
def test_no_text_is_in_its_own_background_nor_a_same_writer_same_person_text(folds, seed):
    records = _records(seed)
    by_id = {r.text_id: r for r in records}
    made = cross_validation_folds(records, folds=folds, seed=seed)
    assert len(made) == folds
    assert sorted(i for f in made for i in f.test_ids) == sorted(by_id)
    for fold in made:
        for text_id in fold.test_ids:
            record = by_id[text_id]
            own_person_background = fold.background_ids.get(record.target, [])
            assert text_id not in {i for ids in fold.background_ids.values() for i in ids}
            assert record.text not in fold.background.get(record.target, "")
            if record.writer:
                assert all(by_id[o].writer != record.writer for o in own_person_background)


def test_background_holds_every_text_outside_the_fold_joined_per_person():
    records = [
        BackgroundRecord("a1", "A", "w1", "alpha one"),
        BackgroundRecord("a2", "A", "w2", "alpha two"),
        BackgroundRecord("b1", "B", None, "beta one"),
        BackgroundRecord("b2", "B", None, "beta two"),
    ]
    folds = cross_validation_folds(records, folds=2, seed=0)
    for fold in folds:
        outside = [r for r in records if r.text_id not in fold.test_ids]
        assert sorted(i for ids in fold.background_ids.values() for i in ids) == sorted(
            r.text_id for r in outside
        )
        for target, text in fold.background.items():
            assert text == "\n\n".join(r.text for r in outside if r.target == target)


def test_same_writer_same_person_texts_share_a_fold():
    records = [BackgroundRecord(f"t{i}", "A", "w1", f"x{i}") for i in range(4)]
    records += [BackgroundRecord(f"u{i}", "A", f"v{i}", f"y{i}") for i in range(4)]
    fold_of = assign_folds(records, folds=4, seed=3)
    assert len({fold_of[f"t{i}"] for i in range(4)}) == 1


def test_folds_are_deterministic_and_seed_dependent():
    records = _records(2)
    assert assign_folds(records, folds=5, seed=4) == assign_folds(records, folds=5, seed=4)
    assert assign_folds(records, folds=5, seed=4) != assign_folds(records, folds=5, seed=5)


def test_folds_are_balanced_in_size():
    records = [BackgroundRecord(f"t{i}", f"p{i % 7}", None, "x") for i in range(70)]
    sizes = [len(f.test_ids) for f in cross_validation_folds(records, folds=5, seed=0)]
    assert max(sizes) - min(sizes) <= 1


def test_a_person_with_one_writer_has_no_background_in_that_writers_fold():
    records = [
        BackgroundRecord("a1", "A", "w1", "alpha"),
        BackgroundRecord("a2", "A", "w1", "alpha again"),
        BackgroundRecord("b1", "B", "w2", "beta"),
        BackgroundRecord("b2", "B", "w3", "beta again"),
    ]
    folds = cross_validation_folds(records, folds=2, seed=0)
    fold = next(f for f in folds if "a1" in f.test_ids)
    assert "A" not in fold.background
    assert fold.missing_targets(records) == {"A"}


@pytest.mark.parametrize(
    "records, folds, message",
    [
        ([BackgroundRecord("a", "A", None, "x")], 1, "folds must be at least 2"),
        ([BackgroundRecord("a", "A", None, "x")] * 2, 2, "appears twice"),
        ([BackgroundRecord("a", "", None, "x")], 2, "no target"),
    ],
)
def test_bad_records_are_refused_with_a_clear_error(records, folds, message):
    with pytest.raises(FoldError, match=message):
        cross_validation_folds(records, folds=folds)


def test_check_folds_catches_a_leaking_background():
    records = [
        BackgroundRecord("a1", "A", "w1", "x"),
        BackgroundRecord("a2", "A", "w1", "y"),
        BackgroundRecord("b1", "B", None, "z"),
    ]
    own = [Fold(0, ["a1"], {"A": "x"}, {"A": ["a1"]}), Fold(1, ["a2", "b1"], {}, {})]
    with pytest.raises(FoldError, match="own background"):
        check_folds(records, own)
    twin = [Fold(0, ["a1"], {"A": "y"}, {"A": ["a2"]}), Fold(1, ["a2", "b1"], {}, {})]
    with pytest.raises(FoldError, match="writer"):
        check_folds(records, twin)
    with pytest.raises(FoldError, match="no fold"):
        check_folds(records, [Fold(0, ["a1"])])
