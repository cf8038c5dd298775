"""The rehearsal's clock: a study's hours played in minutes, the same for every party.

A person reads a text for half a minute; 500 of them arrive over an hour. Played at that
pace a rehearsal would take as long as the study. The rehearsal's process therefore runs on
a clock `speed` times faster than the wall: the site (Django's `timezone.now`, which every
time the platform stores or compares goes through), the sandbox Prolific (its signed
webhook timestamps) and the players (their waits and their telemetry's milliseconds) all
read it, so what each party sees of the others' times is as it would be at a person's
pace. Request latencies are measured on the wall clock, apart.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace


class VirtualClock:
    """A clock that starts at the wall's now and runs `speed` times faster."""

    def __init__(self, speed: float = 1.0) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be positive, got {speed}")
        self.speed = speed
        self._wall0 = time.time()
        self._mono0 = time.monotonic()

    def seconds(self) -> float:
        """Return the clock's time as a Unix timestamp."""
        return self._wall0 + (time.monotonic() - self._mono0) * self.speed

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.seconds(), tz=UTC)

    def now_ms(self) -> int:
        return int(self.seconds() * 1000)

    def sleep(self, seconds: float) -> None:
        """Let `seconds` of the clock's time pass."""
        if seconds > 0:
            time.sleep(seconds / self.speed)

    def wall(self, seconds: float) -> timedelta:
        """Return how long `seconds` of the clock's time take on the wall."""
        return timedelta(seconds=seconds / self.speed)


def clock_install(clock: VirtualClock) -> None:
    """Make this process's site and sandbox Prolific read `clock` (the rehearsal's only)."""
    from django.utils import timezone

    from intruder.prolific import fake_server

    timezone.now = clock.now  # every stored or compared time of the site goes through it
    # The sandbox's event times and signed request timestamps; its retry waits stay real.
    fake_server.time = SimpleNamespace(time=clock.seconds, sleep=time.sleep)
    fake_server.datetime = SimpleNamespace(now=lambda tz=None: clock.now())
