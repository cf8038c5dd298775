"""K-fold attacks from the library: the folds' backgrounds and one fit path for every caller."""

from __future__ import annotations

import pytest

from attacks import AttackConfig
from attacks.background import BackgroundRecord, cross_validation_folds
from attacks.crossval import attack_cells, fit_on_fold, fold_backgrounds, run_backgrounds
from attacks.prepared import PreparedTexts

PERSONS = {
    "alma": ["Alma paints rivers.", "Alma teaches drawing.", "Alma loves pottery."],
    "bruno": ["Bruno plays chess.", "Bruno teaches physics.", "Bruno loves rowing."],
    "cleo": ["Cleo bakes bread.", "Cleo teaches cooking.", "Cleo loves poetry."],
}
RECORDS = [
    BackgroundRecord(f"{person}{n}", person, f"writer{n}", text)
    for person, texts in PERSONS.items()
    for n, text in enumerate(texts)
]


def test_fold_backgrounds_hold_each_persons_raw_texts_outside_the_fold():
    text_of = {r.text_id: r.text for r in RECORDS}
    folds = fold_backgrounds(RECORDS, folds=3, seed=4)
    reference = cross_validation_folds(RECORDS, folds=3, seed=4)
    assert [f.test_ids for f in folds] == [f.test_ids for f in reference]
    for fold, ref in zip(folds, reference, strict=True):
        assert fold.index == ref.index
        assert fold.texts_by_person == {
            person: [text_of[i] for i in ids] for person, ids in ref.background_ids.items()
        }
        background = {text for texts in fold.texts_by_person.values() for text in texts}
        assert not {text_of[i] for i in fold.test_ids} & background


def test_an_empty_background_fits_nothing():
    prepared = PreparedTexts(AttackConfig(cache_dir=""))
    assert fit_on_fold(prepared, "tfidf", {}) is None


@pytest.mark.parametrize("name", ["tfidf", "bm25"])
def test_a_reused_attack_is_refitted_and_predicts_as_a_fresh_one(name):
    prepared = PreparedTexts(AttackConfig(cache_dir=""))
    reuse: dict = {}
    folds = fold_backgrounds(RECORDS, folds=3, seed=0)
    documents = {"d": "She teaches cooking and loves poetry."}
    truth = {"d": "cleo"}
    for fold in folds:
        reused = fit_on_fold(prepared, name, fold.texts_by_person, reuse=reuse)
        fresh = prepared.fit(name, fold.texts_by_person)
        assert reused is not None and reused.fitted is reuse[name]
        ours = reused.predict(documents, top_k=3, true_names=truth)
        theirs = fresh.predict(documents, top_k=3, true_names=truth)
        assert [(p.predicted_name, p.true_rank) for p in ours] == [
            (p.predicted_name, p.true_rank) for p in theirs
        ]
    first = reuse[name]
    fit_on_fold(prepared, name, folds[0].texts_by_person, reuse=reuse)
    assert reuse[name] is first


def _cells(remaining, *, on_fit=None):
    prepared = PreparedTexts(AttackConfig(cache_dir=""))
    text_of = {r.text_id: r.text for r in RECORDS}
    return list(
        attack_cells(
            prepared,
            fold_backgrounds(RECORDS, folds=3, seed=0),
            ["tfidf", "bm25"],
            ["clear", "upper"],
            texts=lambda method, ids: {
                i: text_of[i].upper() if method == "upper" else text_of[i] for i in ids
            },
            true_names={r.text_id: r.target for r in RECORDS},
            remaining=remaining,
            on_fit=on_fit,
        )
    )


def test_the_loop_yields_every_fold_attack_and_method_once_fitting_once_per_fold():
    fits: list[tuple[int | None, str]] = []
    cells = _cells(
        lambda fold, name, method, ids: ids, on_fit=lambda f, n: fits.append((f.index, n))
    )
    assert len(cells) == 3 * 2 * 2 and len(fits) == 3 * 2
    assert {(c.fold, c.attack_name, c.method) for c in cells} == {
        (f, a, m) for f in range(3) for a in ("tfidf", "bm25") for m in ("clear", "upper")
    }
    assert sorted(
        i for c in cells if c.attack_name == "bm25" and c.method == "clear" for i in c.texts
    ) == sorted(r.text_id for r in RECORDS)
    assert all(set(c.predictions) == set(c.texts) for c in cells)


def test_the_resume_hook_skips_finished_cells_and_fits_only_where_work_is_left():
    """A run resumed after a crash: the cells it stored are skipped, the rest predict as on a
    first run (the same predictions)."""
    first = {(c.fold, c.attack_name, c.method): c for c in _cells(lambda f, n, m, ids: ids)}
    done = {(0, "tfidf", "clear"), (0, "tfidf", "upper"), (1, "bm25", "upper")}
    fits: list[tuple[int | None, str]] = []
    resumed = _cells(
        lambda f, n, m, ids: [] if (f, n, m) in done else ids,
        on_fit=lambda f, n: fits.append((f.index, n)),
    )
    assert (0, "tfidf") not in fits and (1, "bm25") in fits
    assert {(c.fold, c.attack_name, c.method) for c in resumed} == set(first) - done
    for cell in resumed:
        theirs = first[(cell.fold, cell.attack_name, cell.method)]
        assert {i: (p.predicted_name, p.true_rank) for i, p in cell.predictions.items()} == {
            i: (p.predicted_name, p.true_rank) for i, p in theirs.predictions.items()
        }


def test_an_uploaded_background_is_one_unfolded_unit_for_every_text():
    (unit,) = run_backgrounds(RECORDS, uploaded={"alma": ["paints"], "bruno": ["chess"]})
    assert unit.index is None and unit.test_ids == [r.text_id for r in RECORDS]
    assert unit.texts_by_person == {"alma": ["paints"], "bruno": ["chess"]}
