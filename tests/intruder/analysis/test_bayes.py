"""The JZS Bayes factor in log space: pingouin's values where pingouin works, and no overflow
on paper-sized studies where pingouin raises ZeroDivisionError."""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pingouin as pg
import pytest

from intruder.analysis.bayes import bf10_from_log, jzs_log_bf10
from intruder.analysis.construct_loss import construct_loss


@pytest.mark.parametrize(
    ("t", "n"),
    [(0.0, 5), (0.1, 10), (1.2, 3), (2.1, 20), (-3.5, 50), (10.0, 100), (-20.0, 400), (-40, 1080)],
)
def test_log_bf10_matches_pingouin_where_pingouin_does_not_overflow(t, n):
    expected = pg.bayesfactor_ttest(t, n, paired=True)
    assert math.exp(jzs_log_bf10(t, n)) == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize(("t", "n"), [(-166.8, 400), (-80.0, 1080)])
def test_paper_sized_t_overflows_pingouin_but_not_the_log_bayes_factor(t, n):
    with pytest.raises(ZeroDivisionError):
        pg.bayesfactor_ttest(t, n, paired=True)
    log10 = jzs_log_bf10(t, n) / math.log(10)
    assert math.isfinite(log10) and log10 > 300
    # More evidence (a larger |t| at the same n) gives a larger Bayes factor.
    assert jzs_log_bf10(t * 1.1, n) > jzs_log_bf10(t, n)


def test_bf10_beyond_a_float_is_reported_as_an_infinite_bound():
    assert bf10_from_log(800.0) == math.inf
    assert bf10_from_log(math.log(3.0)) == pytest.approx(3.0)


def test_log_bf10_refuses_what_is_not_a_t_test():
    with pytest.raises(ValueError, match="n >= 2"):
        jzs_log_bf10(1.0, 1)
    with pytest.raises(ValueError, match="finite"):
        jzs_log_bf10(math.inf, 10)


class WordTagger:
    """A stand-in for spaCy's tagger: "he" is a pronoun, every other word a noun."""

    def pipe(self, texts, batch_size=32):
        for text in texts:
            yield [
                SimpleNamespace(pos_="PRON" if w.lower() == "he" else "NOUN", is_space=False)
                for w in text.split()
            ]


def test_construct_loss_on_a_study_large_enough_to_overflow_pingouin():
    # 400 texts: the originals have 10 or 11 pronouns, the anonymized none (t of about 420).
    rng = np.random.default_rng(7)
    originals = [" ".join(["he"] * int(k) + ["sailor"] * 5) for k in rng.integers(10, 12, 400)]
    texts = pd.DataFrame(
        {"original": originals, "anonymized": [o.replace("he", "PRONOUN") for o in originals]}
    )
    table = construct_loss(texts, WordTagger()).set_index("pos")
    pron = table.loc["PRON"]
    assert pron["n_texts"] == 400 and pron["t"] > 166.8
    assert pron["bf10"] == math.inf and pron["bf01"] == 0.0
    assert pron["log10_bf10"] > 308  # beyond a float: BF10 is only a bound
    assert "log10_bf10" in pron["note"]
    words = table.loc["ntok"]  # the fake tagger counts "PRONOUN" as a word too
    assert math.isnan(words["bf10"]) and words["note"] == "identical in every text: no test"
