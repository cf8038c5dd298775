"""Generalizing evidence: the words a person's texts share, whichever of them an attacker holds.

The greedy guard stops as soon as its own attacks rank the person k-th or worse; an attacker
with other texts of the same person still finds the words the person's texts keep using
("royalist", "guitar"), which the guard left once its own background was beaten. This
module scores every word of the guard's background by how consistently it marks one person
across that person's texts, so such words can be masked before the greedy search starts.

The score is the z statistic of the log odds ratio of a 2 x 2 table of text counts (the
person's texts with and without the word, the other persons' texts with and without it),
with the Haldane-Anscombe 0.5 correction: a word in most of one person's texts and few
others' scores high; a word seen once scores low whatever its rarity, since one text is no
evidence that a second background will hold it too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from guard.document import GuardDocument, Unit, prepare_documents


def log_odds_z(with_person: int, person_texts: int, with_others: int, other_texts: int) -> float:
    """Return the z of the log odds ratio (0.5-corrected) of a word for one person vs the rest."""
    a, b = with_person + 0.5, person_texts - with_person + 0.5
    c, d = with_others + 0.5, other_texts - with_others + 0.5
    return math.log(a * d / (b * c)) / math.sqrt(1 / a + 1 / b + 1 / c + 1 / d)


@dataclass
class PersonEvidence:
    """Per person, the z of each background word (its lemma key, as `Token.key`)."""

    z: dict[str, dict[str, float]]

    @classmethod
    def fit(
        cls, background: Mapping[str, str | Sequence[str]], keep_stop_words: bool = True
    ) -> PersonEvidence:
        """Count in how many of each person's texts every maskable word occurs, and score it."""
        texts = [
            (person, text)
            for person, value in background.items()
            for text in ([value] if isinstance(value, str) else value)
        ]
        documents = prepare_documents(
            [(str(i), text, person, []) for i, (person, text) in enumerate(texts)],
            keep_stop_words=keep_stop_words,
        )
        counts: dict[str, dict[str, int]] = {person: {} for person in background}
        totals: dict[str, int] = dict.fromkeys(background, 0)
        everywhere: dict[str, int] = {}
        for document in documents:
            totals[document.target] += 1
            for key in {t.key for t in document.tokens if t.candidate}:
                counts[document.target][key] = counts[document.target].get(key, 0) + 1
                everywhere[key] = everywhere.get(key, 0) + 1
        all_texts = len(documents)
        z = {
            person: {
                key: log_odds_z(n, totals[person], everywhere[key] - n, all_texts - totals[person])
                for key, n in keys.items()
            }
            for person, keys in counts.items()
        }
        return cls(z)

    def units(self, document: GuardDocument, threshold: float) -> list[tuple[float, Unit]]:
        """Return the clear words at or above `threshold` for the person, highest z first."""
        scores = self.z.get(document.target, {})
        found = [
            (scores[unit.key], unit)
            for unit in document.units(frozenset(), phrases=False)
            if scores.get(unit.key, -math.inf) >= threshold
        ]
        return sorted(found, key=lambda pair: (-pair[0], pair[1].key))
