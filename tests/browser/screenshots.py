"""Screenshots of the pages the browser tests walk, kept for a person to look at.

Set ``INTRUDER_SCREENSHOTS=DIR`` (docs/configuration.md) and every browser test that calls
:func:`keep` saves a full-page PNG there; unset, nothing is written.
"""

from __future__ import annotations

import os
from pathlib import Path


def keep(page, name: str) -> None:
    """Save a full-page screenshot as ``DIR/<name>.png`` when INTRUDER_SCREENSHOTS is set."""
    folder = os.environ.get("INTRUDER_SCREENSHOTS")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)
