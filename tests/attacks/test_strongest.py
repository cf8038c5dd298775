"""The strongest adversary counts a document as re-identified when any attack ranks it first."""

from attacks.metrics import trir
from attacks.prediction import Prediction
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


def test_permutation_null_of_the_any_attack_rule_lies_between_one_and_m_attackers():
    from attacks.strongest import strongest_permutation_null

    names = [f"p{i}" for i in range(20)]
    docs = [f"d{i}" for i in range(400)]
    # Four attackers that always disagree: the null approaches 1 - (1 - 1/20)^4 (about 18.5 %).
    disagree = {a: {d: names[(i + a) % 20] for i, d in enumerate(docs)} for a in range(4)}
    mean, p95 = strongest_permutation_null({str(a): t for a, t in disagree.items()}, names)
    assert 16.0 < mean < 21.0 and p95 >= mean
    # Four attackers that always agree act as one: the null is 1/20.
    agree = {str(a): disagree[0] for a in range(4)}
    mean, _ = strongest_permutation_null(agree, names)
    assert 3.5 < mean < 6.5
    assert strongest_permutation_null({}, names) == (0.0, 0.0)
