"""The installed pytest and pytest-xdist keep an `xdist_group` on one worker (issue 50).

scripts/test.sh runs each pass with `--dist loadgroup`, and tests/conftest.py groups the
tests that share a module fixture (a trained model, the report's forms on the demo study) so
that one worker builds it once. With pytest 9.2 and pytest-xdist 3.8 the groups silently
stopped forming (pytest-dev/pytest-xdist#1386): both workers built every such fixture. This
runs a bare pytest on two workers over one group and fails where that happens again.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter

GROUPED = """
import pytest

@pytest.mark.xdist_group("one")
@pytest.mark.parametrize("i", range(8))
def test_grouped(i):
    pass

@pytest.mark.parametrize("i", range(8))
def test_free(i):
    pass
"""


def test_a_group_runs_on_one_worker_among_tests_free_to_go_to_either(tmp_path) -> None:
    (tmp_path / "test_grouped.py").write_text(GROUPED, encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    bare = [
        "-c",
        os.devnull,
        "--rootdir",
        str(tmp_path),
        "-p",
        "no:cacheprovider",
        "-p",
        "no:django",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", *bare, "."],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    grouped = Counter(re.findall(r"^\[(gw\d)\].*test_grouped\[\d\]@one", done.stdout, re.M))
    assert sum(grouped.values()) == 8, done.stdout  # every one carries its group
    assert len(grouped) == 1, grouped  # and all ran on one worker
