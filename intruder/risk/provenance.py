"""Provenance of a risk report: what made it, so that a reader can cite and reproduce it."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


@functools.cache
def git_commit() -> str | None:
    """Return the checkout's commit (with '-dirty' for local changes), or None outside git."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}-dirty" if dirty else commit


def software_version() -> str | None:
    """Return the installed version of this project."""
    try:
        return metadata.version("intruder-platform")
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def _weights_sha256(path: str, size: int, mtime: float) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_identity(model_dir: str | Path | None) -> dict[str, Any]:
    """Return the anonymizer model's name, folder and the SHA-256 of its weights file."""
    from anonymize.model import DEFAULT_MODEL_DIR

    folder = Path(model_dir) if model_dir else DEFAULT_MODEL_DIR
    for name in WEIGHT_FILES:
        weights = folder / name
        if weights.is_file():
            stat = weights.stat()
            return {
                "name": folder.name,
                "weights_file": name,
                "weights_sha256": _weights_sha256(str(weights), stat.st_size, stat.st_mtime),
            }
    return {"name": folder.name, "weights_file": None, "weights_sha256": None}


def provenance(*, model_dir: str | Path | None = None, **extra: Any) -> dict[str, Any]:
    """Return date, version, commit and model of this report, plus the caller's settings."""
    return {
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "software": "intruder-platform",
        "version": software_version(),
        "git_commit": git_commit(),
        "anonymizer_model": model_identity(model_dir),
        **extra,
    }
