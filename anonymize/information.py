"""Information-content sources for TPI (`anonymize.tpi`): IC(term) = -ln p(term).

- `MaskedLMInformation`: the paper's (002, sections 4.2 and 5.2). Any local masked-LM folder
  (`bert-base-uncased` gives the paper's numbers). Pass i of N masks terms i, i + N, ...;
  their tokens become [MASK] with attention mask 0 (as the authors' evaluator does), the
  token sequence is cut into segments of at most 100 tokens, and a term's probability is the
  lowest of its tokens' probabilities for their true ids.
- `WordFrequencyInformation`: the offline default, because no masked-LM weights with a
  trained MLM head install from the package registries (docs/decisions/tpi.md). p is a
  word's frequency in English (wordfreq), the lowest over a term's words; it ignores
  context, so its metric is named "TPI-wordfreq", never "TPI".
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from anonymize.tpi import Range, alternation_passes

# The paper's settings (section 5.2): one term in six masked per pass, segments <= 100 tokens.
ALTERNATION = 6
MAX_SEGMENT_TOKENS = 100
# wordfreq's English lists stop near 1e-8 (Zipf 1); a word it never saw is taken as that rare.
WORDFREQ_FLOOR = 1e-8


class MaskedLMInformation:
    """IC of each term under a masked language model, with the paper's N-term alternation."""

    metric = "TPI"

    def __init__(
        self,
        model_dir: str | Path,
        alternation: int = ALTERNATION,
        max_segment_tokens: int = MAX_SEGMENT_TOKENS,
        batch_size: int = 32,
        device: str = "cpu",
        model: Any = None,
        tokenizer: Any = None,
    ) -> None:
        if alternation < 1:
            raise ValueError(f"alternation N must be at least 1, got {alternation}")
        if max_segment_tokens < 1:
            raise ValueError(f"segments need at least 1 token, got {max_segment_tokens}")
        self.model_dir = str(model_dir)
        self.name = Path(self.model_dir).name or self.model_dir
        self.alternation = alternation
        self.max_segment_tokens = max_segment_tokens
        self.batch_size = batch_size
        self.device = device
        self._model = model
        self._tokenizer = tokenizer

    def load(self) -> None:
        """Load the tokenizer and the masked LM from the local folder (never from a hub)."""
        if self._model is None:
            from transformers import AutoModelForMaskedLM, AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(self.model_dir, local_files_only=True)
            self._model = AutoModelForMaskedLM.from_pretrained(
                self.model_dir, local_files_only=True
            )
            self._model.to(self.device).eval()

    def term_ics(self, text: str, terms: Sequence[Range]) -> list[float]:
        """Return IC per term: every pass masks one term in N, the rest give the context."""
        import torch

        self.load()
        encoded = self._tokenizer(text, return_offsets_mapping=True)
        ids = list(encoded["input_ids"])
        tokens_of = [_overlapping_tokens(term, encoded["offset_mapping"]) for term in terms]
        passes = alternation_passes(len(terms), self.alternation)
        rows, masks, owners = [], [], []
        for number, indexes in enumerate(passes):
            masked_ids, attention = list(ids), [1] * len(ids)
            for index in indexes:
                for token in tokens_of[index]:
                    masked_ids[token] = self._tokenizer.mask_token_id
                    attention[token] = 0
            for start in range(0, len(ids), self.max_segment_tokens):
                rows.append(masked_ids[start : start + self.max_segment_tokens])
                masks.append(attention[start : start + self.max_segment_tokens])
                owners.append((number, start))
        log_p = {}
        pad = self._tokenizer.pad_token_id or 0
        width = min(len(ids), self.max_segment_tokens)
        for first in range(0, len(rows), self.batch_size):
            batch = slice(first, first + self.batch_size)
            input_ids = torch.tensor([r + [pad] * (width - len(r)) for r in rows[batch]])
            attention = torch.tensor([m + [0] * (width - len(m)) for m in masks[batch]])
            with torch.no_grad():
                logits = self._model(
                    input_ids=input_ids.to(self.device), attention_mask=attention.to(self.device)
                ).logits
            scores = torch.log_softmax(logits.double(), dim=-1).cpu()
            for row, (number, start) in enumerate(owners[batch]):
                log_p[number, start] = scores[row]
        ics = [0.0] * len(terms)
        for number, indexes in enumerate(passes):
            for index in indexes:
                lowest = None
                for token in tokens_of[index]:
                    start = token - token % self.max_segment_tokens
                    value = float(log_p[number, start][token - start, ids[token]])
                    lowest = value if lowest is None else min(lowest, value)
                # A term no token covers (only characters the tokenizer drops) carries no IC.
                ics[index] = 0.0 if lowest is None else -lowest
        return ics


def _overlapping_tokens(term: Range, offsets: Sequence[tuple[int, int]]) -> list[int]:
    """Return the indexes of the tokens whose characters overlap the term (specials have none)."""
    start, end = term
    return [i for i, (s, e) in enumerate(offsets) if e > s and s < end and start < e]


class WordFrequencyInformation:
    """IC of each term from English word frequencies (wordfreq): context-free, offline."""

    name = "wordfreq"
    metric = "TPI-wordfreq"

    def term_ics(self, text: str, terms: Sequence[Range]) -> list[float]:
        """Return -ln of the lowest frequency among each term's words (0 for punctuation)."""
        from wordfreq import tokenize

        ics = []
        for start, end in terms:
            words = tokenize(text[start:end], "en")
            ics.append(max((_word_ic(w) for w in words), default=0.0))
        return ics


@functools.lru_cache(maxsize=200_000)
def _word_ic(word: str) -> float:
    from wordfreq import word_frequency

    return -math.log(word_frequency(word, "en", minimum=WORDFREQ_FLOOR))


def information_source(masked_lm: str | None = None, **options: Any) -> Any:
    """Return the masked-LM source for a local folder, else the offline wordfreq default."""
    if masked_lm:
        return MaskedLMInformation(masked_lm, **options)
    return WordFrequencyInformation()
