"""Facts both layers need have one home (`anonymize.names`), and every user agrees on them."""

import pytest

from anonymize import alignment, names, placeholders
from intruder.selectors import leak_checks
from model_runtime import guess_scoring as scoring


def test_name_suffixes_are_one_set_for_alignment_and_scoring():
    assert alignment.NAME_SUFFIXES is names.NAME_SUFFIXES
    assert scoring.NAME_SUFFIXES is names.NAME_SUFFIXES


@pytest.mark.parametrize(
    ("person", "surname"),
    [("Hermann Pacocha Jr", "pacocha"), ("Henry Ford IV", "ford"), ("Louis Dupont V", "dupont")],
)
def test_alignment_and_scoring_agree_on_the_surname(person, surname):
    _, lasts = alignment._name_parts(person)
    assert lasts == {surname}
    assert scoring.surname_of(person) == surname


def test_honorifics_of_placeholders_are_not_identifying_in_leak_checks():
    """The Textwash marker words (MR/MS, TITLE) never count as a name part of an alias."""
    assert placeholders.MR_MS_WORDS | placeholders.TITLE_WORDS <= names.NON_IDENTIFYING_NAME_WORDS
    parts = leak_checks.name_parts(["Doctor Ludwig van Brandt III", "Madame Odette"])
    assert sorted(parts) == sorted(
        ["Doctor Ludwig van Brandt III", "Madame Odette", "Ludwig", "Brandt", "Odette"]
    )


def test_analyses_recognise_every_placeholder_the_anonymizer_writes():
    from anonymize.labels import SPAN_CATEGORIES, UNINDEXED_CATEGORIES
    from intruder.analysis.text import PLACEHOLDER_CATEGORIES, PLACEHOLDER_PATTERN

    assert PLACEHOLDER_CATEGORIES is placeholders.PLACEHOLDER_CATEGORIES
    written = set(SPAN_CATEGORIES) - UNINDEXED_CATEGORIES
    assert written <= set(PLACEHOLDER_CATEGORIES)
    for category in written:
        match = PLACEHOLDER_PATTERN.search(f"met {category}_2 there")
        assert match and match.group("category") == category


def test_every_reader_finds_each_placeholder_the_writer_writes():
    """The placeholder grammar has one home: what `render` writes, every reader reads back."""
    from anonymize import Span, render
    from anonymize.alignment import tokenize_textwash
    from intruder.analysis.text import placeholder_spans
    from intruder.views.researcher.review import PLACEHOLDER_PATTERN as REVIEW_PATTERN

    text = "Mrs Ada Byron was born in London in 1815; she wrote notes."
    items = [("Mrs", "PRONOUN"), ("Ada", "PERSON_FIRSTNAME"), ("Byron", "PERSON_LASTNAME")]
    items += [("London", "LOCATION"), ("1815", "DATE"), ("she", "PRONOUN")]
    items += [("notes", "REIDENTIFYING")]
    spans = [
        Span(text.index(word), text.index(word) + len(word), word, category, "", 1.0)
        for word, category in items
    ]
    anonymized = render(text, spans)
    written = [
        "MR/MS", "PERSON_FIRSTNAME_1", "PERSON_LASTNAME_1", "LOCATION_1", "DATE_1", "PRONOUN",
        "REIDENTIFYING_1",
    ]  # fmt: skip
    assert [m.group() for m in placeholders.PLACEHOLDER_PATTERN.finditer(anonymized)] == written
    assert [m.group() for m in leak_checks.PLACEHOLDER.finditer(anonymized)] == written
    assert [m.group() for m in REVIEW_PATTERN.finditer(anonymized)] == written
    assert [anonymized[s:e] for s, e, _ in placeholder_spans(anonymized)] == written
    textwash = [t.text for t in tokenize_textwash(anonymized) if t.category]
    assert textwash == [w for w in written if not w.startswith("REIDENTIFYING")]


def test_one_spacy_pipeline_name_everywhere():
    from anonymize.annotations import tab_metrics
    from anonymize.baseline_spacy import SPACY_MODEL
    from intruder.analysis import construct_loss

    assert tab_metrics.SPACY_MODEL is SPACY_MODEL
    assert construct_loss.SPACY_MODEL is SPACY_MODEL


def test_both_libraries_offer_the_same_precisions_and_base_model():
    from anonymize import model as anonymize_model
    from anonymize import train
    from attacks import config as attack_config
    from attacks.tria import model as tria_model
    from model_runtime import base_model, precision

    # The anonymizer adds int8, an inference-only path (model_runtime.int8); the shared
    # choices come from model_runtime and keep their order.
    assert (*precision.PRECISIONS, "int8") == anonymize_model.ANONYMIZER_PRECISIONS
    assert attack_config.PRECISIONS is precision.PRECISIONS
    assert train.default_base_model is base_model.default_base_model
    assert tria_model.default_base_model is base_model.default_base_model


def test_human_and_machine_guesses_are_scored_by_one_function():
    """The intruder app and the open-world LLM intruder share `model_runtime.guess_scoring`."""
    from attacks import llm as llm_attack
    from model_runtime import guess_scoring

    assert scoring.score_guess is guess_scoring.score_guess
    assert llm_attack.score_guess is guess_scoring.score_guess
