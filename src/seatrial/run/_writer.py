"""Committing finished attempts in small groups from a background thread.

Each attempt is encoded into table rows on the event loop the moment it finishes and queued;
the writer thread commits whatever has queued since its last commit in one transaction (group
commit). Encoding on the loop leaves the thread only the database's own work, during which
the driver releases the GIL. A kill loses attempts that had not finished plus, at most, the
group that was being committed; ``seatrial run --resume`` redoes them.
"""

from __future__ import annotations

import queue
import threading

from seatrial.errors import StoreError
from seatrial.record import AttemptRecord
from seatrial.store import EncodedAttempts, Store, encode_attempts

_STOP = object()
MAX_BATCH = 500


class AttemptWriter:
    """Writes attempts to the store off the event loop."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._failure: BaseException | None = None
        self.written = 0
        self._thread = threading.Thread(target=self._loop, name="seatrial-writer", daemon=True)
        self._thread.start()

    def submit(self, record: AttemptRecord) -> None:
        """Encode a finished attempt and queue it; raises if an earlier write failed."""
        if self._failure is not None:
            raise StoreError(f"could not store attempts: {self._failure}") from self._failure
        self._queue.put(encode_attempts([record]))

    def close(self) -> None:
        """Write everything queued, then stop; raises if a write failed."""
        self._queue.put(_STOP)
        self._thread.join()
        if self._failure is not None:
            raise StoreError(f"could not store attempts: {self._failure}") from self._failure

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            item = self._queue.get()
            batch: list[EncodedAttempts] = []
            while True:
                if item is _STOP:
                    stopping = True
                else:
                    assert isinstance(item, EncodedAttempts)
                    batch.append(item)
                if stopping or len(batch) >= MAX_BATCH:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch and self._failure is None:
                try:
                    self._store.save_encoded(batch)
                    self.written += len(batch)
                except BaseException as exc:  # reported to the runner, which stops the run
                    self._failure = exc
