"""Clocks: where every "now" in lakeclone comes from.

Commit timestamps (and so time travel), retention windows and UNDROP windows
all read the Lake's clock, so tests and notebooks can move time forward
instead of sleeping.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

Clock = Callable[[], dt.datetime]
"""A zero-argument callable returning a timezone-aware datetime."""


def system_clock() -> dt.datetime:
    """The machine's time, in UTC."""
    return dt.datetime.now(dt.timezone.utc)


class ManualClock:
    """A clock that stands still until it is moved.

    Example:
        >>> import datetime as dt
        >>> clock = ManualClock(dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc))
        >>> clock.advance(days=8)
        >>> clock().isoformat()
        '2024-01-09T00:00:00+00:00'

    Each reading is at least a millisecond after the previous one, because two
    commits of one table must not share a timestamp (time travel by timestamp
    would not know which one was meant).
    """

    def __init__(self, start: dt.datetime | None = None) -> None:
        start = start or system_clock()
        if start.tzinfo is None:
            raise ValueError("ManualClock needs a timezone-aware start time")
        self._now = start

    def __call__(self) -> dt.datetime:
        now = self._now
        self._now = now + dt.timedelta(milliseconds=1)
        return now

    def advance(self, *, days: float = 0, hours: float = 0, minutes: float = 0, seconds: float = 0) -> None:
        """Move the clock forward."""
        delta = dt.timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
        if delta < dt.timedelta(0):
            raise ValueError("a clock only moves forward")
        self._now += delta

    def peek(self) -> dt.datetime:
        """The time the next reading will return, without consuming it."""
        return self._now
