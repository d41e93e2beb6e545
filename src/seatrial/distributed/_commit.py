"""Group commit for a worker: the attempts its threads finish are stored together.

Each pool thread must not acknowledge its message before its attempt is stored, so it waits
for the write; but one transaction per attempt makes the database's commit (its flush to
disk) the worker's limit. A writer thread stores whatever has been handed to it since its
last transaction in one, then wakes every thread whose attempt it held, or hands each the
error. Nothing is acknowledged before its own attempt is committed.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field

from seatrial.distributed._grouped import take_group
from seatrial.store import EncodedAttempts, Store

MAX_GROUP = 200
"""Attempts stored in one transaction at most."""


@dataclass
class _Pending:
    encoded: EncodedAttempts
    done: threading.Event = field(default_factory=threading.Event)
    failure: BaseException | None = None


class GroupCommit:
    """Stores attempts handed from many threads, several per transaction."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=self._loop, name="seatrial-group-commit", daemon=True
        )
        self._thread.start()

    def store(self, encoded: EncodedAttempts) -> None:
        """Store ``encoded`` and return once it is committed; raise what the write raised."""
        pending = _Pending(encoded)
        self._queue.put(pending)
        pending.done.wait()
        if pending.failure is not None:
            raise pending.failure

    def close(self) -> None:
        """Store what was handed over, then stop the writer thread."""
        self._queue.put(None)
        self._thread.join(30)

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            group, stopping = take_group(self._queue, MAX_GROUP)
            if not group:
                continue
            failure: BaseException | None = None
            try:
                self._store.save_encoded([pending.encoded for pending in group])
            except BaseException as exc:  # handed to every waiting thread, which retries
                failure = exc
            for pending in group:
                pending.failure = failure
                pending.done.set()
