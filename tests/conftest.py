"""Shared fixtures: paths to the public research data (read by path, never copied)."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("SHARED_DATA_DIR", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Return ../shared/data (or $SHARED_DATA_DIR), skipping where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"research data not found at {SHARED_DATA} (set SHARED_DATA_DIR)")
    return SHARED_DATA
