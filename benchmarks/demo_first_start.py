"""Wall time of `scripts/demo.sh` on a fresh clone until the site answers, step by step.

    nice -n 10 python benchmarks/demo_first_start.py \
        --output benchmarks/results/demo_first_start.json

Clones the committed HEAD of this checkout into a temporary folder (no .venv, no var/), runs
`scripts/demo.sh` there on a free port, timestamps every line it prints, and stops it once
the site answers. Package caches are whatever this machine has (pip's cache, and wheels in
PIP_FIND_LINKS); the JSON records how many packages were downloaded. Reported: when each of
the five steps started, when the site first answered, and the longest stretch without any
output (issue 25: "about 3 minutes of it with no output"). Target: 2 minutes, caches warm.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.load_intruder import free_port  # noqa: E402


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP answer (a redirect to the login page) means it serves
    except OSError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=1200, help="Give up after this long.")
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="Keep the clone (for a warm rerun).")
    parser.add_argument("--machine-note", default="")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="demo-first-start."))
    clone = workdir / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    from revision import commit

    revision = commit(clone)
    port = free_port()
    # The clone makes its own .venv: this checkout's virtual environment leaves the PATH.
    venv = sys.prefix if sys.prefix != sys.base_prefix else ""
    path = [d for d in os.environ["PATH"].split(os.pathsep) if not (venv and d.startswith(venv))]
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env |= {"DEMO_PORT": str(port), "PATH": os.pathsep.join(path), "PYTHONUNBUFFERED": "1"}
    load_before = os.getloadavg()
    started = time.monotonic()
    demo = subprocess.Popen(
        ["bash", "scripts/demo.sh"],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[tuple[float, str]] = []

    def read() -> None:
        for line in demo.stdout:
            lines.append((round(time.monotonic() - started, 1), line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    served_at = None
    try:
        while time.monotonic() - started < args.timeout and demo.poll() is None:
            if any("Serving on" in text for _, text in lines) and answers(
                f"http://127.0.0.1:{port}/"
            ):
                served_at = round(time.monotonic() - started, 1)
                break
            time.sleep(0.5)
    finally:
        os.killpg(demo.pid, signal.SIGTERM)
        demo.wait(timeout=30)
        reader.join(timeout=5)
    times = [0.0] + [t for t, _ in lines] + ([served_at] if served_at else [])
    gaps = sorted(((b - a, a, b) for a, b in itertools.pairwise(times)), reverse=True)[:3]
    from did_work import require_work

    require_work("demo_first_start", output_lines=len(lines), served_after_s=served_at)
    result: dict[str, Any] = {
        "benchmark": "demo_first_start",
        "commit": revision,
        "served_after_s": served_at,
        "target_s": 120,
        "steps": [{"at_s": t, "line": text} for t, text in lines if "[demo" in text],
        "downloads": sum("Downloading" in text for _, text in lines),
        "packages_collected": sum("Collecting" in text for _, text in lines),
        "longest_silences_s": [
            {"seconds": round(g, 1), "from_s": a, "to_s": b} for g, a, b in gaps
        ],
        "machine": {
            "cores": os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
            "note": args.machine_note,
        },
    }
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        result["clone"] = str(clone)
    text = json.dumps(result, indent=1)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n")
    print(text)
    return 0 if served_at else 1


if __name__ == "__main__":
    raise SystemExit(main())
