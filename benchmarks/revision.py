"""The commit a benchmark measured, written into its JSON beside the numbers."""

from __future__ import annotations

import subprocess
from pathlib import Path


def commit(repo: Path) -> str:
    """Return the short commit checked out in `repo`, or "unknown" outside a git checkout."""
    done = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"
