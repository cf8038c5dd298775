"""Wall and CPU time of the README's test command, per pass, with the machine's load beside it.

    python benchmarks/test_suite_time.py --output benchmarks/results/test_suite_time.json

Runs `bash scripts/test.sh --durations=N` (arguments after `--` go to pytest too) from the
repository root, as CI does, and records: the whole command's wall time; the CPU seconds of
every process it started (user + system, from the kernel's child accounting); each pytest
pass's summary line (counts and pytest's own time); the slowest tests of each pass; and the
load average sampled every 10 s, because a second session on the machine stretches wall time
(issue 25's target, 10 minutes, is for a quiet 2-core machine). Exits with the command's
status, so a failing suite is never reported as a time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"^=+ (?P<counts>.*?) in (?P<seconds>[\d.]+)s(?: \([\d:]+\))? =+$")
PASS = re.compile(r"^=== pytest on (?P<name>SQLite|PostgreSQL)")
DURATION = re.compile(r"^(?P<seconds>[\d.]+)s (?P<phase>setup|call|teardown)\s+(?P<test>\S+)$")


def parse_output(lines: list[str]) -> list[dict[str, Any]]:
    """Return one entry per pytest pass: its name, summary counts, time and slowest tests."""
    passes: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in lines:
        if match := PASS.match(line):
            current = {"pass": match["name"], "slowest": []}
            passes.append(current)
        elif current is not None and (match := DURATION.match(line)):
            current["slowest"].append(
                {"seconds": float(match["seconds"]), "phase": match["phase"], "test": match["test"]}
            )
        elif current is not None and (match := SUMMARY.match(line)):
            current["summary"] = match["counts"]
            current["pytest_seconds"] = float(match["seconds"])
    return passes


def sample_load(samples: list[tuple[float, float]], stop: threading.Event, start: float) -> None:
    while not stop.wait(10.0):
        samples.append((round(time.monotonic() - start, 1), os.getloadavg()[0]))


def speed_probe() -> float:
    """Seconds of one fixed single-core workload: the machine's speed beside the times.

    The same tree's test command took 765.3 s / 1,090.5 CPU s one day and 849.2 s / 1,242.0
    CPU s the next on this machine (a host shared with others, steal 0.3 s): times from
    different days compare only beside this.
    """
    started = time.process_time()
    total = 0
    for number in range(8_000_000):
        total += number * number % 7
    hashlib.sha256(bytes(128 * 2**20)).hexdigest()
    return round(time.process_time() - started, 3)


def steal_seconds() -> float | None:
    """CPU time the hypervisor gave to others so far (Linux /proc/stat), or None."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except OSError:
        return None
    return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--durations", type=int, default=25, help="slowest tests kept per pass")
    parser.add_argument("--note", default="", help="free text stored with the result")
    parser.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments")
    args = parser.parse_args()

    command = ["bash", "scripts/test.sh", f"--durations={args.durations}", *args.pytest_args]
    samples: list[tuple[float, float]] = []
    stop = threading.Event()
    start = time.monotonic()
    sampler = threading.Thread(target=sample_load, args=(samples, stop, start), daemon=True)
    load_before = os.getloadavg()
    probe_before, steal_before = speed_probe(), steal_seconds()
    sampler.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines: list[str] = []
    with subprocess.Popen(
        command,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(line)
            lines.append(line.rstrip("\n"))
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    probe_after, steal_after = speed_probe(), steal_seconds()
    stop.set()
    sampler.join()
    loads = [load for _, load in samples]
    from did_work import require_work
    from revision import commit

    require_work("test_suite_time", pytest_passes=len(parse_output(lines)))
    result = {
        "command": " ".join(command),
        "commit": commit(REPO),
        "exit_status": process.returncode,
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(
            (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1
        ),
        "passes": parse_output(lines),
        "load_average": {
            "before": round(load_before[0], 2),
            "mean": round(sum(loads) / len(loads), 2) if loads else None,
            "max": round(max(loads), 2) if loads else None,
            "samples_every_10s": samples,
        },
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            # The same fixed workload before and after, in CPU seconds: lower is faster.
            "speed_probe_s": {"before": probe_before, "after": probe_after},
            "steal_s": None
            if steal_before is None or steal_after is None
            else round(steal_after - steal_before, 1),
        },
        "note": args.note,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.output}: {result['wall_seconds']} s wall, {result['cpu_seconds']} CPU s")
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
