"""A served process freezes its start-up heap (intruder/web/heap.py): every view is imported
before the first request, and the objects start-up left are out of the collector's way, so
no request pays a full collection over them (issue 50's untraced ~300 ms)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from intruder.web.heap import freeze_startup_heap

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def thawed() -> Iterator[None]:
    """Give the test process its collector back as it was."""
    yield
    gc.unfreeze()


def test_the_start_up_heap_is_frozen_with_every_view_imported(thawed: None) -> None:
    gc.unfreeze()

    frozen = freeze_startup_heap()

    # A frozen object still dies when its last reference goes (CI saw 2 leave in between).
    assert 10_000 < gc.get_freeze_count() <= frozen
    assert {"intruder.annotation.views", "intruder.risk.views"} <= set(sys.modules)
    assert gc.collect(2) >= 0  # the collector still runs, over what came after


@pytest.mark.slow
def test_a_served_process_starts_with_its_heap_frozen(tmp_path: Path) -> None:
    """What gunicorn's master (preload) and runserver import: intruder/wsgi.py, in a new process."""
    probe = (
        "import gc, sys, intruder.wsgi; "
        "print(gc.get_freeze_count(), 'intruder.risk.views' in sys.modules)"
    )
    env = {**os.environ, "DJANGO_SECRET_KEY": "k" * 50, "INTRUDER_VAR_DIR": str(tmp_path)}

    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )

    frozen, views = done.stdout.split()
    assert int(frozen) > 10_000 and views == "True"
