"""The guard's stopping rule against a fake attack, and generalizing evidence masked first."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from anonymize import Span
from attacks.prediction import predictions_from_scores
from guard import GuardConfig, GuardItem, guard_texts
from guard.evidence import PersonEvidence, log_odds_z

NAME_SPAN = [Span(0, 6, "PERSON", "PERSON_FIRSTNAME", "", 1.0)]
PERSONS = ["alma", "bruno", "cleo", "zora"]


class KeywordAttack:
    """A fake attack: each person scores 2 per occurrence of each of their keywords.

    Ties rank in `names` order (as the real attacks do), and Zora comes last, so a tie
    never favours her: her rank is exactly 1 + the persons scoring at least as high.
    """

    names = PERSONS

    def __init__(self, keywords: dict[str, list[str]]) -> None:
        self.keywords = keywords
        self.calls = 0

    def predict(self, documents, top_k=1, true_names=None):
        self.calls += 1
        ids = list(documents)
        scores = np.zeros((len(ids), len(self.names)))
        for row, doc_id in enumerate(ids):
            words = re.findall(r"\w+", documents[doc_id].lower())
            for column, name in enumerate(self.names):
                scores[row, column] = 2.0 * sum(words.count(w) for w in self.keywords.get(name, []))
        return predictions_from_scores(ids, scores, self.names, true_names, top_k)


# Zora's words; Alma shares "kites", Bruno "kites" and "origami", Cleo none.
ATTACK = KeywordAttack(
    {"zora": ["origami", "kites", "tango"], "alma": ["kites"], "bruno": ["kites", "origami"]}
)
TEXT = "PERSON loves origami, kites and tango, and tango again."


def _guard(k: int, **options) -> object:
    item = GuardItem("t", TEXT, "zora", list(NAME_SPAN))
    [result] = guard_texts([item], {"fake": ATTACK}, GuardConfig(k=k, budget=1.0, **options))
    return result


def test_stopping_rule_stops_at_the_first_masking_that_reaches_k():
    # Before: Zora 2 * (1 + 1 + 2) = 8, Bruno 4, Alma 2, Cleo 0: rank 1. Masking "tango"
    # (two words, Zora 8 -> 4) ties her with Bruno, who sorts first: rank 2 = k. The guard
    # must stop there: masking more words would buy nothing the rule asks for.
    result = _guard(k=2)
    assert result.ranks_before == {"fake": 1}
    assert result.masked_words == ["tango", "tango"]
    assert result.ranks_after == {"fake": 2} and not result.flagged


def test_stopping_rule_keeps_masking_until_every_step_is_verified_at_k():
    # k = 4 needs Zora below Alma too (ties with Cleo's 0 at the end): every keyword goes.
    result = _guard(k=4)
    assert sorted(set(result.masked_words)) == ["kites", "origami", "tango"]
    assert result.ranks_after == {"fake": 4} and not result.flagged
    # Each intermediate rank the guard recorded is the attack's own, and below k.
    assert [s.ranks["fake"] for s in result.steps][-1] == 4
    assert all(s.ranks["fake"] < 4 for s in result.steps[:-1])


def test_unreachable_k_is_flagged_and_a_mask_that_moved_no_rank_is_left_clear():
    item = GuardItem("t", TEXT, "zora", list(NAME_SPAN))
    # Budget: one word of the text's ten; no single word moves Zora from rank 1 (Zora 8 ->
    # at least 6, Bruno at most 4): the word the guard masked only damaged the text, so it
    # is left clear and the reason says why.
    [result] = guard_texts([item], {"fake": ATTACK}, GuardConfig(k=4, budget=0.1))
    assert result.flagged and result.reason.startswith("budget spent")
    assert "1 masked word(s) that moved no rank were left clear" in result.reason
    assert result.ranks_after == result.ranks_before == {"fake": 1}
    assert result.masked_words == [] and result.steps == [] and result.words_masked_by_guard == 0
    assert result.text == "PERSON_FIRSTNAME_1 loves origami, kites and tango, and tango again."


def test_a_flagged_text_keeps_the_masks_that_moved_its_rank():
    # Three words: "tango" twice (Zora 8 -> 4, tied with Bruno: rank 2), then "origami"
    # (Zora 2, Alma 2, Bruno 2: rank 3); k = 4 is not reached, both steps moved the rank.
    item = GuardItem("t", TEXT, "zora", list(NAME_SPAN))
    [result] = guard_texts([item], {"fake": ATTACK}, GuardConfig(k=4, budget=0.3))
    assert result.flagged and "left clear" not in result.reason
    assert result.ranks_after["fake"] > result.ranks_before["fake"] == 1
    assert result.masked_words


def test_log_odds_z_by_hand():
    # 3 of Zora's 3 texts, 0 of 6 others: log(3.5 * 6.5 / (0.5 * 0.5)) / sqrt(1/3.5 + 2 + 2 + 1/6.5)
    expected = math.log(3.5 * 6.5 / 0.25) / math.sqrt(1 / 3.5 + 1 / 0.5 + 1 / 0.5 + 1 / 6.5)
    assert log_odds_z(3, 3, 0, 6) == pytest.approx(expected)
    assert log_odds_z(1, 3, 2, 6) == pytest.approx(0.0, abs=0.5)  # as common as elsewhere
    assert log_odds_z(0, 3, 6, 6) < 0


BACKGROUND = {
    "alma": ["Alma paints rivers.", "Alma teaches drawing.", "Alma loves pottery."],
    "bruno": ["Bruno paints rivers.", "Bruno teaches drawing.", "Bruno loves chess."],
    "cleo": ["Cleo paints rivers.", "Cleo teaches drawing.", "Cleo loves baking."],
    "zora": ["Zora folds origami.", "Her origami cranes fly.", "Origami and drawing."],
}


def test_evidence_scores_what_every_text_of_the_person_shares():
    evidence = PersonEvidence.fit(BACKGROUND)
    zora = evidence.z["zora"]
    # In all three of Zora's texts and nobody else's: the strongest evidence.
    assert zora["origami"] == pytest.approx(log_odds_z(3, 3, 0, 9))
    assert zora["origami"] > 2.0
    # "drawing" is in one of Zora's three texts and one of each other person's three: no
    # evidence for her (z near 0).
    assert abs(zora["drawing"]) < 0.5
    # A word in one text only ("cranes") is weaker evidence than one in all three.
    assert zora["crane"] < zora["origami"]


def test_generalizing_evidence_is_masked_first_whatever_the_attack_says():
    # The fake attack never looks at "cranes" or "origami"'s absence; the guard's attack
    # would stop after "tango". With evidence_z, words that mark Zora in every text of the
    # background go first, as one step taken whatever the ranks.
    evidence = PersonEvidence.fit(BACKGROUND)
    item = GuardItem("t", "PERSON folds origami and dances tango.", "zora", list(NAME_SPAN))
    attack = KeywordAttack({"zora": ["tango"]})
    [plain] = guard_texts([item], {"fake": attack}, GuardConfig(k=2, budget=1.0))
    assert plain.masked_words == ["tango"]
    config = GuardConfig(k=2, budget=1.0, evidence_z=2.0, checkpoints=(2,))
    [result] = guard_texts([item], {"fake": attack}, config, evidence=evidence)
    assert result.steps[0].value == "generalizing: origami"
    assert result.fixed_steps == 1
    assert sorted(result.masked_words) == ["origami", "tango"] and not result.flagged
    text, _, words, flagged = result.at_k(2)
    assert "origami" not in text and "tango" not in text and words == 2 and not flagged


def test_generalizing_evidence_respects_the_budget_and_needs_its_table():
    evidence = PersonEvidence.fit(BACKGROUND)
    item = GuardItem("t", "PERSON folds origami and dances tango.", "zora", list(NAME_SPAN))
    attack = KeywordAttack({"zora": ["tango"]})
    # Budget: one word of six; "origami" takes it, the greedy search has none left.
    config = GuardConfig(k=2, budget=1 / 6, evidence_z=2.0)
    [result] = guard_texts([item], {"fake": attack}, config, evidence=evidence)
    assert result.masked_words == ["origami"] and result.flagged
    with pytest.raises(ValueError, match="PersonEvidence"):
        guard_texts([item], {"fake": attack}, config)
    with pytest.raises(ValueError, match="evidence_z"):
        GuardConfig(evidence_z=0)
