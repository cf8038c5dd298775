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
players (their waits and their telemetry's milliseconds) all read this clock.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from types import SimpleNamespace


class VirtualClock:
    """A clock that follows the wall while anyone acts and skips ahead when all wait."""

    def __init__(self) -> None:
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
        self._condition.notify_all()


def clock_install(clock: VirtualClock) -> None:
    """Make this process's site and sandbox Prolific read `clock` (the rehearsal's only)."""
    from django.utils import timezone

    from intruder.prolific import fake_server

    timezone.now = clock.now  # every stored or compared time of the site goes through it
    # The sandbox's event times and signed request timestamps; its retry waits stay real.
    fake_server.time = SimpleNamespace(time=clock.seconds, sleep=time.sleep)
    fake_server.datetime = SimpleNamespace(now=lambda tz=None: clock.now())
