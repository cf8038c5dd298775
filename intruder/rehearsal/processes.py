"""CPU seconds of a process tree, from Linux's /proc: what a served rehearsal's site spent
(gunicorn's master and workers, the job workers), apart from the crowd that drove it.
`benchmarks/load_intruder.py` measures its server the same way."""

from __future__ import annotations

import os
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _proc_stats() -> dict[int, tuple[int, float]]:
    """Return pid -> (parent pid, CPU seconds incl. reaped children) of every process."""
    stats = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # exited meanwhile
            continue
        fields = text[text.rindex(")") + 2 :].split()
        # Fields after the command: state ppid ... utime(11) stime(12) cutime(13) cstime(14).
        cpu = sum(int(fields[i]) for i in (11, 12, 13, 14)) / CLOCK_TICKS
        stats[int(stat.parent.name)] = (int(fields[1]), cpu)
    return stats


def process_tree_cpu_s(root_pid: int | None) -> float | None:
    """Return the CPU seconds of a process and its live descendants (None if unknown)."""
    if root_pid is None:
        return None
    stats = _proc_stats()
    total, frontier = 0.0, [root_pid]
    while frontier:
        pid = frontier.pop()
        if pid in stats:
            total += stats[pid][1]
            frontier += [child for child, (parent, _) in stats.items() if parent == pid]
    return total
