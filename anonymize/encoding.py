"""Map a text's words to subword tokens, the link between word labels and the model."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anonymize.labels import Word, split_words
from anonymize.windows import Window

# transformers' loss ignores targets equal to -100: subwords after a word's first one and words
# alignment could not attribute carry it, so they neither train nor get scored.
IGNORE_INDEX = -100

# The MiniLM tokenizer lowercases, but Textwash's tagger is cased ("Rolling Stones" is an
# organisation, "rolling stones" is not). Models trained with `case_feature` get each word's
# capitalisation as BERT's token type id (segment embedding), one of these three classes.
CASE_LOWER, CASE_TITLE, CASE_UPPER = 0, 1, 2
CASE_CLASSES = 3


def word_case(text: str) -> int:
    """Return the capitalisation class of a word: lower/other, Title (or "I"), ALL CAPS."""
    if not text[:1].isupper():
        return CASE_LOWER
    if len(text) > 1 and text.isupper():
        return CASE_UPPER
    return CASE_TITLE


@dataclass
class EncodedText:
    """A text's words, its subword ids (no special tokens) and each word's first subword."""

    words: list[Word]
    input_ids: list[int]
    word_first_token: np.ndarray  # index of the subword that predicts each word
    case_ids: list[int]  # capitalisation class of the word each subword belongs to


def encode_text(tokenizer, text: str) -> EncodedText:
    """Tokenize `text` and point each word at the first subword that overlaps it.

    A subword that covers several of our words (the tokenizer does not split "21st") predicts
    all of them, so every word gets a prediction and no text is silently skipped.
    """
    words = split_words(text)
    # Whole texts are tokenized once and windowed afterwards, so the model's length limit
    # does not apply here; silence transformers' warning about it.
    tokenizer.model_max_length = max(tokenizer.model_max_length, len(text) + 2)
    encoding = tokenizer(
        text, add_special_tokens=False, return_offsets_mapping=True, truncation=False
    )
    offsets = encoding["offset_mapping"]
    word_first_token = np.zeros(len(words), dtype=np.int64)
    token = 0
    for position, word in enumerate(words):
        while token < len(offsets) - 1 and offsets[token][1] <= word.start:
            token += 1
        word_first_token[position] = token
    case_ids = []
    position = 0
    for token_start, _ in offsets:
        while position < len(words) - 1 and words[position].end <= token_start:
            position += 1
        case_ids.append(word_case(words[position].text) if words else CASE_LOWER)
    return EncodedText(words, list(encoding["input_ids"]), word_first_token, case_ids)


def token_targets(encoded: EncodedText, label_ids: list[int | None]) -> list[int]:
    """Return one training target per subword: the word label on its first subword."""
    targets = [IGNORE_INDEX] * len(encoded.input_ids)
    for token, label_id in zip(encoded.word_first_token.tolist(), label_ids, strict=True):
        if label_id is not None and targets[token] == IGNORE_INDEX and encoded.input_ids:
            targets[token] = label_id
    return targets


def window_features(
    tokenizer, encoded: EncodedText, window: Window, case_feature: bool
) -> dict[str, list[int]]:
    """Return the model inputs of one window: [CLS] subwords [SEP], and their case classes.

    Models trained with ``case_feature`` read each subword's capitalisation class as its
    token type id; [CLS] and [SEP] take the "lower/other" class.
    """
    ids = encoded.input_ids[window.start : window.end]
    feature = {"input_ids": [tokenizer.cls_token_id, *ids, tokenizer.sep_token_id]}
    if case_feature:
        feature["token_type_ids"] = [0, *encoded.case_ids[window.start : window.end], 0]
    return feature
