"""Curation keeps placeholders apart from real words; the reference mode curates them as words."""

from __future__ import annotations

import json

import pytest

from attacks import AttackConfig
from attacks.curation import (
    PLACEHOLDER_MARK,
    curate_texts,
    is_placeholder,
    open_curation_cache,
    spacy_model_id,
    text_key,
)
from attacks.prepared import PreparedTexts

# Sam Smith's case: only one person's background holds the real word "pronoun".
BACKGROUND = {
    "alma": ["Alma paints rivers and teaches drawing in Leeds."],
    "zoe": ["Zoe talks about her pronouns; a pronoun matters to Zoe."],
    "bruno": ["Bruno plays chess and teaches drawing in Leeds."],
}
# A heavily masked text: nothing left but placeholders.
MASKED = "PRONOUN is a OCCUPATION_1 from LOCATION_2. PRONOUN said TIME."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PRONOUN", "_PRONOUN"),
        ("LOCATION_2", "_LOCATION_2"),
        ("NUMERIC_5st", "_NUMERIC_5st"),
        ("PERSON_FIRSTNAME_1 PERSON_LASTNAME_1", "_PERSON_FIRSTNAME_1 _PERSON_LASTNAME_1"),
        ("MR/MS", "_MR / _MS"),
        ("TIME", "_TIME"),  # a bare category (Textwash writes some) and a spaCy NER label
        ("born in GPE", "bear _GPE"),  # B_D' masks (spaCy NER labels)
        ("SENSITIVE", "_SENSITIVE"),  # the reference's manual masks
        ("REIDENTIFYING_3", "_REIDENTIFYING_3"),  # the guard's
        ("they use pronouns", "use pronoun"),  # real words and acronyms are words
        ("The USA and NASA", "the USA NASA"),
        ("Time passes", "time pass"),
    ],
)
def test_placeholders_curate_to_a_token_no_real_word_curates_to(text, expected):
    [curated] = curate_texts([text])
    assert curated.strip() == expected


def test_a_placeholder_never_equals_a_curated_real_word():
    real = curate_texts(["Pronoun and pronouns, time and a person: titles, dates, locations."])
    masked = curate_texts(["PRONOUN PRONOUN TIME PERSON TITLE DATE_1 LOCATION"])
    real_tokens = set(real[0].lower().replace(".", " ").split())
    masked_tokens = set(masked[0].lower().replace(".", " ").split())
    assert masked_tokens and not masked_tokens & real_tokens
    assert all(token.startswith(PLACEHOLDER_MARK) for token in masked_tokens)


def test_reference_mode_curates_masks_like_words():
    [curated] = curate_texts(["PRONOUN was born. PERSON"], placeholders_as_words=True)
    assert curated.split() == ["pronoun", "bear.", "person"]


@pytest.mark.parametrize("name", ["tfidf", "bm25"])
def test_placeholders_do_not_point_at_whoever_writes_the_real_word(name):
    """The PRONOUN collision made every masked text drift to the person discussing pronouns."""
    truth = {"d": "alma"}
    as_words = PreparedTexts(AttackConfig(cache_dir="", placeholders_as_words=True))
    [drifted] = as_words.fit(name, BACKGROUND).predict({"d": MASKED}, top_k=3, true_names=truth)
    assert drifted.predicted_name == "zoe"
    distinct = PreparedTexts(AttackConfig(cache_dir=""))
    [fixed] = distinct.fit(name, BACKGROUND).predict({"d": MASKED}, top_k=3, true_names=truth)
    probabilities = [p for _, p in fixed.top_k]
    assert max(probabilities) == pytest.approx(min(probabilities))  # nothing links it


def test_curation_written_before_the_placeholder_rule_is_never_served(tmp_path):
    """The cache is content-keyed: the distinct mode has its own file, the reference keeps its."""
    stale = tmp_path / "pretreatment" / f"curation-{spacy_model_id()}.json"
    stale.parent.mkdir(parents=True)
    stale.write_text(json.dumps({text_key(MASKED): " pronoun stale"}), encoding="utf-8")
    config = AttackConfig(cache_dir=str(tmp_path))
    [fresh] = PreparedTexts(config).documents([MASKED], curate=True)
    assert "pronoun" not in fresh and "_PRONOUN" in fresh
    assert open_curation_cache(tmp_path, False).path != stale
    reference = AttackConfig(cache_dir=str(tmp_path), placeholders_as_words=True)
    assert PreparedTexts(reference).documents([MASKED], curate=True) == [" pronoun stale"]


def test_every_placeholder_the_anonymizer_writes_is_recognised():
    """attacks may not import anonymize: this keeps its label list from drifting."""
    from anonymize.labels import SPAN_CATEGORIES
    from anonymize.placeholders import MARKERS, PLACEHOLDER_CATEGORIES, pronoun_marker

    for category in (*SPAN_CATEGORIES, *PLACEHOLDER_CATEGORIES):
        assert is_placeholder(category) and is_placeholder(f"{category}_12")
    for word in ("she", "Dr", "Mrs"):
        assert all(is_placeholder(part) for part in pronoun_marker(word).split("/"))
    assert all(is_placeholder(part) for marker in MARKERS for part in marker.split("/"))
    assert not any(is_placeholder(word) for word in ("USA", "Person", "pronoun", "I", "_X"))
