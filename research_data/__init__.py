"""Where the public research data lies: one home for the `../shared/data` lookup.

The data (textwash_study/, tria_wikiactors/) is read by path and never copied into the
repository. Both libraries, the Django side, the tests and the benchmarks ask this module,
which imports nothing of theirs (no Django, no `anonymize`, no `attacks`), so every layer may
use it.

Resolution, first match wins:
1. `$SHARED_DATA_DIR`, when set (taken as given, even if it does not exist, so a typo is
   reported rather than silently replaced);
2. `shared/data` beside the current directory (`../shared/data` from a checkout's root: works
   for an installed package too, which has no checkout to be relative to);
3. `shared/data` beside the source checkout this module was imported from.
Where none exists, the first candidate is returned so that error messages name it.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "SHARED_DATA_DIR"
TEXTWASH_STUDY = "textwash_study"
TRIA_WIKIACTORS = "tria_wikiactors"


def candidate_dirs() -> list[Path]:
    """Return the folders that may hold the shared data, in the order they are tried."""
    configured = os.environ.get("SHARED_DATA_DIR")  # == ENV_VAR, spelled out for grep
    if configured:
        return [Path(configured)]
    checkout = Path(__file__).resolve().parent.parent
    candidates = [Path.cwd().parent / "shared" / "data", checkout.parent / "shared" / "data"]
    return list(dict.fromkeys(c.resolve() for c in candidates))


def shared_data_dir() -> Path:
    """Return the shared data folder (see the module docstring); it may not exist."""
    candidates = candidate_dirs()
    return next((c for c in candidates if c.is_dir()), candidates[0])


def textwash_study_dir() -> Path:
    """Return the Textwash study folder (study1.jsonl, study2.jsonl, human_rates.csv)."""
    return shared_data_dir() / TEXTWASH_STUDY


def tria_wikiactors_dir() -> Path:
    """Return the TRIA WikiActors folder (WikiActors_*.json, reference_trir.csv)."""
    return shared_data_dir() / TRIA_WIKIACTORS


def missing_reason(path: Path) -> str:
    """Return the one-line reason a test or benchmark gives when `path` is absent."""
    return f"research data not found at {path} (set {ENV_VAR} to the shared data folder)"
