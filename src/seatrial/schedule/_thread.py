"""The scheduler on a thread of its own: ``seatrial serve``'s main thread belongs to uvicorn
and its event loop, so the scheduler gets a second loop, started and stopped with the
server."""

from __future__ import annotations

import asyncio
import contextlib
import threading

from seatrial.schedule._scheduler import Scheduler

STOP_WAIT_S = 30.0
"""How long stopping waits for a cancelled job to record its end before giving up on it."""


class SchedulerThread:
    """Runs a :class:`Scheduler` on a daemon thread with its own event loop."""

    def __init__(self, scheduler: Scheduler) -> None:
        """Wrap ``scheduler``; :meth:`start` starts it."""
        self.scheduler = scheduler
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="seatrial-scheduler", daemon=True)

    def start(self) -> None:
        """Start following the schedules."""
        self._thread.start()
        self._ready.wait()

    def stop(self, timeout_s: float = STOP_WAIT_S) -> None:
        """Stop the scheduler, cancelling a job in flight, and wait for the thread to end."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            # RuntimeError: the loop closed in between, and nothing is left to stop.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self.scheduler.stop)
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    @property
    def alive(self) -> bool:
        """Whether the scheduler still runs."""
        return self._thread.is_alive()

    def _main(self) -> None:
        try:
            asyncio.run(self._body())
        finally:
            self._ready.set()  # never leave start() waiting for a thread that failed

    async def _body(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._ready.set()
        await self.scheduler.run()
