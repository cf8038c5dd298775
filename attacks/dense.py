"""Dense retrieval: sentence embeddings of document and background chunks, max cosine."""

from __future__ import annotations

import re

import numpy as np

from attacks.base import ProgressCallback
from attacks.embedding_store import EmbeddingStore, open_embedding_store
from attacks.retrieval import RetrievalAttack
from attacks.runtime import resolve_device
from model_runtime.base_model import default_base_model

# all-MiniLM-L6-v2 reads at most 256 word pieces; 120 words stay under it.
CHUNK_WORDS = 120
PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# Query texts embedded per encoder call (progress is reported after each call).
QUERY_TEXTS_PER_CALL = 64
# Distinct chunks whose embeddings an instance keeps for later fits and predictions (~75 MB
# at 384 dimensions); past it the cache starts afresh, so a long-lived worker stays bounded.
EMBEDDING_CACHE_LIMIT = 50_000


def word_chunks(text: str, size: int = CHUNK_WORDS) -> list[str]:
    """Split ``text`` into consecutive chunks of ``size`` words (at least one chunk)."""
    words = text.split()
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)] or [""]


def profile_chunks(text: str, size: int = CHUNK_WORDS) -> list[str]:
    """Split a profile into word chunks per paragraph (blank-line separated).

    A profile joined from several texts (k-fold backgrounds) then keeps each text's chunks
    whichever other texts share the profile, so their embeddings are reused across folds.
    """
    chunks = [c for part in PARAGRAPH_BREAK.split(text) if part.strip() for c in word_chunks(part)]
    return chunks or [""]


class DenseAttack(RetrievalAttack):
    """Link a document to the individual owning the most similar background chunk."""

    name = "dense"
    uses_curation = False
    temperature = 0.05

    def _encoder(self):
        if getattr(self, "encoder", None) is None:
            from sentence_transformers import SentenceTransformer

            path = self.config.base_model_name or default_base_model()
            self.encoder = SentenceTransformer(path, device=str(resolve_device()))
        return self.encoder

    def _store(self) -> EmbeddingStore:
        """Return the on-disk embeddings of this encoder under ``config.cache_dir``."""
        if getattr(self, "_disk", None) is None:
            self._disk = open_embedding_store(
                self.config.cache_dir,
                self.config.base_model_name or default_base_model(),
                device=resolve_device().type,
            )
        return self._disk

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Embed texts, each distinct text once per attack instance (refits reuse them).

        With a ``cache_dir`` the vectors also go to disk, so a later run of the same encoder
        (another process, another day) reads them instead of encoding again.
        """
        cache: dict[str, np.ndarray] = self.__dict__.setdefault("_embeddings", {})
        missing = list(dict.fromkeys(t for t in texts if t not in cache))
        if missing and len(cache) + len(missing) > EMBEDDING_CACHE_LIMIT:
            cache.clear()
            missing = list(dict.fromkeys(texts))
        if missing:
            store = self._store()
            stored = store.get_many(missing)
            cache.update(stored)
            to_encode = [t for t in missing if t not in stored]
            if to_encode:
                vectors = self._encoder().encode(
                    to_encode, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
                )
                cache.update(zip(to_encode, vectors, strict=True))
                store.put_many(to_encode, vectors)
        if not texts:
            return np.zeros((0, self._encoder().get_sentence_embedding_dimension()))
        return np.vstack([cache[t] for t in texts])

    def _index(self, progress: ProgressCallback | None) -> None:
        chunks, owners = [], []
        for column, name in enumerate(self.names):
            for chunk in profile_chunks(self.profiles[name]):
                chunks.append(chunk)
                owners.append(column)
        self.chunk_owner = np.asarray(owners)
        # Where each profile's chunks begin (every profile has at least one chunk).
        self.chunk_start = np.searchsorted(self.chunk_owner, np.arange(len(self.names)))
        self.chunk_embeddings = self._embed(chunks)

    def _scores(self, texts: list[str], progress: ProgressCallback | None) -> np.ndarray:
        scores = np.full((len(texts), len(self.names)), -1.0)
        # Chunks of many texts are embedded in one call: one call per text spent most of its
        # time on per-call overhead and batches of one or two chunks.
        for first in range(0, len(texts), QUERY_TEXTS_PER_CALL):
            group = [word_chunks(t) for t in texts[first : first + QUERY_TEXTS_PER_CALL]]
            embeddings = self._embed([chunk for chunks in group for chunk in chunks])
            cursor = 0
            for offset, chunks in enumerate(group):
                query = embeddings[cursor : cursor + len(chunks)].mean(axis=0)
                cursor += len(chunks)
                query /= np.linalg.norm(query) or 1.0
                similarities = self.chunk_embeddings @ query
                # Each profile's chunks are consecutive (``_index``), so the per-owner maximum
                # is a segment maximum: exact, as np.maximum.at was, and much faster.
                np.maximum(
                    scores[first + offset],
                    np.maximum.reduceat(similarities, self.chunk_start),
                    out=scores[first + offset],
                )
            if progress:
                progress("prediction", min(first + QUERY_TEXTS_PER_CALL, len(texts)), len(texts))
        return scores
