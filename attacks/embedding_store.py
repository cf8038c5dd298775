"""Sentence embeddings on disk, keyed by the encoder and the text, shared by runs and processes.

The dense attack embeds every background and query chunk; on 2 cores that is most of a risk
check. A rerun with the same encoder (the researcher fixing texts and checking again, a
benchmark run twice, another worker) reads the vectors back instead of encoding again: the
same float32 rows the encoder returned, so predictions are those of the run that wrote them.

Layout: ``<cache_dir>/embeddings/<encoder key>/*.npz``, one shard per write (text keys and
vectors), written to a temporary name and renamed, so concurrent writers never clash and a
reader never sees half a shard. Reading many shards merges them into one.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from attacks.curation import text_key

# Past this many shards, opening the store merges them into one file.
MERGE_SHARDS_AT = 64


def encoder_key(model_dir: str | Path, *, device: str) -> str:
    """Return a key naming the encoder: its files (name, size, mtime) and the device type.

    Another checkpoint, a changed file or another device (GPU kernels round differently)
    gives another key, so a store never serves vectors of a different encoder.
    """
    path = Path(model_dir).resolve()
    files = (
        sorted(
            (str(f.relative_to(path)), f.stat().st_size, f.stat().st_mtime_ns)
            for f in path.rglob("*")
            if f.is_file()
        )
        if path.is_dir()
        else []
    )
    payload = json.dumps({"model": str(path), "files": files, "device": device})
    return hashlib.sha1(payload.encode("utf-8")).hexdigest()[:16]


class EmbeddingStore:
    """Map texts to their embedding rows, persisted as shards in one folder (none: a no-op)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._rows: dict[str, np.ndarray] = {}
        if folder is not None and folder.is_dir():
            self._load()

    def __len__(self) -> int:
        return len(self._rows)

    def get_many(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Return text -> vector for the texts held here."""
        found = {}
        for text in texts:
            row = self._rows.get(text_key(text))
            if row is not None:
                found[text] = row
        return found

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Hold the texts' vectors and write them as one new shard (no folder: keep nothing)."""
        if self.folder is None or not len(texts):
            return  # the attack's own cache holds them for this process
        keys = [text_key(t) for t in texts]
        self._rows.update(zip(keys, vectors, strict=True))
        self._write(self.folder / f"{uuid.uuid4().hex}.npz", keys, np.asarray(vectors))

    def _load(self) -> None:
        assert self.folder is not None
        shards = sorted(self.folder.glob("*.npz"))
        for shard in shards:
            try:
                with np.load(shard, allow_pickle=False) as data:
                    self._rows.update(zip(data["keys"].tolist(), data["vectors"], strict=True))
            except (OSError, ValueError, KeyError):
                continue  # a damaged shard only costs its vectors being encoded again
        if len(shards) > MERGE_SHARDS_AT and self._rows:
            keys = list(self._rows)
            self._write(
                self.folder / f"{uuid.uuid4().hex}.npz",
                keys,
                np.vstack([self._rows[k] for k in keys]),
            )
            for shard in shards:
                shard.unlink(missing_ok=True)

    @staticmethod
    def _write(path: Path, keys: list[str], vectors: np.ndarray) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp")  # not *.npz: readers skip it
        with tmp.open("wb") as handle:
            np.savez(handle, keys=np.asarray(keys), vectors=vectors)
        tmp.replace(path)


def open_embedding_store(
    cache_dir: str | Path | None, model_dir: str | Path, *, device: str
) -> EmbeddingStore:
    """Open the store of the encoder in ``model_dir`` under ``cache_dir`` (none: memory only)."""
    if not cache_dir:
        return EmbeddingStore(None)
    return EmbeddingStore(Path(cache_dir) / "embeddings" / encoder_key(model_dir, device=device))
