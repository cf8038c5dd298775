"""One pretreatment path: `PreparedTexts.fit` attacks predict raw texts as the attack itself."""

from __future__ import annotations

import pytest

from attacks import AttackConfig, get_attack
from attacks.prepared import PreparedAttack, PreparedTexts

BACKGROUND = {
    "alma": ["Alma paints rivers and teaches drawing.", "She loves pottery at home."],
    "bruno": ["Bruno paints rivers and teaches drawing.", "He loves chess at home."],
    "cleo": ["Cleo paints rivers and teaches drawing.", "She loves baking at home."],
}
DOCUMENTS = {"d1": "PERSON loves pottery.", "d2": "He plays chess at home.", "d3": "Baking!"}
TRUTH = {"d1": "alma", "d2": "bruno", "d3": "cleo"}


@pytest.mark.parametrize("name", ["tfidf", "bm25"])
def test_prepared_attack_predicts_raw_texts_like_the_attack_on_its_own(name):
    config = AttackConfig(cache_dir="")
    prepared = PreparedTexts(config).fit(name, BACKGROUND)
    assert isinstance(prepared, PreparedAttack) and prepared.name == name
    own = get_attack(name, config)
    own.fit({person: "\n\n".join(texts) for person, texts in BACKGROUND.items()})
    ours = prepared.predict(DOCUMENTS, top_k=3, true_names=TRUTH)
    theirs = own.predict(DOCUMENTS, top_k=3, true_names=TRUTH)
    assert [p.true_rank for p in ours] == [p.true_rank for p in theirs]
    assert [p.predicted_name for p in ours] == [p.predicted_name for p in theirs]
    assert prepared.names == own.names
