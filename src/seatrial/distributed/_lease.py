"""Leases on attempts in flight: how a coordinator learns within seconds that the worker
running an attempt died, and sends the attempt again.

Celery brings a dead worker's unacknowledged messages back only after the broker's visibility
timeout (an hour by default, and kombu's restore sweep runs only every couple of minutes), and
it has no per-task heartbeat: that part is here, kept in the broker's Redis.

- A worker takes a lease on an attempt when the attempt's message reaches it (Celery's
  ``task_received`` signal, before a pool thread starts it): a field ``CASE_ID<TAB>ATTEMPT``
  of the run's hash ``seatrial:leases:RUN_ID``. One thread per worker process writes them
  (what changed as soon as it wakes, in one pipeline) and rewrites the value of every lease
  held each :data:`HEARTBEAT_S`; the lease is deleted once the task ends (its attempt
  stored, found stored, dropped, or handed back to retry).
- The coordinator reads the hash on each poll (its size is the attempts in flight, not the
  run's) and notes, by its own clock, when each value last changed: no clocks of two
  machines are compared. A value unchanged for :data:`LEASE_S` is a worker that stopped
  beating (SIGKILL, OOM, a lost machine): the attempt is sent again, once per stale value.

A lease never decides what is stored; the store's (run, case, attempt) identity does. A
lease that goes stale while its worker lives (a heartbeat starved for 5 s) costs one more
delivery, which the worker that takes it finds stored or runs once. Without a Redis broker
there are no leases, and the visibility timeout alone brings lost attempts back.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis import Redis

log = logging.getLogger("seatrial.worker")

HEARTBEAT_S = 1.0
"""How often a worker rewrites the leases it holds."""
LEASE_S = 5.0
"""How long a lease may go unchanged before its attempt is sent again. With the coordinator's
0.5 s poll, the attempts of a dead worker are sent again 5 to 6 s after its last beat."""
KEY_TTL_S = 24 * 3600
"""A run's lease hash expires this long after its last write (a coordinator that died
leaves nothing behind for good)."""
KEY_PREFIX = "seatrial:leases:"
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def lease_key(run_id: str) -> str:
    """The Redis hash holding a run's leases."""
    return KEY_PREFIX + run_id


def _field(case_id: str, attempt: int) -> str:
    return f"{case_id}\t{attempt}"


def _parse(field: bytes | str) -> tuple[str, int] | None:
    text = field.decode() if isinstance(field, bytes) else field
    case_id, _, attempt = text.rpartition("\t")
    return (case_id, int(attempt)) if case_id and attempt.isdigit() else None


def redis_for(broker_url: str | None) -> Redis | None:
    """A client of the broker's Redis, or None when the broker is not Redis."""
    if not broker_url or not broker_url.startswith(_REDIS_SCHEMES):
        return None
    from redis import Redis

    return Redis.from_url(broker_url, socket_timeout=5, socket_connect_timeout=5)


class LeaseKeeper:
    """A worker process's leases, written by one thread: leases taken and given up since its
    last write go in one pipeline as soon as it wakes, and every :data:`HEARTBEAT_S` it
    rewrites every lease held. Pool threads never wait on Redis."""

    def __init__(self, client: Redis | None) -> None:
        """Keep leases in ``client`` (None: keep none)."""
        self._client = client
        self._holder = f"{socket.gethostname()}/{os.getpid()}"
        self._held: dict[tuple[str, str], int] = {}
        self._taken: set[tuple[str, str]] = set()
        self._dropped: set[tuple[str, str]] = set()
        self._wake = threading.Condition()
        self._stopping = False
        self._failing = False
        self._thread: threading.Thread | None = None

    def acquire(self, run_id: str, case_id: str, attempt: int) -> None:
        """Take the lease on one attempt (when its message reaches this worker)."""
        if self._client is None:
            return
        slot = (run_id, _field(case_id, attempt))
        with self._wake:
            self._held[slot] = self._held.get(slot, 0) + 1
            self._taken.add(slot)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._write_loop, name="seatrial-leases", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def release(self, run_id: str, case_id: str, attempt: int) -> None:
        """Give the lease up (the attempt is stored, dropped or handed back to the broker);
        a lease this worker does not hold is left alone."""
        slot = (run_id, _field(case_id, attempt))
        with self._wake:
            left = self._held.get(slot, 0) - 1
            if left > 0:
                self._held[slot] = left
            elif self._held.pop(slot, None) is not None:
                self._dropped.add(slot)
                self._wake.notify()

    def close(self) -> None:
        """Stop writing (the leases still held go stale, as a dead worker's would)."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(HEARTBEAT_S * 2)
        if self._client is not None:
            self._client.close()

    def _write_loop(self) -> None:
        beat = 0
        next_beat = time.monotonic() + HEARTBEAT_S
        while True:
            with self._wake:
                while not (self._taken or self._dropped or self._stopping):
                    wait_s = next_beat - time.monotonic()
                    if wait_s <= 0:
                        break
                    self._wake.wait(wait_s)
                if self._stopping:
                    return
                beating = time.monotonic() >= next_beat
                taken = list(self._held) if beating else list(self._taken & self._held.keys())
                dropped = [slot for slot in self._dropped if slot not in self._held]
                self._taken.clear()
                self._dropped.clear()
            if beating:
                beat += 1
                next_beat = time.monotonic() + HEARTBEAT_S
            self._write(taken, dropped, beat)

    def _write(
        self, taken: list[tuple[str, str]], dropped: list[tuple[str, str]], beat: int
    ) -> None:
        from redis import RedisError

        if self._client is None or not (taken or dropped):
            return
        value = f"{self._holder}/{beat}/{time.monotonic_ns()}"
        pipe = self._client.pipeline(transaction=False)
        for run_id, field in dropped:
            pipe.hdel(lease_key(run_id), field)
        for run_id, field in taken:
            pipe.hset(lease_key(run_id), field, value)
        for run_id in {run_id for run_id, _ in taken}:
            pipe.expire(lease_key(run_id), KEY_TTL_S)
        try:
            pipe.execute()
        except RedisError as exc:
            # Leases only speed up re-delivery; the visibility timeout still brings back the
            # attempts of a worker that dies while Redis is away.
            if not self._failing:
                log.warning("cannot write attempt leases to Redis (%s); retrying", exc)
            self._failing = True
        else:
            self._failing = False


class LeaseWatch:
    """The coordinator's view of a run's leases: which attempts' workers stopped beating."""

    def __init__(self, client: Redis | None, run_id: str, lease_s: float = LEASE_S) -> None:
        """Watch the leases of ``run_id`` in ``client`` (None: report none ever)."""
        self._client = client
        self._key = lease_key(run_id)
        self._lease_s = lease_s
        self._changed: dict[bytes, tuple[bytes, float]] = {}
        self._resent: dict[bytes, bytes] = {}
        self._failing = False

    def expired(self) -> list[tuple[str, int]]:
        """The attempts whose lease went unchanged for :data:`LEASE_S`, each stale value
        reported once (its attempt is to be sent again)."""
        if self._client is None:
            return []
        from redis import RedisError

        try:
            leases: dict[bytes, bytes] = self._client.hgetall(self._key)  # type: ignore[assignment]
        except RedisError as exc:
            if not self._failing:
                log.warning("cannot read attempt leases from Redis (%s); retrying", exc)
            self._failing = True
            return []
        self._failing = False
        now = time.monotonic()
        stale: list[tuple[str, int]] = []
        for field in list(self._changed):
            if field not in leases:
                del self._changed[field]
                self._resent.pop(field, None)
        for field, value in leases.items():
            known = self._changed.get(field)
            if known is None or known[0] != value:
                self._changed[field] = (value, now)
            elif now - known[1] >= self._lease_s and self._resent.get(field) != value:
                self._resent[field] = value
                key = _parse(field)
                if key is not None:
                    stale.append(key)
        return stale

    def close(self, forget: bool = True) -> None:
        """Stop watching; ``forget`` deletes the run's leases (the run is over)."""
        if self._client is None:
            return
        from redis import RedisError

        with contextlib.suppress(RedisError):
            if forget:
                self._client.delete(self._key)
        self._client.close()
