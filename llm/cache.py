"""A persistent answer cache, so that a run is reproducible and a crashed run resumes free.

Each answer is committed to SQLite the moment it arrives, keyed by a hash of everything that
decides it: the model, the messages (prompt and text), the sampling settings and the attempt
number (a retried unparseable answer is attempt 1, 2, ...; a re-run replays the same
sequence). Failed requests are never stored, so a resumed run asks for them again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

CACHE_FILE = "answers.sqlite3"


def cache_key(request: dict[str, Any], attempt: int) -> str:
    """Return the SHA-256 of the request (model, messages, sampling) and the attempt."""
    canonical = json.dumps({"request": request, "attempt": attempt}, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class AnswerCache:
    """Store answers in `directory/answers.sqlite3`; safe to share between threads."""

    def __init__(self, directory: str | Path) -> None:
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path / CACHE_FILE, check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
            "answer TEXT NOT NULL, created TEXT DEFAULT CURRENT_TIMESTAMP)"
        )
        self._db.commit()

    def get(self, key: str) -> dict[str, Any] | None:
        """Return the stored answer for `key`, or None."""
        with self._lock:
            row = self._db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, model: str, answer: dict[str, Any]) -> None:
        """Store `answer` under `key` and commit at once (a crash loses nothing paid for)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO answers (key, model, answer) VALUES (?, ?, ?)",
                (key, model, json.dumps(answer)),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
