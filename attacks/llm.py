"""LLM intruders: a closed-world reader that chooses among retrieved candidates (an attack
that joins TRIR and the strongest adversary), and an open-world guesser that names the
person from its own knowledge (scored like a human guess).

Closed world, after the RAG reader of paper 002's authors' later work: BM25 over chunks of
the background knowledge picks the `llm_candidates` likeliest individuals and their best
`llm_chunks_per_candidate` chunks; the model reads them and the text and returns every
candidate with a probability. The ranking over all individuals is the model's order, then
the retrieved candidates it left out, then everyone else by BM25 score; probability 0
outside the model's answer. A text whose answer stays unusable after retries counts as not
re-identified, and `stats["llm"]["failures"]` says how many and why.

Open world: the model is asked who is described, with no candidate list; its first name is
scored by `model_runtime.guess_scoring.score_guess` against the true name and aliases, among
the study's (or the input's) persons and under the same identification rule, exactly as a
human intruder's guess is.

The prompts are this project's (the RAG reader's own are not published with the data).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from attacks.base import Attack, ProgressCallback
from attacks.bm25 import bm25_tokens
from attacks.config import AttackConfig
from attacks.prediction import Prediction
from model_runtime.guess_scoring import (
    DEFAULT_RULE,
    DEFAULT_THRESHOLD,
    GuessScore,
    Person,
    score_guess,
)

if TYPE_CHECKING:
    from llm.client import LLMClient
    from llm.settings import LLMSettings

CHUNKS_FILE = "chunks.json"
ANSWER_RETRIES = 2
# An answered name counts as a candidate at this character cosine or above (typos, accents).
CANDIDATE_MATCH = 0.9

SYSTEM = "You are an expert at identifying people from descriptions. Provide no explanations."
CLOSED_WORLD_USER = (
    "The TEXT below describes one of the CANDIDATES. Some of its words may have been "
    "replaced by placeholders such as PERSON_FIRSTNAME_1, LOCATION_2 or ***. Each candidate "
    "comes with excerpts of what is known about them. Return a JSON-formatted list of "
    'objects {{"name": <candidate name as written>, "probability": <0 to 1>}}, one per '
    "candidate, the most likely first, the probabilities summing to 1.\n\n"
    "CANDIDATES:\n\n{candidates}\n\nTEXT:\n\n{text}"
)
OPEN_WORLD_USER = (
    "The TEXT below describes a real person. Some of its words may have been replaced by "
    "placeholders such as PERSON_FIRSTNAME_1, LOCATION_2 or ***. Who is described? Return a "
    "JSON-formatted list of up to {k} full names, the most likely first, or an empty list "
    "if you cannot tell.\n\nTEXT:\n\n{text}"
)


def llm_settings(config: AttackConfig) -> LLMSettings:
    """Return the endpoint settings: the environment, with the config's model where set."""
    from llm.settings import LLMSettings

    return LLMSettings.from_env(model=config.llm_model or None)


def chunk_words(text: str, size: int) -> list[str]:
    """Split `text` into chunks of `size` words (the last one shorter)."""
    words = text.split()
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)] or [""]


def match_candidate(answer: str, candidates: Sequence[str]) -> str | None:
    """Return the candidate `answer` names (case-insensitive, else character cosine >= 0.9)."""
    from model_runtime.guess_scoring import character_cosine

    folded = answer.strip().casefold()
    for candidate in candidates:
        if candidate.casefold() == folded:
            return candidate
    best = max(candidates, key=lambda c: character_cosine(c, answer), default=None)
    if best is not None and character_cosine(best, answer) >= CANDIDATE_MATCH:
        return best
    return None


def parse_candidate_answer(content: str, candidates: Sequence[str]) -> list[tuple[str, float]]:
    """Return (candidate, probability) pairs from the answer, normalised to sum to 1.

    Objects with name and probability, or bare names (then the probability is shared
    evenly); names that match no candidate are dropped. No candidate at all: unparseable.
    """
    from llm.answers import parse_json
    from llm.errors import LLMAnswerError

    value = parse_json(content)
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        value = lists[0] if len(lists) == 1 else [value]
    if not isinstance(value, list):
        raise LLMAnswerError("unparseable", f"not a JSON list: {content[:120]!r}")
    chosen: dict[str, float] = {}
    for item in value:
        if isinstance(item, str):
            name, probability = item, None
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            name, probability = item["name"], item.get("probability")
        else:
            continue
        candidate = match_candidate(name, candidates)
        if candidate is None or candidate in chosen:
            continue
        try:
            chosen[candidate] = max(0.0, float(probability)) if probability is not None else -1.0
        except (TypeError, ValueError):
            chosen[candidate] = -1.0
    if not chosen:
        raise LLMAnswerError("unparseable", f"no candidate named: {content[:120]!r}")
    if any(p < 0 for p in chosen.values()) or sum(chosen.values()) <= 0:
        return [(name, 1.0 / len(chosen)) for name in chosen]
    total = sum(chosen.values())
    ranked = sorted(chosen.items(), key=lambda item: -item[1])  # stable: answer order on ties
    return [(name, p / total) for name, p in ranked]


class LLMAttack(Attack):
    """Closed-world LLM reader: retrieve likely candidates, let the model choose."""

    name = "llm"
    sends_texts_out = True
    # The model reads the texts as written: no lemmas, no dropped stop words.
    uses_curation = False

    def __init__(self, config: AttackConfig | None = None) -> None:
        super().__init__(config)
        self.chunks: list[tuple[str, str]] = []  # (individual, chunk text)

    def fit(self, background: dict[str, str], progress: ProgressCallback | None = None) -> None:
        """Chunk every individual's background and index the chunks with BM25."""
        self.chunks = [
            (name, chunk)
            for name in sorted(background)
            for chunk in chunk_words(background[name], self.config.llm_chunk_words)
        ]
        self.names = sorted(background)
        self._index()

    def _index(self) -> None:
        from rank_bm25 import BM25Okapi

        self.index = BM25Okapi([bm25_tokens(chunk) or ["_"] for _, chunk in self.chunks])
        column_of = {name: i for i, name in enumerate(self.names)}
        self.chunk_owner = np.array([column_of[name] for name, _ in self.chunks])

    def retrieve(self, text: str) -> tuple[list[str], dict[str, list[str]], np.ndarray]:
        """Return the likeliest candidates, their best chunks and every individual's score."""
        chunk_scores = self.index.get_scores(bm25_tokens(text))
        person_scores = np.full(len(self.names), -np.inf)
        np.maximum.at(person_scores, self.chunk_owner, chunk_scores)
        order = np.argsort(-person_scores, kind="stable")
        candidates = [self.names[i] for i in order[: self.config.llm_candidates]]
        best_chunks: dict[str, list[str]] = {name: [] for name in candidates}
        per_candidate = self.config.llm_chunks_per_candidate
        for index in np.argsort(-chunk_scores, kind="stable"):
            name, chunk = self.chunks[index]
            if name in best_chunks and len(best_chunks[name]) < per_candidate:
                best_chunks[name].append(chunk)
        return candidates, best_chunks, person_scores

    @staticmethod
    def messages(text: str, candidates: list[str], chunks: dict[str, list[str]]) -> list[dict]:
        """Return the chat messages asking the model to choose among `candidates`."""
        listed = "\n\n".join(
            f"{number}. {name}\n" + "\n".join(f"- {chunk}" for chunk in chunks[name])
            for number, name in enumerate(candidates, 1)
        )
        return [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": CLOSED_WORLD_USER.format(candidates=listed, text=text)},
        ]

    def predict(
        self,
        documents: dict[str, str],
        top_k: int = 5,
        true_names: dict[str, str] | None = None,
        progress: ProgressCallback | None = None,
    ) -> list[Prediction]:
        """Ask the model about every document; fail at once where the endpoint cannot work."""
        from llm.client import LLMClient

        if not self.chunks:
            raise RuntimeError("fit or load the attack before predicting")
        settings = llm_settings(self.config)
        doc_ids = list(documents)
        with LLMClient(settings) as client:
            client.check()  # before any text is sent
            jobs = [
                lambda d=doc_id: self._predict_one(client, d, documents[d], top_k, true_names)
                for doc_id in doc_ids
            ]
            report = (lambda done, total: progress("prediction", done, total)) if progress else None
            outcomes = client.complete_many(jobs, report)
            usage = client.usage.to_dict()
        predictions, failures = [], {}
        for doc_id, outcome in zip(doc_ids, outcomes, strict=True):
            if isinstance(outcome, Prediction):
                predictions.append(outcome)
                continue
            reason = getattr(outcome, "reason", type(outcome).__name__)
            failures[reason] = failures.get(reason, 0) + 1
            predictions.append(
                Prediction(doc_id, (true_names or {}).get(doc_id), "", None, None, [])
            )
        previous = self.stats.get("llm", {})
        self.stats["llm"] = {
            "sampling": settings.sampling(),
            "candidates": self.config.llm_candidates,
            "chunks_per_candidate": self.config.llm_chunks_per_candidate,
            "usage": _add_usage(previous.get("usage"), usage),
            "failures": _add_counts(previous.get("failures", {}), failures),
        }
        return predictions

    def _predict_one(
        self,
        client: LLMClient,
        doc_id: str,
        text: str,
        top_k: int,
        true_names: dict[str, str] | None,
    ) -> Prediction:
        candidates, chunks, person_scores = self.retrieve(text)
        chosen, _, _ = client.complete_parsed(
            self.messages(text, candidates, chunks),
            lambda content: parse_candidate_answer(content, candidates),
            ANSWER_RETRIES,
        )
        probability = dict(chosen)
        by_score = [self.names[i] for i in np.argsort(-person_scores, kind="stable")]
        ranked = list(dict.fromkeys([*probability, *candidates, *by_score]))
        true_name = (true_names or {}).get(doc_id)
        true_rank = ranked.index(true_name) + 1 if true_name in set(self.names) else None
        return Prediction(
            doc_id=doc_id,
            true_name=true_name,
            predicted_name=ranked[0],
            true_rank=true_rank,
            true_prob=probability.get(true_name, 0.0) if true_rank is not None else None,
            top_k=[(name, probability.get(name, 0.0)) for name in ranked[:top_k]],
        )

    def save(self, directory: str | Path) -> None:
        """Save the chunks and attack.json (the BM25 index is rebuilt on load)."""
        self._save_state(directory, CHUNKS_FILE, self.chunks)

    @classmethod
    def load(cls, directory: str | Path) -> LLMAttack:
        """Load an LLM attack saved by `save`."""
        attack, chunks = cls._load_state(directory, CHUNKS_FILE)
        attack.chunks = [(name, chunk) for name, chunk in chunks]
        attack._index()
        return attack


def _add_counts(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {key: a.get(key, 0) + b.get(key, 0) for key in sorted({*a, *b})}


def _add_usage(a: dict[str, Any] | None, b: dict[str, Any]) -> dict[str, Any]:
    """Sum two usage dicts (one per document set predicted)."""
    if not a:
        return b
    total = {key: (a.get(key) or 0) + (b.get(key) or 0) for key in b}
    if a.get("cost_usd") is None and b.get("cost_usd") is None:
        total["cost_usd"] = None
    return total


@dataclass
class OpenWorldGuess:
    """The open-world intruder's answer to one text, scored like a human guess."""

    doc_id: str
    true_name: str | None
    guesses: list[str] = field(default_factory=list)
    # The first guess scored as a human's one guess is; None when the answer failed.
    score: GuessScore | None = None
    # Best cosine over all guesses (a looser reading; never the headline).
    best_of_k_cosine: float | None = None
    error_reason: str = ""
    attempts: int = 0

    @property
    def identified(self) -> bool:
        """Return whether the first guess names the person (the study's rule)."""
        return bool(self.score and self.score.identified)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        values = asdict(self)
        values["identified"] = self.identified
        return values


def guess_identities(
    client: LLMClient,
    documents: dict[str, str],
    true_names: dict[str, str] | None = None,
    aliases: dict[str, Sequence[str]] | None = None,
    *,
    k: int = 3,
    threshold: float = DEFAULT_THRESHOLD,
    progress: Callable[[int, int], None] | None = None,
    persons: Sequence[Person] | None = None,
    true_keys: dict[str, str] | None = None,
    rule: str = DEFAULT_RULE,
) -> list[OpenWorldGuess]:
    """Ask who each document describes and score the first guess with `score_guess`.

    `persons` are every person a guess may name (the study's), `true_keys` each document's
    person among them; without them the persons are the documents' true names (keyed by
    name) with their aliases. `rule` is the identification rule, as for human guesses.
    Raise `llm.LLMUnavailable` (before any text is sent) where the endpoint cannot work.
    """
    from llm.answers import parse_string_list
    from llm.errors import LLMAnswerError

    client.check()
    doc_ids = list(documents)
    if persons is None:
        named = {doc: name for doc, name in (true_names or {}).items() if name}
        known: dict[str, list[str]] = {}
        for doc, name in named.items():
            names = known.setdefault(name, [name])
            names.extend(a for a in (aliases or {}).get(doc, ()) if a not in names)
        persons = [Person(name, tuple(names)) for name, names in known.items()]
        true_keys = named

    def guess(doc_id: str) -> OpenWorldGuess:
        true_name = (true_names or {}).get(doc_id)
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": OPEN_WORLD_USER.format(k=k, text=documents[doc_id])},
        ]
        try:
            names, _, attempts = client.complete_parsed(messages, parse_string_list, ANSWER_RETRIES)
        except LLMAnswerError as error:
            return OpenWorldGuess(
                doc_id, true_name, error_reason=error.reason, attempts=error.attempts
            )
        names = [n.strip() for n in names if n.strip()][:k]
        if true_name is None:
            return OpenWorldGuess(doc_id, None, names, attempts=attempts)
        alias_list = list((aliases or {}).get(doc_id, ()))
        first = score_guess(
            true_name,
            names[0] if names else "",
            alias_list,
            threshold,
            others=persons,
            true_key=(true_keys or {}).get(doc_id, ""),
            rule=rule,
        )
        best = max(
            (score_guess(true_name, n, alias_list, threshold).cosine for n in names), default=0.0
        )
        return OpenWorldGuess(doc_id, true_name, names, first, best, attempts=attempts)

    outcomes = client.complete_many([lambda d=d: guess(d) for d in doc_ids], progress)
    return [
        o if isinstance(o, OpenWorldGuess) else OpenWorldGuess(d, None, error_reason="error")
        for d, o in zip(doc_ids, outcomes, strict=True)
    ]
