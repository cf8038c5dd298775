"""Greedy risk-guided masking (Morris et al. 2022, section 4, Algorithm 1), over several attacks.

While the true person ranks better than k under any chosen attack, mask the clear word
(every occurrence) or adjacent two-word phrase whose masking lowers the true person's
log-probability most per word masked, summed over the attacks. Stop when the rank is at
least k under every attack, or when the budget is spent: then the text is flagged, never
silently released.

Deviations from the paper, on purpose: the paper stops when the person is outside the top K
(rank > K); we stop at rank >= k, "indistinguishable from k - 1 others", the usual
k-anonymity reading and the one the issue states. The paper masks one token per step; we
mask a word type at every occurrence (as the anonymizer does with a detected string) and
rank candidates by gain per masked word, so a frequent word is not chosen only because it
covers more text. The objective does not depend on k, so one run to the largest k passes
through the answers for every smaller k (`GuardResult.at_k`).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from anonymize import Span
from guard.document import GuardDocument, Unit
from guard.evidence import PersonEvidence
from guard.scorers import PredictScorer, Scorer

GuardProgress = Callable[[int, int], None]


def ordinal(rank: int) -> str:
    """Return a rank as it is read: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 22nd."""
    if 10 <= rank % 100 <= 20:
        return f"{rank}th"
    return f"{rank}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(rank % 10, 'th') }"


@dataclass
class GuardConfig:
    """Settings of one guard run."""

    k: int = field(default=5, metadata={"help": "stop once the true person ranks >= k"})
    budget: float = field(
        default=0.3,
        metadata={"help": "most words the guard may mask, as a share of the text's words"},
    )
    phrases: bool = field(default=True, metadata={"help": "also try adjacent two-word phrases"})
    shortlist: int = field(
        default=8,
        metadata={"help": "candidates an attack without an exact scorer re-ranks per step"},
    )
    checkpoints: tuple[int, ...] = field(
        default=(),
        metadata={"help": "smaller k whose crossing is verified too, for GuardResult.at_k"},
    )
    stop_words: bool = field(
        default=True,
        metadata={"help": "may mask capitalised stop words the curation keeps (She, His)"},
    )
    rare_zipf: float | None = field(
        default=None,
        metadata={
            "help": "first mask every clear word the guard's background never contains whose "
            "Zipf frequency in English (wordfreq) is below this (None: off)"
        },
    )
    evidence_z: float | None = field(
        default=None,
        metadata={
            "help": "first mask every clear word whose association with the person across the "
            "background's texts (guard.evidence z) is at least this, within the budget "
            "(None: off)"
        },
    )

    def __post_init__(self) -> None:
        if self.k < 2:
            raise ValueError(f"k must be at least 2 (rank 1 = re-identified), got {self.k}")
        if not 0.0 < self.budget <= 1.0:
            raise ValueError(f"budget must be a share of words in (0, 1], got {self.budget}")
        if self.shortlist < 1:
            raise ValueError(f"shortlist must be at least 1, got {self.shortlist}")
        if self.rare_zipf is not None and not 0.0 < self.rare_zipf <= 8.0:
            raise ValueError(f"rare_zipf is a Zipf frequency in (0, 8], got {self.rare_zipf}")
        if self.evidence_z is not None and self.evidence_z <= 0:
            raise ValueError(f"evidence_z must be a positive z, got {self.evidence_z}")


@dataclass
class GuardStep:
    """One masking decision and the ranks it left."""

    value: str
    words: int  # tokens newly masked by this step
    ranks: dict[str, int]


@dataclass
class GuardResult:
    """The guarded text of one document and how it got there."""

    doc_id: str
    target: str
    k: int
    text: str
    spans: list[Span]
    ranks_before: dict[str, int | None]
    ranks_after: dict[str, int | None]
    masked_words: list[str]
    words_masked_by_guard: int
    word_count: int
    flagged: bool
    reason: str
    steps: list[GuardStep]
    seconds: float
    step_masks: list[frozenset[int]] = field(default_factory=list, repr=False)
    document: GuardDocument | None = field(default=None, repr=False)
    # Leading steps taken whatever the ranks (rare unseen words): every k starts after them.
    fixed_steps: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON line the CLI writes."""
        return {
            "id": self.doc_id,
            "target": self.target,
            "k": self.k,
            "anonymized": self.text,
            "spans": [s.to_dict() for s in self.spans],
            "ranks_before": self.ranks_before,
            "ranks_after": self.ranks_after,
            "masked_words": self.masked_words,
            "words_masked_by_guard": self.words_masked_by_guard,
            "word_count": self.word_count,
            "flagged": self.flagged,
            "reason": self.reason,
            "steps": [asdict(s) for s in self.steps],
            "seconds": round(self.seconds, 3),
        }

    def at_k(self, k: int) -> tuple[str, list[Span], int, bool]:
        """Return (text, spans, words masked by the guard, flagged) had the run stopped at k.

        Step ranks come from the attacks' own predict at `k` and at `GuardConfig.checkpoints`,
        from the exact scorers elsewhere; pass every k you will ask for as a checkpoint.
        """
        if self.document is None:
            raise ValueError("this result does not keep its document")
        fixed = self.fixed_steps
        ranks = self.steps[fixed - 1].ranks if fixed else self.ranks_before
        if all(rank is None or rank >= k for rank in ranks.values()):
            return (*self._prefix(self.fixed_steps), False)
        for index, step in enumerate(self.steps[self.fixed_steps :], self.fixed_steps):
            if all(rank >= k for rank in step.ranks.values()):
                return (*self._prefix(index + 1), False)
        return (*self._prefix(len(self.steps)), True)

    def _prefix(self, steps: int) -> tuple[str, list[Span], int]:
        masked = self.step_masks[steps - 1] if steps else frozenset()
        return (
            self.document.render(masked),
            self.document.all_spans(masked),
            sum(s.words for s in self.steps[:steps]),
        )


def _ranks(scorers: Sequence[Scorer], document: GuardDocument, masked: frozenset[int]):
    """Return (summed log p(true), ranks by attack) for one masking."""
    total = 0.0
    ranks = {}
    for scorer in scorers:
        log_p, rank = scorer.outcomes(document, [masked])
        total += float(log_p[0])
        ranks[scorer.name] = int(rank[0])
    return total, ranks


def _predicted_ranks(
    scorers: Sequence[Scorer], document: GuardDocument, masked: frozenset[int]
) -> dict[str, int]:
    """Return each attack's rank of the true person from its own predict on the rendered text."""
    rendered = {document.doc_id: document.render(masked)}
    truth = {document.doc_id: document.target}
    ranks = {}
    for scorer in scorers:
        [prediction] = scorer.attack.predict(rendered, top_k=1, true_names=truth)
        ranks[scorer.name] = prediction.true_rank or len(scorer.attack.names) + 1
    return ranks


def _best_unit(
    scorers: Sequence[Scorer],
    document: GuardDocument,
    masked: frozenset[int],
    units: list[Unit],
    current: float,
    shortlist: int,
) -> Unit:
    """Return the unit whose masking lowers the summed log p(true) most per word masked."""
    maskings = [masked | unit.tokens for unit in units]
    sizes = np.array([len(unit.tokens - masked) for unit in units], dtype=np.float64)
    exact = [s for s in scorers if not isinstance(s, PredictScorer)]
    estimated = [s for s in scorers if isinstance(s, PredictScorer)]
    total = np.zeros(len(units))
    for scorer in exact:
        total += scorer.outcomes(document, maskings)[0]
    if estimated:
        # The network is asked about the best few only: by the exact attacks' gain where there
        # are any, else by rarity (a long word masked once is the cheapest first guess).
        if exact:
            order = np.argsort(total / sizes, kind="stable")
        else:
            order = np.argsort([-len(u.value) / len(u.tokens) for u in units], kind="stable")
        chosen = order[:shortlist]
        estimate = np.full(len(units), np.inf)
        estimate[chosen] = total[chosen]
        for scorer in estimated:
            log_p, _ = scorer.outcomes(document, [maskings[i] for i in chosen])
            estimate[chosen] += log_p
        total = estimate
    gain_per_word = (current - total) / sizes
    return units[int(np.argmax(gain_per_word))]


@functools.lru_cache(maxsize=200_000)
def zipf_frequency(word: str) -> float:
    """Return the word's Zipf frequency in English (0 for words wordfreq never saw)."""
    from wordfreq import zipf_frequency as frequency

    return frequency(word, "en")


def rare_unseen_units(
    document: GuardDocument, scorers: Sequence[Scorer], threshold: float
) -> list[Unit]:
    """Return the clear words no lexical scorer's background holds and English rarely uses.

    The guard cannot weigh a word its background never saw, but another attacker's background
    may hold it; a rare word is then as likely as any to single the person out.
    """
    vocabularies = [v for s in scorers if (v := s.vocabulary()) is not None]
    rare = []
    for unit in document.units(frozenset(), phrases=False):
        if any(unit.key in vocabulary for vocabulary in vocabularies):
            continue
        if max(zipf_frequency(unit.value), zipf_frequency(unit.key)) < threshold:
            rare.append(unit)
    return rare


def generalizing_units(
    document: GuardDocument,
    evidence: PersonEvidence,
    threshold: float,
    masked: frozenset[int],
    budget_words: int,
) -> list[Unit]:
    """Return the words that mark the person across the background's texts, within budget.

    Highest z first; a word that would overrun the budget is skipped, a shorter one may fit.
    """
    chosen, spent = [], len(masked)
    for _, unit in evidence.units(document, threshold):
        newly = len(unit.tokens - masked)
        if newly and spent + newly <= budget_words:
            chosen.append(unit)
            spent += newly
    return chosen


def guard_document(
    document: GuardDocument,
    scorers: Sequence[Scorer],
    config: GuardConfig,
    evidence: PersonEvidence | None = None,
) -> GuardResult:
    """Mask `document` greedily until every scorer ranks its target at >= k, or flag it.

    Words taken whatever the ranks come first, as one step each kind: rare words no
    background holds (`config.rare_zipf`), then the person's generalizing evidence
    (`config.evidence_z`, scored by `evidence`).
    """
    if config.evidence_z is not None and evidence is None:
        raise ValueError("evidence_z is set: pass the PersonEvidence fitted on the background")
    started = time.perf_counter()
    masked: frozenset[int] = frozenset()
    # No background for the person: the attack cannot rank them, nothing to guard against.
    active = [s for s in scorers if s.column(document) is not None]
    current, _ = _ranks(active, document, masked)
    ranks = _predicted_ranks(active, document, masked)
    ranks_before: dict[str, int | None] = {s.name: ranks.get(s.name) for s in scorers}
    budget_words = max(1, math.floor(config.budget * document.word_count))
    steps: list[GuardStep] = []
    step_masks: list[frozenset[int]] = []
    fixed_steps = 0
    for label in ("rare, unseen", "generalizing"):
        if not active:
            break
        if label == "rare, unseen" and config.rare_zipf is not None:
            units = rare_unseen_units(document, active, config.rare_zipf)
        elif label == "generalizing" and evidence is not None and config.evidence_z is not None:
            units = generalizing_units(document, evidence, config.evidence_z, masked, budget_words)
        else:
            continue
        newly = frozenset().union(*(u.tokens for u in units)) - masked
        if not newly:
            continue
        masked = masked | newly
        current, _ = _ranks(active, document, masked)
        ranks = _predicted_ranks(active, document, masked)
        value = f"{label}: " + ", ".join(sorted(u.value for u in units))
        steps.append(GuardStep(value, len(newly), dict(ranks)))
        step_masks.append(masked)
        fixed_steps += 1
    reason = "rank >= k under every attack"
    flagged = False
    start_ranks = dict(ranks)  # after the steps taken whatever the ranks
    low = min(ranks.values(), default=config.k)
    pending_checkpoints = sorted(c for c in config.checkpoints if low < c < config.k)
    while active:
        if all(rank >= config.k for rank in ranks.values()):
            # The exact scorers rebuild curated text from per-token pieces, but spaCy sees the
            # rendered text, where a neighbour's lemma can change: confirm with the attacks'
            # own predict, and keep masking while any of them still ranks the person < k.
            ranks = _predicted_ranks(active, document, masked)
            if steps:
                steps[-1].ranks = dict(ranks)
            if all(rank >= config.k for rank in ranks.values()):
                break
        units = document.units(masked, config.phrases)
        spent = len(masked)
        units = [u for u in units if spent + len(u.tokens - masked) <= budget_words]
        if not units:
            flagged = True
            left = document.units(masked, config.phrases)
            reason = "budget spent" if left else "no clear content word left to mask"
            break
        unit = _best_unit(active, document, masked, units, current, config.shortlist)
        newly = len(unit.tokens - masked)
        masked = masked | unit.tokens
        current, ranks = _ranks(active, document, masked)
        if any(c <= min(ranks.values()) for c in pending_checkpoints):
            # A smaller k is reached on the way: confirm it, so `at_k` answers verified ranks.
            ranks = _predicted_ranks(active, document, masked)
            pending_checkpoints = [c for c in pending_checkpoints if c > min(ranks.values())]
        steps.append(GuardStep(unit.value, newly, dict(ranks)))
        step_masks.append(masked)
    if not active:
        reason = "no attack has background for this person"
    if flagged:
        # Masks that moved no rank only damage the text: undo the trailing steps that left
        # every attack's rank where it was (a step before one that moved a rank is kept).
        kept = _moving_steps(steps, fixed_steps, start_ranks)
        if kept < len(steps):
            undone = sum(step.words for step in steps[kept:])
            steps, step_masks = steps[:kept], step_masks[:kept]
            masked = step_masks[-1] if steps else frozenset()
            ranks = dict(steps[-1].ranks) if steps else dict(start_ranks)
            reason += f"; {undone} masked word(s) that moved no rank were left clear"
    ranks_after = {name: ranks.get(name) for name in ranks_before}
    masked_words = [document.tokens[i].text for i in sorted(masked)]
    return GuardResult(
        doc_id=document.doc_id,
        target=document.target,
        k=config.k,
        text=document.render(masked),
        spans=document.all_spans(masked),
        ranks_before=ranks_before,
        ranks_after=ranks_after,
        masked_words=masked_words,
        words_masked_by_guard=len(masked),
        word_count=document.word_count,
        flagged=flagged,
        reason=reason,
        steps=steps,
        seconds=time.perf_counter() - started,
        step_masks=step_masks,
        document=document,
        fixed_steps=fixed_steps,
    )


def _moving_steps(steps: Sequence[GuardStep], fixed: int, start: dict[str, int]) -> int:
    """Return how many leading steps to keep: through the last one that raised any rank."""
    best = dict(start)
    kept = fixed
    for index, step in enumerate(steps[fixed:], fixed):
        if any(rank > best.get(name, 0) for name, rank in step.ranks.items()):
            kept = index + 1
            best = {name: max(best.get(name, 0), rank) for name, rank in step.ranks.items()}
    return kept


@dataclass
class GuardItem:
    """One text to guard: its id, original text, target person and the spans masked so far."""

    doc_id: str
    text: str
    target: str
    spans: list[Span] = field(default_factory=list)


def fit_attacks(
    background: Mapping[str, str | Sequence[str]],
    names: Sequence[str],
    config: Any = None,
    resamples: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """Fit the named attacks ('tfidf', 'bm25', 'dense', 'tria') on person -> text(s).

    Pretreatment is `attacks.prepared`'s, as in the platform's attack runs: each text is
    curated once (cached under `config.cache_dir`), and the returned attacks take raw texts.
    `resamples` > 0 adds, per attack, that many copies fitted on a random half of each
    person's texts ("tfidf~1", ...): a guard that must beat all of them does not stop on the
    accidents of one background, the margin an attacker with other texts needs.
    """
    import random

    from attacks import AttackConfig
    from attacks.prepared import PreparedTexts
    from guard.scorers import RESAMPLE_MARK

    prepared = PreparedTexts(config or AttackConfig(cache_dir=""))
    texts = {
        person: [value] if isinstance(value, str) else list(value)
        for person, value in background.items()
    }
    attacks = {name: prepared.fit(name, texts) for name in names}
    rng = random.Random(seed)
    for index in range(1, resamples + 1):
        half = {
            person: rng.sample(values, max(1, len(values) // 2)) for person, values in texts.items()
        }
        for name in names:
            attacks[f"{name}{RESAMPLE_MARK}{index}"] = prepared.fit(name, half)
    return attacks


def verify_ranks(results: Sequence[GuardResult], attacks: dict[str, Any]) -> None:
    """Re-rank every guarded text with each attack's own predict and flag any rank < k.

    The exact scorers rebuild curated text from per-token pieces; spaCy sees the rendered
    text with its placeholders, where a lemma can differ. This check makes the stopping rule
    hold for the attack as it really runs.
    """
    documents = {r.doc_id: r.text for r in results}
    truth = {r.doc_id: r.target for r in results}
    by_id = {r.doc_id: r for r in results}
    for name, attack in attacks.items():
        for prediction in attack.predict(documents, top_k=1, true_names=truth):
            result = by_id[prediction.doc_id]
            if name not in result.ranks_after or result.ranks_after[name] is None:
                continue
            result.ranks_after[name] = prediction.true_rank
            if prediction.true_rank is not None and prediction.true_rank < result.k:
                if not result.flagged:
                    result.reason = f"{name} still ranks the person {prediction.true_rank}"
                result.flagged = True


def guard_texts(
    items: Sequence[GuardItem],
    attacks: dict[str, Any],
    config: GuardConfig,
    progress: GuardProgress | None = None,
    verify: bool = True,
    evidence: PersonEvidence | None = None,
) -> list[GuardResult]:
    """Guard every item against the fitted `attacks` (name -> attack); progress(done, total).

    `evidence` (`PersonEvidence.fit` on the attacks' background) is needed with
    `config.evidence_z`.
    """
    from guard.document import prepare_documents
    from guard.scorers import scorer_for

    scorers = [scorer_for(name, attack) for name, attack in attacks.items()]
    documents = prepare_documents(
        [(i.doc_id, i.text, i.target, i.spans) for i in items], keep_stop_words=config.stop_words
    )
    results = []
    for done, document in enumerate(documents, 1):
        results.append(guard_document(document, scorers, config, evidence))
        if progress:
            progress(done, len(documents))
    if verify and results:
        verify_ranks(results, attacks)
    return results
