"""Committing finished attempts in small groups from a background thread.

Each attempt is encoded into table rows on the event loop the moment it finishes and queued;
the writer thread commits whatever has queued since its last commit in one transaction (group
commit). Encoding on the loop leaves the thread only the database's own work, during which
the driver releases the GIL.

At low concurrency attempts finish one at a time, so committing whatever has queued would be
nearly one transaction per attempt, each costing far more than the rows it writes. The writer
therefore holds a group open for up to :data:`GROUP_WAIT_S` after its first attempt (or until
:data:`MAX_BATCH` have queued) before committing it. A kill loses attempts that had not
finished plus, at most, the group being collected or committed: the attempts of the last
:data:`GROUP_WAIT_S` and the commit under way. ``seatrial run --resume`` redoes them.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from typing import TypeVar

from seatrial.errors import StoreError
from seatrial.i18n import gettext as _
from seatrial.record import AttemptRecord
from seatrial.store import EncodedAttempts, Store, encode_attempts

T = TypeVar("T")

MAX_BATCH = 500
"""The most attempts one transaction commits."""

MAX_QUEUED = 2 * MAX_BATCH
"""Attempts waiting to be written past which the runner starts no new attempt.

When the store is slower than the agent (fast agents, hundreds in flight, SQLite), finished
attempts would otherwise pile up in the queue, encoded, until the run ends: about 7 KB each,
0.8 GB for a 100,000-attempt run. Waiting for room keeps memory flat with the run's size and
costs no time: the store, not the agent, is what limits such a run.
"""
ROOM_POLL_S = 0.005

GROUP_WAIT_S = 0.02
"""How long a group stays open for more attempts after its first one, in seconds.

Measured on 1,000 attempts against an agent answering in 50 ms (benchmarks/peers.py): at
concurrency 8, 0.02 s cuts the commits from ~750 to ~150 and the run's CPU by ~0.5 s; longer
waits save little more and widen what a kill can lose.
"""


class AttemptWriter:
    """Writes attempts to the store off the event loop."""

    def __init__(self, store: Store, *, group_wait_s: float = GROUP_WAIT_S) -> None:
        self._store = store
        self._group_wait_s = group_wait_s
        self._queue: queue.SimpleQueue[EncodedAttempts | None] = queue.SimpleQueue()
        self._failure: BaseException | None = None
        self.written = 0
        self.commits = 0
        self._waiting: asyncio.Future[None] | None = None
        self._thread = threading.Thread(target=self._loop, name="seatrial-writer", daemon=True)
        self._thread.start()

    def submit(self, record: AttemptRecord) -> None:
        """Encode a finished attempt and queue it; raises if an earlier write failed."""
        if self._failure is not None:
            raise StoreError(
                _("could not store attempts: {error}").format(error=self._failure)
            ) from self._failure
        self._queue.put(encode_attempts([record]))

    async def room(self) -> None:
        """Return once the writer has room: at once while fewer than :data:`MAX_QUEUED`
        attempts wait to be written (or an earlier write failed); otherwise once it is down to
        :data:`MAX_BATCH`. The lanes held back share one waiter."""
        if self._queue.qsize() < MAX_QUEUED or self._failure is not None:
            return
        if self._waiting is None or self._waiting.done():
            self._waiting = asyncio.ensure_future(self._until_room())
        await asyncio.shield(self._waiting)

    async def _until_room(self) -> None:
        while self._queue.qsize() > MAX_BATCH and self._failure is None:
            await asyncio.sleep(ROOM_POLL_S)

    def close(self) -> None:
        """Write everything queued, then stop; raises if a write failed."""
        self._queue.put(None)
        self._thread.join()
        if self._failure is not None:
            raise StoreError(
                _("could not store attempts: {error}").format(error=self._failure)
            ) from self._failure

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            batch, stopping = take_group(self._queue, MAX_BATCH, self._group_wait_s)
            if batch and self._failure is None:
                try:
                    self._store.save_encoded(batch)
                    self.written += len(batch)
                    self.commits += 1
                except BaseException as exc:  # reported to the runner, which stops the run
                    self._failure = exc


def take_group(
    handed: queue.SimpleQueue[T | None], most: int, wait_s: float = 0.0
) -> tuple[list[T], bool]:
    """Wait for the first item, take what else is waiting, then wait up to ``wait_s`` after
    the first for more, until ``most`` items: one group of a group commit.

    Returns the group and whether ``None`` (the signal to stop) was among what was handed:
    the items taken before it are still served.
    """
    group: list[T] = []
    item = handed.get()
    deadline = time.monotonic() + wait_s
    while item is not None:
        group.append(item)
        if len(group) >= most:
            return group, False
        try:
            item = handed.get_nowait()
        except queue.Empty:
            left = deadline - time.monotonic()
            if left <= 0:
                return group, False
            try:
                item = handed.get(timeout=left)
            except queue.Empty:
                return group, False
    return group, True
