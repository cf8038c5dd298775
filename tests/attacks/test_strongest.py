"""The strongest adversary counts a document as re-identified when any attack ranks it first."""

from attacks.base import Prediction
from attacks.metrics import trir
from attacks.strongest import reidentified_by, strongest_adversary


def _p(doc: str, true: str, predicted: str, rank: int | None, prob: float | None) -> Prediction:
    return Prediction(doc, true, predicted, rank, prob)


def test_strongest_takes_the_best_rank_per_document():
    by_attack = {
        "tfidf": [
            _p("d1", "A", "A", 1, 0.6),
            _p("d2", "B", "A", 3, 0.1),
            _p("d3", "C", "A", None, None),
        ],
        "tria": [
            _p("d1", "A", "B", 2, 0.3),
            _p("d2", "B", "C", 2, 0.2),
            _p("d3", "C", "B", None, None),
        ],
    }
    strongest = strongest_adversary(by_attack)
    assert [p.doc_id for p in strongest] == ["d1", "d2", "d3"]
    assert [p.true_rank for p in strongest] == [1, 2, None]
    result = trir(strongest)
    assert result.correct == 1 and result.n == 3 and result.n_absent == 1
    assert reidentified_by(by_attack) == {"d1": ["tfidf"], "d2": [], "d3": []}


def test_strongest_is_at_least_every_single_attack():
    by_attack = {
        "bm25": [_p("d1", "A", "A", 1, 0.5), _p("d2", "B", "A", 2, 0.4)],
        "dense": [_p("d1", "A", "B", 2, 0.4), _p("d2", "B", "B", 1, 0.7)],
    }
    assert trir(strongest_adversary(by_attack)).trir_pct == 100.0
    assert reidentified_by(by_attack) == {"d1": ["bm25"], "d2": ["dense"]}


def test_ties_on_rank_prefer_the_higher_true_probability():
    by_attack = {"a": [_p("d1", "A", "B", 2, 0.2)], "b": [_p("d1", "A", "C", 2, 0.3)]}
    assert strongest_adversary(by_attack)[0].true_prob == 0.3
