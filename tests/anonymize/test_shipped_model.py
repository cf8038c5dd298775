"""The shipped textwash-minilm model on made-up descriptions (loads once per session)."""

from __future__ import annotations

import pytest

from anonymize import Anonymizer

pytestmark = pytest.mark.slow

DESCRIPTION = (
    "Corin Vandermeer is a welder from Perth in Australia. He was born on 3 March 1981 and "
    "studied at the University of Leeds. Corin married Lysa Oakhurst in 2009; they have two "
    "daughters. Vandermeer won the Golden Anvil award.\n"
)


@pytest.fixture(scope="session")
def shipped() -> Anonymizer:
    return Anonymizer.load()


def test_shipped_model_removes_the_persons_name_and_places(shipped):
    result = shipped.anonymize(DESCRIPTION)
    for secret in ("Corin", "Vandermeer", "Perth", "1981", "Lysa", "Oakhurst"):
        assert secret not in result.text
    assert "PRONOUN" in result.text
    vandermeer = {s.placeholder for s in result.spans if s.text == "Vandermeer"}
    assert len(vandermeer) == 1  # repeated mentions share one placeholder
    assert all(s.category.startswith("PERSON_") for s in result.spans if "Corin" in s.text)
    assert shipped.model_version.startswith("textwash-minilm-")


@pytest.mark.xfail(
    strict=True,
    reason="learned from Textwash's labels, which often leave 'Town, County' lists in clear "
    "(corpus README quirk 2, e.g. 'Framlingham, Suffolk, England')",
)
def test_comma_separated_place_lists_are_removed(shipped):
    result = shipped.anonymize("Corin Vandermeer is a welder from Perth, Australia.")
    assert "Perth" not in result.text and "Australia" not in result.text


def test_shipped_model_handles_texts_longer_than_one_window(shipped):
    text = DESCRIPTION * 12
    result = shipped.anonymize(text)
    assert "Vandermeer" not in result.text and "Corin" not in result.text
    assert all(text[s.start : s.end] == s.text for s in result.spans)


def test_stricter_threshold_masks_at_least_as_much(shipped):
    loose = shipped.anonymize(DESCRIPTION, threshold=0.9)
    strict = shipped.anonymize(DESCRIPTION, threshold=0.1)
    assert sum(s.end - s.start for s in strict.spans) >= sum(s.end - s.start for s in loose.spans)


def test_bf16_and_fp32_inference_find_the_same_spans(shipped):
    from model_runtime.precision import cpu_supports_bf16

    if not cpu_supports_bf16():
        pytest.skip("this CPU has no native bf16 (AVX512-BF16/AMX)")
    fp32 = Anonymizer.load(precision="fp32")
    bf16 = Anonymizer.load(precision="bf16")
    assert (fp32.precision, bf16.precision) == ("fp32", "bf16")
    text = DESCRIPTION * 3
    fp32_spans = [(s.start, s.end, s.category) for s in fp32.anonymize(text).spans]
    assert [(s.start, s.end, s.category) for s in bf16.anonymize(text).spans] == fp32_spans
