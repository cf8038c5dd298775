"""The Anonymizer pipeline with a fake classifier: entities, threshold, windows, batches."""

from __future__ import annotations

import pytest

from anonymize import AnonymizationResult, Span, render
from anonymize.cleanup import harmonise_mentions

WORDS = {"lisbon": "LOCATION", "mara": "PERSON_FIRSTNAME", "she": "PRONOUN", "1970": "DATE"}


@pytest.fixture(scope="module")
def fake(fake_anonymizer_factory):
    return fake_anonymizer_factory(WORDS)


@pytest.mark.parametrize(
    ("text", "entities", "expected"),
    [
        (
            "Mara left Lisbon in 1970; she loved Lisbon.",
            None,
            "PERSON_FIRSTNAME_1 left LOCATION_1 in DATE_1; PRONOUN loved LOCATION_1.",
        ),
        (
            "Mara left Lisbon in 1970; she loved Lisbon.",
            ["LOCATION"],
            "Mara left LOCATION_1 in 1970; she loved LOCATION_1.",
        ),
        (
            "Mara left Lisbon in 1970; she loved Lisbon.",
            ["PRONOUN", "DATE"],
            "Mara left Lisbon in DATE_1; PRONOUN loved Lisbon.",
        ),
        ("Nothing to hide here.", None, "Nothing to hide here."),
        ("", None, ""),
        ("   \n", None, "   \n"),
    ],
)
def test_selected_entities_are_replaced(fake, text, entities, expected):
    assert fake.anonymize(text, entities=entities).text == expected


def test_spans_point_into_the_original_text(fake):
    text = "Mara left Lisbon."
    result = fake.anonymize(text)
    assert isinstance(result, AnonymizationResult)
    assert [(s.start, s.end, s.text, s.category, s.placeholder) for s in result.spans] == [
        (0, 4, "Mara", "PERSON_FIRSTNAME", "PERSON_FIRSTNAME_1"),
        (10, 16, "Lisbon", "LOCATION", "LOCATION_1"),
    ]
    assert all(text[s.start : s.end] == s.text for s in result.spans)
    assert result.to_dict()["anonymized"] == "PERSON_FIRSTNAME_1 left LOCATION_1."


@pytest.mark.parametrize(("threshold", "n_spans"), [(0.5, 2), (0.85, 2), (0.9, 0), (1.0, 0)])
def test_lower_threshold_masks_more(fake, threshold, n_spans):
    assert len(fake.anonymize("Mara left Lisbon.", threshold=threshold).spans) == n_spans


def test_long_documents_are_windowed_without_dropping_text(fake_anonymizer_factory):
    text = " ".join(f"Day {i}: Mara walked to Lisbon." for i in range(150))
    small = fake_anonymizer_factory(WORDS, max_length=16, stride=10)
    large = fake_anonymizer_factory(WORDS, max_length=4096, stride=4096)
    windowed = small.anonymize(text)
    assert small.model.calls > 1
    assert windowed.text == large.anonymize(text).text
    assert windowed.text.count("LOCATION_1") == 150
    assert "Lisbon" not in windowed.text and "Mara" not in windowed.text
    assert windowed.text.startswith("Day 0: PERSON_FIRSTNAME_1 walked to LOCATION_1.")


def test_anonymize_many_matches_one_by_one_and_reports_progress(fake):
    texts = ["Mara is here.", "", "Lisbon, 1970.", "she"] * 5
    seen = []
    batch = fake.anonymize_many(texts, batch_size=3, progress=lambda d, t: seen.append((d, t)))
    assert [r.text for r in batch] == [fake.anonymize(t).text for t in texts]
    assert seen[-1] == (20, 20)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"entities": ["CITY"]}, "unknown categories"),
        ({"operator": "blur"}, "unknown operator"),
        ({"threshold": 1.5}, "threshold"),
    ],
)
def test_bad_options_fail_with_a_clear_message(fake, options, message):
    with pytest.raises(ValueError, match=message):
        fake.anonymize("Mara", **options)


def test_importing_the_package_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, anonymize; print('torch' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert output.stdout.strip() == "False"


def span_at(text: str, string: str, category: str, score: float, occurrence: int = 0) -> Span:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(string, start + 1)
    return Span(start, start + len(string), string, category, "", score)


def test_repeated_mentions_get_one_category_and_missed_repeats_are_caught():
    text = "Lysa sews. Lysa sings. LYSA rests. Black hair, Mr Black."
    spans = [
        span_at(text, "Lysa", "PERSON_FIRSTNAME", 0.9),
        span_at(text, "Lysa", "PERSON_LASTNAME", 0.4, occurrence=1),
        span_at(text, "Black", "PERSON_LASTNAME", 0.8, occurrence=1),
    ]
    harmonised = harmonise_mentions(text, spans)
    assert [(s.text, s.category) for s in harmonised] == [
        ("Lysa", "PERSON_FIRSTNAME"),
        ("Lysa", "PERSON_FIRSTNAME"),
        ("LYSA", "PERSON_FIRSTNAME"),
        ("Black", "PERSON_LASTNAME"),
        ("Black", "PERSON_LASTNAME"),
    ]
    assert render(text, harmonised) == (
        "PERSON_FIRSTNAME_1 sews. PERSON_FIRSTNAME_1 sings. PERSON_FIRSTNAME_1 rests. "
        "PERSON_LASTNAME_1 hair, Mr PERSON_LASTNAME_1."
    )


def test_common_lower_case_words_and_numbers_are_not_propagated():
    text = "Ana Black has black hair and two cats; two dogs."
    spans = [span_at(text, "Black", "PERSON_LASTNAME", 0.9), span_at(text, "two", "NUMERIC", 0.9)]
    assert [s.text for s in harmonise_mentions(text, spans)] == ["Black", "two"]


def _name(text: str, word: str, category: str = "PERSON_LASTNAME") -> Span:
    start = text.index(word)
    return Span(start, start + len(word), word, category, "", 0.9)


@pytest.mark.parametrize(
    ("text", "detected", "expected_extra"),
    [
        ("Bertrand Okafor-Smythe plays chess.", ["Smythe"], ["Okafor"]),
        ("Bertrand Okafor-Smythe plays chess.", ["Okafor"], ["Smythe"]),
        ("Bertrand Okafor-Smythe plays chess.", ["Okafor", "Smythe"], []),
        ("Tom Smith-jones plays chess.", ["Smith"], []),  # lower case: not a name part
        ("Tom Smith-2 plays chess.", ["Smith"], []),
        ("Smith - Jones plays chess.", ["Smith"], []),  # spaced dash: two items, not one name
    ],
)
def test_missed_halves_of_double_barrelled_names_are_added(text, detected, expected_extra):
    from anonymize.cleanup import join_hyphenated_names

    spans = [_name(text, word) for word in detected]
    joined = join_hyphenated_names(text, spans)
    extra = [s for s in joined if s not in spans]
    assert [s.text for s in extra] == expected_extra
    assert all(s.category == "PERSON_LASTNAME" and text[s.start : s.end] == s.text for s in extra)
    assert [s.start for s in joined] == sorted(s.start for s in joined)


def test_hyphen_rule_leaves_other_categories_alone():
    from anonymize.cleanup import join_hyphenated_names

    text = "She flew Leeds-Bradford."
    spans = [_name(text, "Bradford", "LOCATION")]
    assert join_hyphenated_names(text, spans) == spans


def test_precision_is_validated_and_auto_follows_the_cpu(claim_cpu):
    from model_runtime import precision

    with pytest.raises(ValueError, match="precision must be one of"):
        precision.resolve_precision("fp16")
    claim_cpu("none")
    assert precision.resolve_precision("auto") == "fp32"
    with pytest.raises(RuntimeError, match="no native bf16"):
        precision.resolve_precision("bf16")
    claim_cpu("bf16")
    assert precision.resolve_precision("auto") == "bf16"
    assert precision.resolve_precision("fp32") == "fp32"


def test_numbers_keep_ordinal_and_unit_suffixes_outside_the_placeholder():
    from anonymize.cleanup import numbers_keep_their_suffix

    text = "He came 5th in the 100m at 6 ft, in the 1960s."
    spans = [
        span_at(text, "5th", "NUMERIC", 0.9),
        span_at(text, "100", "NUMERIC", 0.9),
        span_at(text, "m", "NUMERIC", 0.9, occurrence=1),  # "100m"'s suffix on its own
        span_at(text, "6", "NUMERIC", 0.9),
        span_at(text, "1960s", "DATE", 0.9),  # DATE placeholders take the suffix
    ]
    kept = numbers_keep_their_suffix(text, spans)
    assert [(s.text, s.category) for s in kept] == [
        ("5", "NUMERIC"),
        ("100", "NUMERIC"),
        ("6", "NUMERIC"),
        ("1960s", "DATE"),
    ]
    assert (
        render(text, kept)
        == "He came NUMERIC_1th in the NUMERIC_2m at NUMERIC_3 ft, in the DATE_1."
    )


def test_int8_is_chosen_by_auto_only_with_vnni_and_native_bf16(claim_cpu):
    from anonymize import model

    claim_cpu("bf16,vnni")
    assert model.resolve_anonymizer_precision("auto") == "int8"
    assert model.resolve_anonymizer_precision("bf16") == "bf16"
    assert model.resolve_anonymizer_precision("fp32") == "fp32"
    claim_cpu("vnni")
    with pytest.raises(RuntimeError, match="native bf16"):
        model.resolve_anonymizer_precision("int8")
    assert model.resolve_anonymizer_precision("auto") == "fp32"
    claim_cpu("bf16")
    assert model.resolve_anonymizer_precision("auto") == "bf16"
    claim_cpu("none")
    assert model.resolve_anonymizer_precision("auto") == "fp32"
    with pytest.raises(ValueError, match="precision must be one of"):
        model.resolve_anonymizer_precision("int4")


def two_layer_tagger(vocab_size: int):
    import torch
    from transformers import BertForTokenClassification

    from anonymize.labels import ID2LABEL, LABEL2ID
    from tests.tiny_models import tiny_bert_config

    torch.manual_seed(0)
    config = tiny_bert_config(
        vocab_size,
        num_hidden_layers=2,
        num_labels=len(ID2LABEL),
        id2label=ID2LABEL,
        label2id=LABEL2ID,
    )
    return BertForTokenClassification(config).eval()


def test_int8_quantizes_the_encoder_after_its_first_layer(minilm_tokenizer, claim_cpu):
    import torch

    from anonymize.model import Anonymizer

    claim_cpu("bf16,vnni")
    texts = ["Mara Quillfeather is a baker from Lisbon.", "Tobin flies to Oslo in 1970."]
    vocab = minilm_tokenizer.vocab_size
    reference = Anonymizer(two_layer_tagger(vocab), minilm_tokenizer, "t", precision="bf16")
    int8 = Anonymizer(two_layer_tagger(vocab), minilm_tokenizer, "t", precision="int8")
    kinds = {
        name: type(module).__name__
        for name, module in int8.model.named_modules()
        if isinstance(module, torch.nn.Linear) or type(module).__name__ == "Int8Linear"
    }
    assert kinds.pop("classifier") == "Linear"
    first = {kind for name, kind in kinds.items() if ".layer.0." in name}
    later = {kind for name, kind in kinds.items() if ".layer.1." in name}
    assert (first, later) == ({"Linear"}, {"Int8Linear"})
    for ours, theirs in zip(int8.predict_words(texts), reference.predict_words(texts), strict=True):
        assert ours.probabilities.shape == theirs.probabilities.shape
        assert abs(ours.probabilities - theirs.probabilities).max() < 0.05
