"""The shipped textwash-minilm model on made-up descriptions (loads once per session)."""

from __future__ import annotations

import os

import pytest

from anonymize import Anonymizer
from model_runtime.hardware import CPU_OVERRIDE_VARIABLE

pytestmark = pytest.mark.slow

DESCRIPTION = (
    "Corin Vandermeer is a welder from Perth in Australia. He was born on 3 March 1981 and "
    "studied at the University of Leeds. Corin married Lysa Oakhurst in 2009; they have two "
    "daughters. Vandermeer won the Golden Anvil award.\n"
)


def load_claiming(features: str, precision: str) -> Anonymizer:
    """Load the shipped model as on a CPU with `features` (not as on the host)."""
    before = os.environ.get(CPU_OVERRIDE_VARIABLE)
    os.environ[CPU_OVERRIDE_VARIABLE] = features
    try:
        return Anonymizer.load(precision=precision)
    finally:
        if before is None:
            del os.environ[CPU_OVERRIDE_VARIABLE]
        else:
            os.environ[CPU_OVERRIDE_VARIABLE] = before


# Each quality test runs on both paths a machine can take: fp32 (no native bf16 or VNNI) and
# "auto" on an AVX512-BF16 + VNNI CPU (int8 encoder, bf16 autocast).
@pytest.fixture(scope="session", params=["fp32", "int8"])
def shipped(request) -> Anonymizer:
    features = "none" if request.param == "fp32" else "bf16,vnni"
    anonymizer = load_claiming(features, "auto")
    assert anonymizer.precision == request.param
    return anonymizer


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


def test_bf16_and_fp32_inference_find_the_same_spans():
    fp32 = load_claiming("none", "fp32")
    bf16 = load_claiming("bf16", "bf16")
    assert (fp32.precision, bf16.precision) == ("fp32", "bf16")
    text = DESCRIPTION * 3
    fp32_spans = [(s.start, s.end, s.category) for s in fp32.anonymize(text).spans]
    assert [(s.start, s.end, s.category) for s in bf16.anonymize(text).spans] == fp32_spans
