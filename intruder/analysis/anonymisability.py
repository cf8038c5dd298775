"""Text anonymisability (paper section 4.1.3, Table 9): do identified texts differ?

Per text, from the original and the anonymized version:

* prop_anonymized = 100 * (1 - ntok_anonymized / ntok_original), in percent like Table 9,
  with every placeholder removed from the anonymized text before counting. A token is a
  word as `text.word_tokens` defines it (letters/digits; punctuation is not a token).
* freq_rank_*: the mean global frequency rank of the text's words in wordfreq's English
  list, restricted to its `RANKED_WORDS` most frequent words to mirror the paper's
  10,000-word Google list; higher = rarer. Words outside the list are left out and the
  share that was ranked is reported as freq_rank_coverage_*.
* unigram_perplexity_*: exp(-mean ln p(w)) with p(w) the word's frequency in wordfreq's
  English distribution (floor 1e-9 = Zipf 0 for unknown words). This is a *unigram*
  language model: it measures how rare the words are, not how unusual their order is. The
  paper used GPT perplexity (section 4.1.3.3); no pre-trained causal LM can be loaded
  offline here, so these values are not comparable in size to the paper's 66.68 / 145.12,
  only in direction.

Texts are compared by their identified status (mean cosine >= threshold; unjudged texts
left out). Cohen's d is pingouin.compute_effsize(not identified, identified) with the
pooled SD, so d > 0 means the not-identified texts score higher (the paper's sign: d = 0.19
for proportion anonymised with M0 = 22.94 > M1 = 21.45), and its 95% CI is
pingouin.compute_esci (Hedges & Olkin standard error, t critical value).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from intruder.analysis.frames import require_columns
from intruder.analysis.per_text import per_text
from intruder.analysis.text import strip_placeholders, word_tokens

RANKED_WORDS = 10_000
UNKNOWN_WORD_FREQUENCY = 1e-9
VARIABLES: dict[str, str] = {
    "prop_anonymized": "Proportion anonymised (%)",
    "freq_rank_original": "Frequency rank (original)",
    "freq_rank_anonymized": "Frequency rank (anonymised)",
    "unigram_perplexity_original": "Unigram perplexity, wordfreq (original)",
    "unigram_perplexity_anonymized": "Unigram perplexity, wordfreq (anonymised)",
}
COMPARISON_COLUMNS = [
    "variable",
    "label",
    "n_0",
    "m_0",
    "sd_0",
    "n_1",
    "m_1",
    "sd_1",
    "d",
    "d_ci_low",
    "d_ci_high",
    "note",
]


@lru_cache(maxsize=4)
def frequency_ranks(n_words: int = RANKED_WORDS) -> dict[str, int]:
    """Return word -> 1-based rank among wordfreq's `n_words` most frequent English words."""
    import wordfreq  # in the two functions that read it: 0.1 s of every Django process's start

    return {word: rank for rank, word in enumerate(wordfreq.top_n_list("en", n_words), 1)}


def mean_frequency_rank(tokens: Sequence[str], n_words: int = RANKED_WORDS) -> tuple[float, float]:
    """Return (mean rank of the ranked tokens, share of tokens ranked); NaN rank if none."""
    ranks = frequency_ranks(n_words)
    ranked = [ranks[t] for t in tokens if t in ranks]
    if not tokens:
        return float("nan"), float("nan")
    mean = float(np.mean(ranked)) if ranked else float("nan")
    return mean, len(ranked) / len(tokens)


def unigram_perplexity(tokens: Sequence[str]) -> float:
    """Return exp(-mean ln p(w)) under wordfreq's English unigram distribution; NaN if empty."""
    if not tokens:
        return float("nan")
    import wordfreq

    log_probs = [
        math.log(wordfreq.word_frequency(t, "en", minimum=UNKNOWN_WORD_FREQUENCY)) for t in tokens
    ]
    return math.exp(-sum(log_probs) / len(log_probs))


def text_features(texts: pd.DataFrame, n_words: int = RANKED_WORDS) -> pd.DataFrame:
    """Return the anonymisability variables of every text (one row per text_id)."""
    require_columns(texts, ["text_id", "original", "anonymized"], "texts")
    rows = []
    for record in texts.itertuples(index=False):
        placeholders = getattr(record, "placeholders", None) or ()
        original = word_tokens(record.original)
        anonymized = word_tokens(strip_placeholders(record.anonymized or "", placeholders))
        rank_orig, cover_orig = mean_frequency_rank(original, n_words)
        rank_anon, cover_anon = mean_frequency_rank(anonymized, n_words)
        rows.append(
            {
                "text_id": record.text_id,
                "ntok_original": len(original),
                "ntok_anonymized": len(anonymized),
                "prop_anonymized": (
                    100.0 * (1 - len(anonymized) / len(original)) if original else float("nan")
                ),
                "freq_rank_original": rank_orig,
                "freq_rank_anonymized": rank_anon,
                "freq_rank_coverage_original": cover_orig,
                "freq_rank_coverage_anonymized": cover_anon,
                "unigram_perplexity_original": unigram_perplexity(original),
                "unigram_perplexity_anonymized": unigram_perplexity(anonymized),
            }
        )
    return pd.DataFrame(rows)


def cohens_d_with_ci(
    not_identified: Sequence[float], identified: Sequence[float], confidence: float = 0.95
) -> tuple[float, float, float]:
    """Return Cohen's d (pooled SD) of not-identified vs identified and its CI (pingouin)."""
    # Imported here: pingouin brings seaborn and xarray along, and every Django process
    # (worker, command, server) took 2.4 s to start with it at the top, 1.9 s without.
    import pingouin as pg

    d = float(pg.compute_effsize(not_identified, identified, paired=False, eftype="cohen"))
    low, high = pg.compute_esci(
        stat=d,
        nx=len(not_identified),
        ny=len(identified),
        eftype="cohen",
        confidence=confidence,
        decimals=12,
    )
    return d, float(low), float(high)


def compare_identified(
    judgments: pd.DataFrame,
    texts: pd.DataFrame,
    threshold: float,
    features: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Return Table 9: M and SD per outcome (0 = not identified, 1 = identified) and d [CI]."""
    if features is None:
        features = text_features(texts)
    outcome = per_text(judgments, texts, threshold)[["text_id", "n_judgments", "identified"]]
    data = features.merge(outcome, on="text_id")
    data = data[data["n_judgments"] > 0]
    rows = []
    for variable, label in VARIABLES.items():
        values = data[[variable, "identified"]].dropna()
        x0 = values.loc[~values["identified"].astype(bool), variable].to_numpy(float)
        x1 = values.loc[values["identified"].astype(bool), variable].to_numpy(float)
        row = {
            "variable": variable,
            "label": label,
            "n_0": len(x0),
            "m_0": x0.mean() if len(x0) else np.nan,
            "sd_0": x0.std(ddof=1) if len(x0) > 1 else np.nan,
            "n_1": len(x1),
            "m_1": x1.mean() if len(x1) else np.nan,
            "sd_1": x1.std(ddof=1) if len(x1) > 1 else np.nan,
            "d": np.nan,
            "d_ci_low": np.nan,
            "d_ci_high": np.nan,
            "note": "",
        }
        if len(x0) < 2 or len(x1) < 2:
            row["note"] = (
                f"d needs >= 2 texts per outcome (not identified: {len(x0)}, identified: {len(x1)})"
            )
        elif x0.var(ddof=1) == 0 and x1.var(ddof=1) == 0:
            row["note"] = "no variance within either outcome: d undefined"
        else:
            row["d"], row["d_ci_low"], row["d_ci_high"] = cohens_d_with_ci(x0, x1)
        rows.append(row)
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
