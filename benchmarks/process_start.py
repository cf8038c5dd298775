"""What a Django process of the platform costs to start, and which heavy libraries it loads.

Every `manage.py` command, worker, rehearsal and web server pays this start before its own
work; the test command starts about 80 of them. The run times `manage.py check` (settings,
apps, the URLconf and the job runners, as every command loads them) in child processes and
records their CPU seconds, then lists which of the heavy libraries a bare start has loaded:
they belong to the code that draws or computes (a report's plots, its statistics), not to
every start.

    python benchmarks/process_start.py [--repeats 5] [--out benchmarks/results/process_start.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from did_work import require_work  # noqa: E402 - the script's folder, beside this file
from revision import commit  # noqa: E402

# Each loads when the code that needs it runs: 0.1 to 0.75 CPU s of a start apiece.
HEAVY = ("scipy.stats", "matplotlib.pyplot", "wordfreq", "torch", "transformers", "spacy")
# The start as every command makes it, then the modules it left loaded.
PROBE = """
import json, sys, django
django.setup()
from django.urls import get_resolver
get_resolver().url_patterns
import intruder.tasks
print(json.dumps([name for name in {heavy!r} if name in sys.modules]))
"""


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(repeats: int) -> dict:
    """Return the CPU and wall seconds of `repeats` starts and the heavy modules loaded."""
    with tempfile.TemporaryDirectory() as var:
        env = {
            **os.environ,
            "INTRUDER_VAR_DIR": var,
            "DJANGO_SETTINGS_MODULE": "intruder.settings",
            "PYTHONDONTWRITEBYTECODE": "",  # bytecode cached, as a deployment's is
        }
        env.pop("DATABASE_URL", None)
        cpu, wall = [], []
        for _ in range(repeats):
            before, start = _child_cpu(), time.perf_counter()
            subprocess.run(
                [sys.executable, "manage.py", "check"],
                cwd=ROOT,
                env=env,
                check=True,
                capture_output=True,
            )
            wall.append(round(time.perf_counter() - start, 3))
            cpu.append(round(_child_cpu() - before, 3))
        probe = subprocess.run(
            [sys.executable, "-c", PROBE.format(heavy=HEAVY)],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
    return {
        "command": "manage.py check",
        "cpu_s": cpu,
        "wall_s": wall,
        "cpu_median_s": round(statistics.median(cpu), 3) if cpu else None,
        "heavy_at_start": json.loads(probe.stdout.strip().splitlines()[-1]),
        "heavy_watched": list(HEAVY),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="starts to time")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/process_start.json")
    args = parser.parse_args()
    result = {"benchmark": "process_start", "commit": commit(ROOT), **measure(args.repeats)}
    result["load_average_after"] = os.getloadavg()
    require_work("process_start", starts=len(result["cpu_s"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
