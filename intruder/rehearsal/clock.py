"""The rehearsal's clock: a study's hours played in minutes, with every request at its real speed.

A person reads a text for half a minute; 500 of them arrive over an hour. Played on the wall
clock a rehearsal would take as long as the study. A clock that simply ran faster would
also stretch every request by its factor (a 50 ms request at 200x reads as a 10 s pause, and
the site's pause rules flag honest people: measured). So the rehearsal's clock runs at the
wall's pace while anyone acts (a request in flight, a webhook on its way) and, when every
actor waits, jumps to the earliest wake-up, as a discrete-event simulation does. Waiting
costs no wall time; acting costs exactly its own.

The site (Django's `timezone.now`, which every time the platform stores or compares goes
through), the sandbox Prolific (its event times and signed webhook timestamps) and the
players (their waits and their telemetry's milliseconds) all read this clock. A site served
by other processes (gunicorn's workers and the job workers of a served rehearsal) reads the
clock's offset from a file the rehearsal maps into memory (`SharedOffset`): it changes only
while no request is in flight, so a request never sees it move.
"""

from __future__ import annotations

import heapq
import itertools
import mmap
import os
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

# Where a served site's processes find the rehearsal's clock (`clock_from_environment`).
CLOCK_ENV = "INTRUDER_REHEARSAL_CLOCK"
_OFFSET = struct.Struct("d")


class SharedOffset:
    """The clock's offset in seconds, in a file of one double that other processes map."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        if create:
            path.write_bytes(_OFFSET.pack(0.0))
        with path.open("r+b") as file:
            self._map = mmap.mmap(file.fileno(), _OFFSET.size)

    def write(self, offset: float) -> None:
        _OFFSET.pack_into(self._map, 0, offset)

    def read(self) -> float:
        return _OFFSET.unpack_from(self._map, 0)[0]


class VirtualClock:
    """A clock that follows the wall while anyone acts and skips ahead when all wait."""

    def __init__(self, publish: Callable[[float], None] | None = None) -> None:
        self._publish = publish  # told every new offset (a served site's processes read it)
        self._offset = 0.0
        self._busy = 0  # actors not waiting
        self._waits: list[tuple[float, int]] = []  # (wake-up, ticket) of those waiting
        self._tickets = itertools.count()
        self._condition = threading.Condition()
        self.skipped_seconds = 0.0

    def seconds(self) -> float:
        """Return the clock's time as a Unix timestamp."""
        return time.time() + self._offset

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.seconds(), tz=UTC)

    def now_ms(self) -> int:
        return int(self.seconds() * 1000)

    @contextmanager
    def acting(self) -> Iterator[None]:
        """Count the caller as acting (the clock cannot skip) until the block ends."""
        with self._condition:
            self._busy += 1
        try:
            yield
        finally:
            with self._condition:
                self._busy -= 1
                self._skip()

    def arrivals(self, count: int) -> None:
        """Count `count` actors as acting before their threads start (queued work)."""
        with self._condition:
            self._busy += count

    def arrived(self) -> None:
        """One of the actors counted by `arrivals` is done."""
        with self._condition:
            self._busy -= 1
            self._skip()

    def sleep(self, seconds: float) -> None:
        """Wait `seconds` of the clock's time (an acting caller; it waits, then acts again)."""
        if seconds <= 0:
            return
        with self._condition:
            wake = self.seconds() + seconds
            entry = (wake, next(self._tickets))
            heapq.heappush(self._waits, entry)
            self._busy -= 1
            self._skip()
            while self.seconds() < wake:
                self._condition.wait(timeout=min(0.05, max(0.001, wake - self.seconds())))
            self._waits.remove(entry)
            heapq.heapify(self._waits)
            self._busy += 1

    def _skip(self) -> None:
        """With no one acting, move the clock to the earliest wake-up and wake the sleepers."""
        if self._busy > 0 or not self._waits:
            return
        gap = self._waits[0][0] - self.seconds()
        if gap > 0:
            self._offset += gap
            self.skipped_seconds += gap
            if self._publish is not None:
                self._publish(self._offset)
        self._condition.notify_all()


def clock_install(clock: VirtualClock) -> None:
    """Make this process's site and sandbox Prolific read `clock` (the rehearsal's only)."""
    from django.utils import timezone

    from intruder.prolific import fake_server

    timezone.now = clock.now  # every stored or compared time of the site goes through it
    # The sandbox's event times and signed request timestamps; its retry waits stay real.
    fake_server.time = SimpleNamespace(time=clock.seconds, sleep=time.sleep)
    fake_server.datetime = SimpleNamespace(now=lambda tz=None: clock.now())


def clock_install_reader(path: Path) -> None:
    """Make this process's site read the rehearsal's clock from `path` (a served site)."""
    from django.utils import timezone

    shared = SharedOffset(path)
    timezone.now = lambda: datetime.fromtimestamp(time.time() + shared.read(), tz=UTC)


def clock_from_environment() -> bool:
    """Install the rehearsal's clock where CLOCK_ENV names one; return whether it did."""
    path = os.environ.get(CLOCK_ENV, "")
    if path:
        clock_install_reader(Path(path))
    return bool(path)
