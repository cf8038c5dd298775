"""Fixtures for the anonymizer tests: a fake token classifier, a tiny saved model, a corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anonymize.labels import ID2LABEL, LABEL2ID
from tests.tiny_models import tiny_tagger

# Made-up persons and places; nothing here comes from the research data.
FIXTURE_PEOPLE: tuple[tuple[str, str, str, str, str], ...] = (
    # (type, first, last, occupation, town)
    ("famous", "Mara", "Quillfeather", "baker", "Lisbon"),
    ("famous", "Tobin", "Ashgrove", "pilot", "Oslo"),
    ("famous", "Wendell", "Marsh", "singer", "Quito"),
    ("semifamous", "Ines", "Halloran", "chemist", "Tartu"),
    ("semifamous", "Pavo", "Renwick", "sculptor", "Nantes"),
    ("semifamous", "Odile", "Braxton", "jockey", "Leeds"),
    ("fictitious", "Corin", "Vandermeer", "welder", "Perth"),
    ("fictitious", "Lysa", "Oakhurst", "tailor", "Bergen"),
    ("fictitious", "Dunstan", "Pelley", "florist", "Porto"),
)


def fixture_record(person_index: int, variant: int) -> dict:
    """Build one (original, textwash) pair about a made-up person, Textwash-style."""
    kind, first, last, occupation, town = FIXTURE_PEOPLE[person_index]
    pronoun = "She" if person_index % 2 == 0 else "He"
    year = 1950 + 3 * person_index + variant
    original = (
        f"{first} {last} is a {occupation} from {town}. {pronoun} was born in {year} "
        f"and has {variant + 2} children. {first} likes tea.\n"
    )
    textwash = (
        "PERSON_FIRSTNAME_1 PERSON_LASTNAME_1 is a OCCUPATION_1 from LOCATION_1. PRONOUN was "
        "born in DATE_1 and has NUMERIC_1 children. PERSON_FIRSTNAME_1 likes tea."
    )
    return {
        "id": f"fixture_{person_index}_{variant}",
        "study": 1,
        "type": kind,
        "item": person_index,
        "person": f"{first} {last}".lower(),
        "original": original,
        "textwash": textwash,
    }


@pytest.fixture
def fixture_corpus(tmp_path: Path) -> Path:
    """Write a two-documents-per-person study1.jsonl in tmp_path and return its folder."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    lines = [
        json.dumps(fixture_record(person, variant))
        for person in range(len(FIXTURE_PEOPLE))
        for variant in range(2)
    ]
    (folder / "study1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def minilm_tokenizer():
    """Return the MiniLM tokenizer from the pip package (loaded once)."""
    from transformers import AutoTokenizer

    from model_runtime.base_model import default_base_model

    return AutoTokenizer.from_pretrained(default_base_model())


class FakeTokenClassifier:
    """Stand-in for the BERT classifier: tags chosen token ids as B-<category>.

    Its output for a token depends on that token alone, so any windowing must reproduce the
    single-window result exactly.
    """

    def __init__(self, token_categories: dict[int, str]) -> None:
        """Map token id -> category; every other token is NONE."""
        import types

        self.token_categories = token_categories
        self.config = types.SimpleNamespace(id2label=ID2LABEL, label2id=LABEL2ID)
        self.calls = 0

    def __call__(self, input_ids, attention_mask):
        """Return confident logits: the mapped B- label, else NONE."""
        import types

        import torch

        self.calls += 1
        logits = torch.full((*input_ids.shape, len(ID2LABEL)), -10.0)
        logits[..., LABEL2ID["NONE"]] = 10.0
        for token_id, category in self.token_categories.items():
            hit = input_ids == token_id
            logits[hit] = -10.0
            # P(B-category) ~ 0.88 and P(NONE) ~ 0.12, so thresholds above 0.9 mask nothing.
            logits[hit, LABEL2ID[f"B-{category}"]] = 2.0
            logits[hit, LABEL2ID["NONE"]] = 0.0
        return types.SimpleNamespace(logits=logits)


@pytest.fixture(scope="session")
def fake_anonymizer_factory(minilm_tokenizer):
    """Return a builder of Anonymizers backed by FakeTokenClassifier for given words."""
    from anonymize.model import Anonymizer

    def build(
        word_categories: dict[str, str],
        max_length: int = 256,
        stride: int = 192,
        rules: str = "none",
    ):
        """Build one; rules are off unless asked, so model tests see only the model's spans."""
        token_categories = {
            minilm_tokenizer.convert_tokens_to_ids(word.lower()): category
            for word, category in word_categories.items()
        }
        model = FakeTokenClassifier(token_categories)
        return Anonymizer(
            model,
            minilm_tokenizer,
            "fake-00000000",
            max_length=max_length,
            stride=stride,
            rules=rules,
        )

    return build


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, minilm_tokenizer) -> Path:
    """Save a tiny randomly initialised BERT tagger with the MiniLM tokenizer, once."""
    folder = tmp_path_factory.mktemp("tiny_model")
    tiny_tagger(minilm_tokenizer.vocab_size).save_pretrained(folder)
    minilm_tokenizer.save_pretrained(folder)
    return folder
