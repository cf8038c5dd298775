"""The check every benchmark makes before it reports: did the run measure anything?

A benchmark whose run did no work (no participant, no judgment, no text, no request) must not
print a clean result: `prolific_replay.py` once reported "0 duplicates, 0 orphaned slots" for
400 participants who were all refused at a closed door. Each script names its counts of work
done and calls `require_work` before it writes its JSON.
"""

from __future__ import annotations

import sys

# The exit status of a run that measured nothing (argparse uses 2, a crash 1).
NO_WORK_EXIT = 3


def require_work(benchmark: str, **counts: float | int | None) -> None:
    """Exit with NO_WORK_EXIT, naming each count that is zero or missing; else return."""
    empty = [name for name, count in counts.items() if not count]
    if empty:
        print(
            f"{benchmark}: the run measured nothing ({', '.join(f'{n} = 0' for n in empty)}); "
            "no result is written",
            file=sys.stderr,
        )
        raise SystemExit(NO_WORK_EXIT)
