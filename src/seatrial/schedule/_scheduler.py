"""The scheduler of ``seatrial serve``: waits for each schedule's due times, claims each in
the store, and runs the job.

Each schedule is followed by a task of its own, so a long job of one never delays another.
A due time is claimed before its job runs (:func:`seatrial.store.claim_schedule`); the server
that loses the claim skips it, so with several servers on one store every due time runs once.
A job that fails is recorded with its error and the scheduler goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable

from seatrial.config import Config, ScheduleConfig
from seatrial.schedule._due import DueCursor
from seatrial.schedule._jobs import JobOutcome, Say, check_schedules, run_job
from seatrial.store import Store, claim_schedule, finish_schedule

log = logging.getLogger("seatrial.schedule")

MAX_NAP_S = 60.0
"""Longest sleep before the clock is read again: a wall clock set forward or back (NTP, a
suspended machine) is noticed within a minute."""

STOPPED_ERROR = "the server stopped before the job finished"
"""What a job cut short by the server's shutdown records."""

JobRunner = Callable[..., Awaitable[JobOutcome]]
"""Runs one job: ``(config, schedule, store, due, *, db, say) -> JobOutcome``."""


def this_server() -> str:
    """How a claim names the server that made it: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def utc_now() -> dt.datetime:
    """The wall clock, aware, in UTC."""
    return dt.datetime.now(dt.UTC)


class Scheduler:
    """Runs the ``schedules:`` of a configuration against a store until stopped."""

    def __init__(
        self,
        config: Config,
        store: Store,
        *,
        db: str | None = None,
        claimed_by: str | None = None,
        clock: Callable[[], dt.datetime] = utc_now,
        nap: Callable[[float], Awaitable[None]] | None = None,
        job: JobRunner = run_job,
        say: Say | None = None,
    ) -> None:
        """Check the schedules (:class:`~seatrial.errors.ConfigError` for one that could
        never run); nothing runs until :meth:`run`.

        ``db`` is the store's URL for jobs that open their own (tiers); ``clock``, ``nap``
        (an async sleep of so many seconds) and ``job`` replace the wall clock, the sleep and
        the job runner in tests.
        """
        check_schedules(config)
        self.config = config
        self.store = store
        self.db = db
        self.claimed_by = claimed_by or this_server()
        self._clock = clock
        self._nap = nap or self._wait_for_stop
        self._job = job
        self._say = say or (lambda line: None)
        self._stopping = asyncio.Event()

    async def run(self) -> None:
        """Follow every schedule until :meth:`stop`; a job in flight then is cancelled and
        recorded as stopped."""
        followers = [asyncio.create_task(self._follow(s)) for s in self.config.schedules]
        try:
            await self._stopping.wait()
        finally:
            for task in followers:
                task.cancel()
            await asyncio.gather(*followers, return_exceptions=True)

    def stop(self) -> None:
        """Ask :meth:`run` to end (call it on the scheduler's event loop)."""
        self._stopping.set()

    async def _follow(self, schedule: ScheduleConfig) -> None:
        cursor = DueCursor(schedule)
        first = True  # due times missed before the server started are skipped silently
        while not self._stopping.is_set():
            now = self._clock()
            due = cursor.take(now)
            quiet, first = first, False
            if due is not None and due.run:
                if due.missed:
                    self._say(
                        f"schedule {schedule.name}: due {schedule.shown(due.at)} was missed; "
                        f"running it late (within grace_s {schedule.grace_s:g})"
                    )
                try:
                    await self._run_due(schedule, due.at)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the store failed: say so and keep following
                    log.error("schedule %s failed", schedule.name, exc_info=exc)
                    self._say(f"schedule {schedule.name}: {exc}")
                continue  # a long job may have passed due times: look again
            if due is not None and not quiet:
                self._say(
                    f"schedule {schedule.name}: due {schedule.shown(due.at)} was missed and "
                    f"is more than grace_s {schedule.grace_s:g} old; not run"
                )
            wake = cursor.wait_for(now)
            while not self._stopping.is_set():
                left = (wake - self._clock()).total_seconds()
                if left <= 0:
                    break
                await self._nap(min(left, MAX_NAP_S))

    async def _run_due(self, schedule: ScheduleConfig, due: dt.datetime) -> None:
        name = schedule.name
        at = due.timestamp()
        if not claim_schedule(self.store, name, at, claimed_by=self.claimed_by, now=time.time()):
            self._say(f"schedule {name}: due {schedule.shown(due)} claimed by another server")
            return
        self._say(f"schedule {name}: due {schedule.shown(due)}, running {schedule.job}")
        try:
            outcome = await self._job(
                self.config, schedule, self.store, due, db=self.db, say=self._say
            )
        except asyncio.CancelledError:
            finish_schedule(
                self.store, name, at, status="error", error=STOPPED_ERROR, now=time.time()
            )
            raise
        except Exception as exc:  # a job runner that raised instead of saying so
            log.error("schedule %s: the job raised", name, exc_info=exc)
            outcome = JobOutcome("error", (), f"{type(exc).__name__}: {exc}")
        finish_schedule(
            self.store,
            name,
            at,
            status=outcome.status,
            run_ids=outcome.run_ids,
            error=outcome.error,
            now=time.time(),
        )
        runs = f" (runs {', '.join(outcome.run_ids)})" if outcome.run_ids else ""
        why = f": {outcome.error}" if outcome.error else ""
        self._say(f"schedule {name}: {outcome.status}{runs}{why}")

    async def _wait_for_stop(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when :meth:`stop` is called meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)
