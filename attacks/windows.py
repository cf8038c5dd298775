"""Split WordPiece token sequences into overlapping windows or sentences (5.3).

Batching and padding are the Trainer's (``attacks/tria/trainer.py``); length grouping for
prediction is ``model_runtime.batching``'s.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Windows:
    """Hold windows (with [CLS]/[SEP]) and the index of the document each came from."""

    input_ids: list[list[int]]
    doc_index: list[int]

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def n_tokens(self) -> int:
        """Return the number of real tokens over all windows."""
        return sum(len(w) for w in self.input_ids)


def sliding_windows(token_ids: Sequence[int], length: int, overlap: int) -> list[list[int]]:
    """Return content slices of ``length - 2`` tokens, each sharing ``overlap`` with the last.

    ``length`` counts [CLS] and [SEP] (added later), as in the reference, so the stride
    over content tokens is ``length - overlap - 2``. An empty sequence gives one empty window
    so that every document still gets a prediction.
    """
    content = length - 2
    stride = length - overlap - 2
    windows = []
    start = 0
    while True:
        windows.append(list(token_ids[start : start + content]))
        if start + content >= len(token_ids):
            return windows
        start += stride


def tokenize_texts(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Return WordPiece ids of each text, without special tokens and untruncated."""
    if not texts:
        return []
    encoded = tokenizer(list(texts), add_special_tokens=False, truncation=False, verbose=False)
    return encoded["input_ids"]


def build_windows(tokenizer, texts: Sequence[str], length: int, overlap: int) -> Windows:
    """Tokenize ``texts`` and split each into [CLS] window [SEP] sequences."""
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    input_ids: list[list[int]] = []
    doc_index: list[int] = []
    for index, ids in enumerate(tokenize_texts(tokenizer, texts)):
        for window in sliding_windows(ids, length, overlap):
            input_ids.append([cls_id, *window, sep_id])
            doc_index.append(index)
    return Windows(input_ids, doc_index)


@functools.cache
def _sentencizer():
    """Return a rule-based spaCy sentence splitter (the reference disables everything else)."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def split_sentences(text: str) -> list[str]:
    """Return the sentences of each non-blank paragraph, tokens joined by spaces (reference)."""
    nlp = _sentencizer()
    sentences = []
    for paragraph in text.split("\n"):
        if paragraph.strip():
            for sentence in nlp(paragraph).sents:
                joined = " ".join(token.text for token in sentence)
                if joined.strip():
                    sentences.append(joined)
    return sentences


def build_sentence_windows(tokenizer, texts: Sequence[str], max_length: int) -> Windows:
    """Return one [CLS] sentence [SEP] window per sentence (the reference's "No" setting).

    Sentences longer than ``max_length`` tokens are dropped, as the reference drops them; a
    document left with no sentence gets one empty window so it still gets a prediction.
    """
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    input_ids: list[list[int]] = []
    doc_index: list[int] = []
    for index, text in enumerate(texts):
        kept = 0
        sentences = split_sentences(text)
        for ids in tokenize_texts(tokenizer, sentences):
            if len(ids) + 2 > max_length:
                logging.getLogger(__name__).warning(
                    "sentence of %d tokens in document %d dropped (max %d)",
                    len(ids) + 2,
                    index,
                    max_length,
                )
                continue
            input_ids.append([cls_id, *ids, sep_id])
            doc_index.append(index)
            kept += 1
        if not kept:
            input_ids.append([cls_id, sep_id])
            doc_index.append(index)
    return Windows(input_ids, doc_index)


def make_windows(
    tokenizer, texts: Sequence[str], window: tuple[int, int] | None, max_length: int = 512
) -> Windows:
    """Return sliding windows for ``window = (length, overlap)``, or sentences for None."""
    if window is None:
        return build_sentence_windows(tokenizer, texts, max_length)
    return build_windows(tokenizer, texts, *window)
