"""Which due time of a schedule to run now: on time, missed within its grace, or none.

A due time the scheduler slept until runs however late the scheduler woke: that lateness is
the server's own. A due time that passed while no server was up, or while the schedule's
previous job still ran, is *missed*: only the latest missed one runs, and only when it is at
most ``grace_s`` old, so a server back after a week does not run a week of jobs in a burst.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from seatrial.config import ScheduleConfig


class Due(NamedTuple):
    """A due time that has come."""

    at: datetime
    """The due time, in the schedule's time zone."""
    missed: bool
    """It passed while no server was waiting for it (down, or the previous job still ran)."""
    run: bool
    """Whether to run it: on time, or missed and at most ``grace_s`` old."""


@dataclass
class DueCursor:
    """One schedule's place in time: the due times dealt with, and the one waited for."""

    schedule: ScheduleConfig
    handled: datetime | None = None
    """The latest due time already run or skipped; None before the first look."""
    expected: datetime | None = None
    """The due time the scheduler last slept until."""

    def take(self, now: datetime) -> Due | None:
        """The latest due time at or before ``now`` not dealt with yet, or None; every due
        time up to ``now`` counts as dealt with afterwards (the earlier missed ones are
        never run)."""
        latest = self.schedule.last_due(now)
        if self.handled is not None and latest <= self.handled:
            return None
        self.handled = latest
        if self.expected is not None and latest == self.expected:
            return Due(latest, missed=False, run=True)
        return Due(latest, missed=True, run=(now - latest).total_seconds() <= self.schedule.grace_s)

    def wait_for(self, now: datetime) -> datetime:
        """The next due time after ``now``, which the scheduler sleeps until."""
        self.expected = self.schedule.next_after(now)
        return self.expected
