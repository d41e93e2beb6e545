"""The coordinator's side of ``seatrial run --backend celery``: send one task per attempt,
follow the run from the store, and send again what went missing.

The coordinator never hears from a worker directly: what counts is what is stored. Every
:data:`POLL_S` it reads the attempts stored since its last poll (``Store.verdicts_since``:
a watermark on the storing order, so a poll costs what changed, not the whole run) and
reports each new one to the progress display; every :data:`RECOUNT_S` it compares the
database's count with what it has seen and reads the run whole once if an attempt committed
out of order slipped under the watermark.

Two things send attempts again:

- a lease gone stale (:mod:`seatrial.distributed._lease`): the worker running an attempt
  stopped beating for :data:`~seatrial.distributed._lease.LEASE_S` seconds (it died), so
  the attempt goes to another worker now rather than after the broker's visibility timeout;
- a stall: nothing new stored for longer than the visibility timeout plus a margin sends
  every attempt still missing (a message dropped by a broker restart never comes back).

Sending twice is safe: the store keeps one attempt per (run, case, attempt), a worker looks
an attempt up before running it, and runs nothing for a run that stopped after the task was
sent. Every read is retried on a lost connection for up to a minute (the store's own retry).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from seatrial.case import Case
from seatrial.distributed._app import RUN_ATTEMPT_TASK, BrokerSettings, celery_app
from seatrial.distributed._lease import LeaseWatch, redis_for
from seatrial.errors import ConfigError, InputError
from seatrial.i18n import gettext as _
from seatrial.record import AttemptRecord, Verdict
from seatrial.store import Store

POLL_S = 0.5
"""How often the coordinator reads the store for newly stored attempts."""
RESEND_MARGIN_S = 10.0
"""Added to the visibility timeout before missing attempts are sent again."""
RECOUNT_S = 5.0
"""How often a poll also compares the database's count of the run's attempts with what was
seen (an index-only count: the database's work grows with the run, so not every poll)."""
LEASE_LOST = "a worker stopped renewing its lease"
STALLED = "nothing stored for a while"
BROKER_CHECK_TIMEOUT_S = 5.0


@dataclass
class CeleryDispatch:
    """Runs a run's attempts on Celery workers; a :class:`seatrial.run.Dispatch`."""

    store: Store
    """The coordinator's store: the workers must write to the same database."""
    broker: BrokerSettings
    """The broker and queue the tasks go to."""
    on_resend: Callable[[int, str], None] | None = None
    """Told how many attempts were sent again, and why (:data:`LEASE_LOST`, :data:`STALLED`)."""
    resent: int = 0
    """Attempts sent again so far (after lost leases and stalls)."""

    @classmethod
    def open(
        cls, store: Store, timeout_s: float | None, queue: str | None = None
    ) -> CeleryDispatch:
        """Check the broker settings against the run's per-attempt timeout and reach the
        broker, before anything is stored.

        Raises:
            ConfigError: no broker URL, Celery missing, or the broker unreachable.
            InputError: the per-attempt timeout is not shorter than the visibility timeout.
        """
        broker = BrokerSettings.from_env(queue)
        if timeout_s is None or timeout_s >= broker.visibility_timeout_s:
            shown = _("no timeout") if timeout_s is None else f"--timeout {timeout_s:g}"
            visibility = format(broker.visibility_timeout_s, "g")
            raise InputError(
                _(
                    "{timeout} is not shorter than the broker's visibility timeout ({visibility} "
                    "s): an attempt still running would be delivered again; give a shorter "
                    "--timeout or raise SEATRIAL_VISIBILITY_TIMEOUT"
                ).format(timeout=shown, visibility=visibility)
            )
        app = celery_app(broker)
        try:
            with app.connection_for_write() as connection:
                connection.ensure_connection(max_retries=0, timeout=BROKER_CHECK_TIMEOUT_S)
        except Exception as exc:  # kombu raises the transport's own errors
            raise ConfigError(
                _(
                    "cannot reach the broker at {url} ({error}); start it or fix "
                    "SEATRIAL_BROKER_URL"
                ).format(url=broker.shown_url, error=f"{type(exc).__name__}: {exc}")
            ) from exc
        return cls(store=store, broker=broker)

    def _send(self, run_id: str, items: list[tuple[str, int]]) -> None:
        app = celery_app(self.broker)
        sent_at = time.time()
        with app.producer_or_acquire() as producer:
            for case_id, attempt in items:
                app.send_task(
                    RUN_ATTEMPT_TASK,
                    args=(run_id, case_id, attempt, sent_at),
                    queue=self.broker.queue,
                    producer=producer,
                )

    async def __call__(
        self,
        run_id: str,
        plan: list[tuple[Case, int]],
        on_record: Callable[[AttemptRecord], None],
    ) -> None:
        """Send every attempt of ``plan`` and return once each one is stored."""
        wanted = {(case.id, attempt) for case, attempt in plan}
        order = _plan_order(plan)
        follow = _Follow(self.store, run_id)
        seen = set(await asyncio.to_thread(follow.start))
        await asyncio.to_thread(self._send, run_id, sorted(wanted - seen, key=order))
        leases = LeaseWatch(redis_for(self.broker.url), run_id)
        stall_s = self.broker.visibility_timeout_s + RESEND_MARGIN_S
        last_progress = time.monotonic()
        finished = False
        try:
            while not wanted <= seen:
                await asyncio.sleep(POLL_S)
                stored, lost = await asyncio.to_thread(_poll, follow, leases)
                fresh = [key for key in stored if key not in seen and key in wanted]
                for case_id, attempt in fresh:
                    verdict, failure_type = stored[(case_id, attempt)]
                    seen.add((case_id, attempt))
                    on_record(
                        AttemptRecord(
                            run_id=run_id,
                            case_id=case_id,
                            attempt=attempt,
                            verdict=verdict,
                            failure_type=failure_type,
                        )
                    )
                now = time.monotonic()
                orphans = sorted({key for key in lost if key in wanted} - seen, key=order)
                if orphans:
                    await self._send_again(run_id, orphans, LEASE_LOST)
                if fresh:
                    last_progress = now
                elif now - last_progress > stall_s:
                    await self._send_again(run_id, sorted(wanted - seen, key=order), STALLED)
                    last_progress = now
            finished = True
        finally:
            # An interrupted run keeps its leases: a resume or a worker may still need them.
            await asyncio.to_thread(leases.close, finished)

    async def _send_again(self, run_id: str, items: list[tuple[str, int]], why: str) -> None:
        await asyncio.to_thread(self._send, run_id, items)
        self.resent += len(items)
        if self.on_resend is not None:
            self.on_resend(len(items), why)


Verdicts = dict[tuple[str, int], tuple[Verdict, str | None]]


class _Follow:
    """What the coordinator knows of the stored attempts of one run, read delta by delta."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.known: set[tuple[str, int]] = set()
        self.last_seq = 0
        self.counted_at = time.monotonic()

    def start(self) -> Verdicts:
        """Every attempt stored so far."""
        return self._read(0)

    def poll(self) -> Verdicts:
        """The attempts stored since the last read (and any that slipped under it)."""
        found = self._read(self.last_seq)
        now = time.monotonic()
        if now - self.counted_at < RECOUNT_S:
            return found
        self.counted_at = now
        if self.store.stored_count(self.run_id) > len(self.known):
            # A writer committed after one numbered later was read: read the run whole once.
            found = {**self._read(0), **found}
        return found

    def _read(self, after: int) -> Verdicts:
        got = self.store.verdicts_since(self.run_id, after)
        self.last_seq = max(self.last_seq, got.last_seq)
        self.known.update(got.verdicts)
        return got.verdicts


def _poll(follow: _Follow, leases: LeaseWatch) -> tuple[Verdicts, list[tuple[str, int]]]:
    """One poll, in a thread: what was stored, then whose lease expired (read after, so an
    attempt stored just before its lease was dropped is already known as stored)."""
    stored = follow.poll()
    return stored, leases.expired()


def _plan_order(plan: list[tuple[Case, int]]) -> Callable[[tuple[str, int]], int]:
    order = {(case.id, attempt): index for index, (case, attempt) in enumerate(plan)}
    return lambda key: order.get(key, len(order))
