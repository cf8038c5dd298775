"""Dense retrieval embeds each chunk once per attack, so k-fold refits reuse embeddings."""

from __future__ import annotations

import zlib

import numpy as np

from attacks.config import AttackConfig
from attacks.dense import DenseAttack, profile_chunks


class CountingEncoder:
    """A stand-in encoder: a hashed bag of words, counting what it is asked to embed.

    crc32, not `hash`, so the embedding is the same in every process (hash seeds vary).
    """

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts, **options):
        self.seen += list(texts)
        rows = np.zeros((len(texts), 16))
        for i, text in enumerate(texts):
            for word in text.split():
                rows[i, zlib.crc32(word.encode()) % 16] += 1.0
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)

    def get_sentence_embedding_dimension(self) -> int:
        return 16


def test_profile_chunks_keep_each_paragraph_apart():
    text = "alpha beta\n\ngamma delta\n \nepsilon"
    assert profile_chunks(text) == ["alpha beta", "gamma delta", "epsilon"]
    assert profile_chunks(" ".join(["w"] * 250)) == [
        " ".join(["w"] * 120),
        " ".join(["w"] * 120),
        " ".join(["w"] * 10),
    ]
    assert profile_chunks("") == [""]


def test_refitting_on_a_new_fold_embeds_only_unseen_texts():
    attack = DenseAttack(AttackConfig(anonymize_background_knowledge=False, cache_dir=""))
    attack.encoder = CountingEncoder()
    texts = {"a": "glassblower from Quellmar", "b": "cartographer of the trench", "c": "beekeeper"}
    attack.fit({"p": f"{texts['a']}\n\n{texts['b']}", "q": texts["c"]})
    first = len(attack.encoder.seen)
    attack.fit({"p": texts["a"], "q": f"{texts['c']}\n\n{texts['b']}"})
    assert len(attack.encoder.seen) == first  # every chunk was embedded in the first fold
    prediction = attack.predict({"d": "a beekeeper"}, true_names={"d": "q"})[0]
    assert prediction.predicted_name == "q"
