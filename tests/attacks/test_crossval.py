"""K-fold attacks from the library: the folds' backgrounds and one fit path for every caller."""

from __future__ import annotations

import pytest

from attacks import AttackConfig
from attacks.background import BackgroundRecord, cross_validation_folds
from attacks.crossval import fit_on_fold, fold_backgrounds
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
    folds = fold_backgrounds(RECORDS, k=3, seed=4)
    reference = cross_validation_folds(RECORDS, k=3, seed=4)
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
    folds = fold_backgrounds(RECORDS, k=3, seed=0)
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
