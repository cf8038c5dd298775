"""Dense retrieval embeds each chunk once per attack, so k-fold refits reuse embeddings."""

from __future__ import annotations

import os
import zlib

import numpy as np

from attacks.config import AttackConfig
from attacks.dense import DenseAttack, profile_chunks
from attacks.embedding_store import (
    MERGE_SHARDS_AT,
    EmbeddingStore,
    encoder_key,
    open_embedding_store,
)


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


def _dense(cache_dir, model_dir) -> DenseAttack:
    attack = DenseAttack(
        AttackConfig(
            anonymize_background_knowledge=False,
            use_document_curation=False,
            cache_dir=str(cache_dir),
            base_model_name=str(model_dir),
        )
    )
    attack.encoder = CountingEncoder()
    return attack


BACKGROUND = {
    "p": "glassblower from Quellmar\n\ncartographer of the trench",
    "q": "beekeeper on the salt marsh",
}
QUERIES = {"d1": "a beekeeper", "d2": "the glassblower", "d3": "trench maps"}


def _predictions(attack: DenseAttack) -> list:
    attack.fit(BACKGROUND)
    return attack.predict(QUERIES, true_names={"d1": "q", "d2": "p", "d3": "p"})


def _fake_model(tmp_path, name: str = "model"):
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text("{}")
    return folder


def test_a_later_run_reads_embeddings_from_disk_with_the_same_predictions(tmp_path):
    model = _fake_model(tmp_path)
    without = DenseAttack(AttackConfig(anonymize_background_knowledge=False, cache_dir=""))
    without.encoder = CountingEncoder()
    expected = _predictions(without)
    first = _dense(tmp_path / "cache", model)
    assert _predictions(first) == expected
    assert first.encoder.seen  # a cold store encodes
    second = _dense(tmp_path / "cache", model)  # a new process: nothing in memory
    assert _predictions(second) == expected
    assert second.encoder.seen == []  # every chunk came from disk


def test_another_encoder_or_device_does_not_read_the_store(tmp_path):
    model = _fake_model(tmp_path)
    _predictions(_dense(tmp_path / "cache", model))
    other = _dense(tmp_path / "cache", _fake_model(tmp_path, "other"))
    _predictions(other)
    assert other.encoder.seen  # another checkpoint: encoded afresh
    (model / "config.json").write_text('{"changed": true}')
    os.utime(model / "config.json", ns=(1, 1))
    changed = _dense(tmp_path / "cache", model)
    _predictions(changed)
    assert changed.encoder.seen  # a changed file of the same checkpoint: encoded afresh
    assert encoder_key(model, device="cpu") != encoder_key(model, device="cuda")


def test_the_store_merges_many_shards_and_skips_a_damaged_one(tmp_path):
    folder = tmp_path / "store"
    store = EmbeddingStore(folder)
    for i in range(MERGE_SHARDS_AT + 1):
        store.put_many([f"text {i}"], np.full((1, 4), float(i), dtype=np.float32))
    (folder / "damaged.npz").write_bytes(b"not a zip")
    reopened = EmbeddingStore(folder)
    assert len(reopened) == MERGE_SHARDS_AT + 1
    assert reopened.get_many(["text 3"])["text 3"].tolist() == [3.0] * 4
    assert len(list(folder.glob("*.npz"))) == 1  # merged, the damaged shard dropped
    assert len(EmbeddingStore(folder)) == MERGE_SHARDS_AT + 1


def test_without_a_cache_dir_nothing_is_written(tmp_path):
    store = open_embedding_store("", tmp_path, device="cpu")
    store.put_many(["a"], np.ones((1, 4)))
    assert store.get_many(["a"]) == {}
