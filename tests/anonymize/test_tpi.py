"""TPI (paper 002, section 4.2): terms, overlap rule, N-term alternation, IC sources, parity."""

from __future__ import annotations

import importlib.util
import io
import itertools
import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from anonymize.information import MaskedLMInformation, WordFrequencyInformation
from anonymize.tpi import (
    TPIScorer,
    alternation_passes,
    document_tpi,
    load_term_pipeline,
    masked_ranges_from_texts,
    masked_terms,
    term_ranges,
)


@pytest.fixture(scope="session")
def nlp():
    """Return the spaCy pipeline TPI's terms come from (loaded once)."""
    return load_term_pipeline()


def test_terms_are_entities_then_free_noun_chunks_then_remaining_tokens(nlp):
    text = "Barack Obama visited the old museum in Paris ."
    terms = [text[s:e] for s, e in term_ranges(nlp(text))]
    assert "Barack Obama" in terms and "Paris" in terms  # entities, whole
    assert "the old museum" in terms  # a noun chunk that overlaps no entity
    assert {"visited", "in", "."} <= set(terms)  # every other non-blank token
    # Non-overlapping, and every non-blank character lies in a term.
    ranges = term_ranges(nlp(text))
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ranges))
    covered = {i for s, e in ranges for i in range(s, e)}
    assert covered >= {i for i, c in enumerate(text) if not c.isspace()}


def test_blank_tokens_are_not_terms(nlp):
    assert term_ranges(nlp("  \n ")) == []


@pytest.mark.parametrize(
    ("masked", "expected"),
    [
        ([], [False, False, False]),
        ([(0, 5)], [True, False, False]),  # exactly the first term
        ([(3, 7)], [True, True, False]),  # straddles two terms
        ([(5, 6)], [False, False, False]),  # only the space between terms
        ([(7, 8)], [False, True, False]),  # one character inside the second term
        ([(5, 20)], [False, True, True]),  # contains terms 2 and 3 strictly
        ([(11, 11)], [False, False, False]),  # empty range masks nothing
    ],
)
def test_a_term_is_masked_when_any_masked_range_overlaps_it(masked, expected):
    terms = [(0, 5), (6, 10), (11, 15)]
    assert masked_terms(terms, masked) == expected


def test_alternation_with_n_6_masks_every_sixth_term_per_pass():
    passes = alternation_passes(14, 6)
    assert passes == [[0, 6, 12], [1, 7, 13], [2, 8], [3, 9], [4, 10], [5, 11]]
    assert sorted(i for p in passes for i in p) == list(range(14))
    assert alternation_passes(3, 6) == [[0], [1], [2]]  # fewer terms than N: one per pass
    assert alternation_passes(0, 6) == []


def test_document_tpi_is_the_share_of_ic_on_unmasked_terms():
    assert document_tpi([1.0, 2.0, 3.0], [False, True, False]) == pytest.approx(4 / 6)
    assert document_tpi([1.0, 2.0, 3.0], [True, True, True]) == 0.0  # fully masked
    assert document_tpi([1.0, 2.0], [False, False]) == 1.0  # nothing masked
    assert document_tpi([], []) is None  # empty: no information to preserve
    assert document_tpi([0.0, 0.0], [True, False]) is None


class ToyMaskedLM:
    """A masked LM with known probabilities: p(id) is fixed, whatever the context.

    Ids in `probabilities` get that probability at every position; the rest share what is
    left uniformly. Every call's input ids and attention mask are recorded.
    """

    def __init__(self, vocab_size: int, probabilities: dict[int, float]) -> None:
        import torch

        rest = (1.0 - sum(probabilities.values())) / (vocab_size - len(probabilities))
        table = torch.full((vocab_size,), rest, dtype=torch.float64)
        for token, p in probabilities.items():
            table[token] = p
        self.logits = table.log().float()
        self.calls: list[tuple[list[list[int]], list[list[int]]]] = []

    def __call__(self, input_ids, attention_mask):
        self.calls.append((input_ids.tolist(), attention_mask.tolist()))
        batch, width = input_ids.shape
        return SimpleNamespace(logits=self.logits.expand(batch, width, -1).clone())


def test_masked_lm_ic_is_minus_log_of_the_lowest_token_probability(minilm_tokenizer):
    text = "Kuala Lumpur is warm"
    ids = minilm_tokenizer(text, add_special_tokens=False)["input_ids"]
    city = minilm_tokenizer("Kuala Lumpur", add_special_tokens=False)["input_ids"]
    assert len(city) > 1  # a multi-token term
    known = {city[0]: 0.5, city[-1]: 0.01, ids[-2]: 0.2, ids[-1]: 0.1}
    model = ToyMaskedLM(minilm_tokenizer.vocab_size, known)
    source = MaskedLMInformation("toy", alternation=2, model=model, tokenizer=minilm_tokenizer)
    ics = source.term_ics(text, [(0, 12), (13, 15), (16, 20)])
    assert ics[0] == pytest.approx(-math.log(0.01), abs=1e-6)  # lowest of the city's tokens
    assert ics[1] == pytest.approx(-math.log(0.2), abs=1e-6)
    assert ics[2] == pytest.approx(-math.log(0.1), abs=1e-6)
    # N = 2: pass 0 masks terms 0 and 2, pass 1 term 1; masked tokens get attention 0.
    mask = minilm_tokenizer.mask_token_id
    [(rows, attention)] = model.calls
    first, second = rows[0], rows[1]
    masked_first = [i for i, t in enumerate(first) if t == mask]
    masked_second = [i for i, t in enumerate(second) if t == mask]
    assert len(masked_first) == len(city) + 1 and len(masked_second) == 1
    assert all(attention[0][i] == 0 for i in masked_first)
    assert all(attention[1][i] == 0 for i in masked_second)
    assert sum(attention[0]) == len(first) - len(masked_first)


def test_masked_lm_cuts_long_texts_into_segments(minilm_tokenizer):
    text = " ".join(["word"] * 30)
    model = ToyMaskedLM(minilm_tokenizer.vocab_size, {})
    source = MaskedLMInformation(
        "toy", max_segment_tokens=8, model=model, tokenizer=minilm_tokenizer
    )
    terms = [(i * 5, i * 5 + 4) for i in range(30)]
    ics = source.term_ics(text, terms)
    uniform = math.log(minilm_tokenizer.vocab_size)
    assert ics == pytest.approx([uniform] * 30, abs=1e-4)
    [(rows, _)] = model.calls
    assert len(rows) == 6 * math.ceil(32 / 8)  # 6 passes x 4 segments of <= 8 tokens
    assert all(len(row) == 8 for row in rows)


def test_wordfreq_ic_is_minus_log_frequency_of_the_rarest_word():
    from wordfreq import word_frequency

    text = "the zzqxjv , the cat"
    ics = WordFrequencyInformation().term_ics(text, [(0, 3), (4, 10), (11, 12), (13, 20)])
    assert ics[0] == pytest.approx(-math.log(word_frequency("the", "en")))
    assert ics[1] == pytest.approx(-math.log(1e-8))  # never seen: wordfreq's floor
    assert ics[2] == 0.0  # punctuation carries no content
    assert ics[3] == pytest.approx(-math.log(word_frequency("cat", "en")))


def test_corpus_tpi_is_the_mean_over_documents_with_information(nlp):
    scorer = TPIScorer(WordFrequencyInformation(), nlp=nlp)
    text = "Barack Obama was born in Honolulu."
    result = scorer.corpus(
        [("open", text, []), ("closed", text, [(0, len(text))]), ("empty", "", [])]
    )
    assert [d.tpi for d in result.documents] == [1.0, 0.0, None]
    assert result.tpi == 0.5 and result.undefined == 1
    assert result.metric == "TPI-wordfreq"  # never plain "TPI" without a masked LM


def test_masked_ranges_from_texts_marks_replaced_words():
    original = "Obama was born in Honolulu in 1961."
    anonymized = "PERSON_1 was born in LOCATION_1 in DATE_1."
    ranges = masked_ranges_from_texts(original, anonymized)
    assert [original[s:e] for s, e in ranges] == ["Obama", "Honolulu", "1961"]


def test_cli_prints_corpus_tpi_and_names_bad_lines():
    from anonymize.cli import main

    lines = [
        {"id": "a", "text": "Obama was born in Honolulu.", "spans": [{"start": 0, "end": 5}]},
        {"id": "b", "text": "She taught law.", "anonymized": "She taught law."},
    ]
    stdin = io.BytesIO("\n".join(json.dumps(line) for line in lines).encode())
    out, err = io.StringIO(), io.StringIO()
    assert main(["tpi"], stdin=stdin, stdout=out, stderr=err) == 0
    result = json.loads(out.getvalue())
    assert result["metric"] == "TPI-wordfreq" and result["documents"] == 2
    assert result["per_document"][1]["tpi"] == 1.0
    assert 0 < result["per_document"][0]["tpi"] < 1
    bad = io.BytesIO(b'{"id": "x", "text": "hi", "spans": [{"start": 0, "end": 9}]}\n')
    err = io.StringIO()
    assert main(["tpi"], stdin=bad, stdout=io.StringIO(), stderr=err) == 2
    assert "line 1: field 'spans' item 1" in err.getvalue()


def taeval_utils():
    """Return taeval's published IC weighting module, or None where taeval is not installed.

    The PyPI wheel (taeval 1.2.0) ships `tae/utils.py` (the IC engine) but not the
    `tae.metrics` package its `__init__` imports, so `import tae` fails; the module is loaded
    from its file instead.
    """
    spec = importlib.util.find_spec("tae")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "utils.py"
    if not path.is_file():
        return None
    module_spec = importlib.util.spec_from_file_location("taeval_utils", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def tiny_masked_lm(tmp_path_factory, minilm_tokenizer):
    """Return a folder holding a seeded random-weight BERT masked LM and its tokenizer."""
    import torch
    from transformers import BertForMaskedLM

    from tests.tiny_models import tiny_bert_config

    folder = tmp_path_factory.mktemp("tiny_mlm")
    torch.manual_seed(0)
    BertForMaskedLM(tiny_bert_config(minilm_tokenizer.vocab_size)).save_pretrained(folder)
    minilm_tokenizer.save_pretrained(folder)
    return folder


PARITY_TEXTS = [
    (
        "Barack Obama was born in Honolulu, Hawaii, in 1961. He studied law at Harvard "
        "University and later taught constitutional law in Chicago.",
        [(0, 12), (25, 33), (96, 103)],
    ),
    ("Marie Curie won two Nobel Prizes, in physics and in chemistry.", [(0, 11), (16, 32)]),
    ("The quick brown fox jumps over the lazy dog near the river bank.", []),
]


@pytest.mark.parametrize("segment_tokens", [100, 12])
def test_tpi_matches_taeval_with_the_same_masked_lm(nlp, tiny_masked_lm, segment_tokens):
    module = taeval_utils()
    if module is None:
        pytest.skip("taeval is not installed (pip install taeval: the authors' evaluator)")
    theirs = module.ICTokenWeighting(str(tiny_masked_lm), "cpu", segment_tokens)
    ours = MaskedLMInformation(tiny_masked_lm, max_segment_tokens=segment_tokens)
    scorer = TPIScorer(ours, nlp=nlp)
    for text, masked in PARITY_TEXTS:
        terms, ics = scorer.terms_and_ics(text)
        reference = [0.0] * len(terms)
        for indexes in alternation_passes(len(terms), 6):
            weights = theirs.get_weights(text, [terms[i] for i in indexes])
            for index, weight in zip(indexes, weights, strict=True):
                reference[index] = float(weight)
        assert ics == pytest.approx(reference, abs=1e-6)
        flags = masked_terms(terms, masked)
        ours_tpi = scorer.document("x", text, masked).tpi
        assert ours_tpi == pytest.approx(document_tpi(reference, flags), abs=1e-6)
