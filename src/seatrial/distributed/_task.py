"""The worker's side: the ``seatrial.run_attempt`` task and the state it keeps per process.

A worker runs Celery's thread pool; each pool thread takes one message (one attempt) at a
time, and every attempt of the process runs on one asyncio event loop in a background
thread, so a run's agent client, judge and gateway proxy are built once per worker process
and shared by its attempts in flight (:class:`~seatrial.distributed.RunRuntime`). The pool
thread waits for its attempt, hands it to the process's group commit
(:class:`~seatrial.distributed._commit.GroupCommit`), waits until it is committed, and only
then returns, which acknowledges the message (late acknowledgement): a worker that dies
before the write leaves the message to be delivered again, and a delivery whose attempt is
already stored doubles nothing (the store keeps one attempt per run, case and attempt) and
costs no agent call (the worker looks the attempt up first). While an attempt runs, the
worker holds a lease on it (:mod:`seatrial.distributed._lease`), so the coordinator sends it
again within seconds if the worker dies.

A task sent before its run stopped (Ctrl-C on the coordinator, or the run already finished)
is acknowledged without running: the run's ``finished_at`` is later than the task's
``sent_at``. A resumed run sends new tasks, later than that.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from seatrial.config import Config, load_config, resolve_db_url
from seatrial.distributed._app import BROKER_URL_ENV, RUN_ATTEMPT_TASK
from seatrial.distributed._commit import GroupCommit
from seatrial.distributed._lease import LeaseKeeper, redis_for
from seatrial.distributed._lookup import GroupLookup
from seatrial.distributed._runtime import RunRuntime, open_run_runtime
from seatrial.errors import RunNotFound, SeatrialError, StoreError
from seatrial.record import DEFAULT_CONCURRENCY, AttemptRecord
from seatrial.run import run_attempt
from seatrial.store import ReviewItem, Store, encode_attempts

log = logging.getLogger("seatrial.worker")

T = TypeVar("T")

PROJECT_DIR_ENV = "SEATRIAL_PROJECT_DIR"
"""The worker's project folder (its seatrial.yaml); default: the current folder."""
STATUS_TTL_S = 1.0
"""How long a worker trusts what it read of a run's status before reading it again."""
BROKEN_RUN_TTL_S = 30.0
"""How long a run whose agent could not be built is answered with ERROR before a new try."""
STORE_RETRY_MAX_S = 30.0


class WorkerLoop:
    """One asyncio event loop in a background thread; pool threads hand it coroutines."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="seatrial-worker-loop", daemon=True
        )
        self._thread.start()

    def call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and wait for its result (from another thread)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def close(self) -> None:
        """Stop the loop and its thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self.loop.close()


@dataclass
class _Held:
    runtime: RunRuntime
    stack: contextlib.AsyncExitStack
    in_flight: int = 0


@dataclass
class WorkerState:
    """What one worker process keeps: its configuration, its store, its loop, its runs."""

    config: Config
    store: Store
    concurrency: int = DEFAULT_CONCURRENCY
    leases: LeaseKeeper = field(default_factory=lambda: LeaseKeeper(None))
    loop: WorkerLoop = field(default_factory=WorkerLoop)
    writer: GroupCommit | None = None
    lookup: GroupLookup | None = None
    _runs: dict[str, _Held] = field(default_factory=dict)
    _building: dict[str, asyncio.Lock] = field(default_factory=dict)
    _broken: dict[str, tuple[float, str]] = field(default_factory=dict)
    _status: dict[str, tuple[float, str, float | None]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # Called from pool threads.

    def stopped_since(self, run_id: str, sent_at: float) -> bool:
        """True when the run stopped (interrupted or finished) after the task was sent."""
        now = time.monotonic()
        with self._lock:
            cached = self._status.get(run_id)
        if cached is None or now - cached[0] > STATUS_TTL_S:
            info = self.store.get_run(run_id)
            cached = (now, info.status, info.finished_at)
            with self._lock:
                self._status[run_id] = cached
        _, status, finished_at = cached
        stopped = status != "running" and finished_at is not None and finished_at >= sent_at
        if stopped:
            self.loop.call(self._release(run_id, evict=True))
        return stopped

    def run_one(self, run_id: str, case_id: str, attempt: int) -> str:
        """Run one attempt on the loop, then store it (and its review items); an attempt
        already stored is not run again. Returns what was done (``stored``, ``already
        stored``, ``dropped``)."""
        # A delivery of a stored attempt (a resend after a lease or a stall, the broker's own
        # re-delivery) would pay the agent again for a copy the store drops.
        with self._lock:
            if self.lookup is None:
                self.lookup = GroupLookup(self.store)
        if self.lookup.stored(run_id, case_id, attempt):
            return "already stored"
        return self._run_and_store(run_id, case_id, attempt)

    def _run_and_store(self, run_id: str, case_id: str, attempt: int) -> str:
        record, review_items = self.loop.call(self._attempt(run_id, case_id, attempt))
        if record is None:
            return "dropped"
        with self._lock:
            if self.writer is None:
                self.writer = GroupCommit(self.store)
        self.writer.store(encode_attempts([record]))
        if review_items:
            self.store.add_review_items(review_items)
        return "stored"

    def close(self) -> None:
        """Close every run's agent, judge and gateway, the loop and the store."""
        for run_id in list(self._runs):
            self.loop.call(self._release(run_id, evict=True, force=True))
        self.loop.close()
        self.leases.close()
        if self.lookup is not None:
            self.lookup.close()
        if self.writer is not None:
            self.writer.close()
        self.store.close()

    # On the loop.

    async def _attempt(
        self, run_id: str, case_id: str, attempt: int
    ) -> tuple[AttemptRecord | None, list[ReviewItem]]:
        broken = self._broken.get(run_id)
        if broken is not None and time.monotonic() - broken[0] < BROKEN_RUN_TTL_S:
            return _unrunnable(run_id, case_id, attempt, broken[1]), []
        try:
            held = await self._hold(run_id)
        except (RunNotFound, StoreError):
            raise
        except SeatrialError as exc:
            # The worker's configuration cannot run this run's agent: every attempt says so,
            # as ERROR data in the report, rather than the run waiting for a worker that can.
            self._broken[run_id] = (time.monotonic(), str(exc))
            log.error("run %s: %s", run_id, exc)
            return _unrunnable(run_id, case_id, attempt, str(exc)), []
        try:
            runtime = held.runtime
            case = runtime.cases.get(case_id)
            if case is None:
                log.error("run %s has no case %r: message dropped", run_id, case_id)
                return None, []
            judge = runtime.attempt_judge()
            record = await run_attempt(
                runtime.adapter,
                case,
                attempt,
                run_id,
                runtime.timeout_s,
                judge=judge,
                gateway=runtime.gateway,
            )
            return record, judge.take_review_items() if judge is not None else []
        finally:
            await self._release(run_id)

    async def _hold(self, run_id: str) -> _Held:
        held = self._runs.get(run_id)
        if held is None:
            lock = self._building.setdefault(run_id, asyncio.Lock())
            async with lock:
                held = self._runs.get(run_id)
                if held is None:
                    stack = contextlib.AsyncExitStack()
                    runtime = await stack.enter_async_context(
                        open_run_runtime(self.store, run_id, self.config, self.concurrency)
                    )
                    held = self._runs[run_id] = _Held(runtime, stack)
                    self._broken.pop(run_id, None)
        held.in_flight += 1
        return held

    async def _release(self, run_id: str, evict: bool = False, force: bool = False) -> None:
        held = self._runs.get(run_id)
        if held is None:
            return
        if not evict:
            held.in_flight -= 1
            return
        if held.in_flight and not force:
            return
        del self._runs[run_id]
        self._building.pop(run_id, None)
        await held.stack.aclose()


def _unrunnable(run_id: str, case_id: str, attempt: int, why: str) -> AttemptRecord:
    now = time.time()
    return AttemptRecord(
        run_id=run_id,
        case_id=case_id,
        attempt=attempt,
        verdict="ERROR",
        failure_type="agent_error",
        error=why,
        reason=f"agent_error: the worker could not run the agent: {why}",
        started_at=now,
        finished_at=now,
    )


_STATE: WorkerState | None = None
_STATE_LOCK = threading.Lock()


def configure_worker(
    project_dir: Path | None = None, concurrency: int = DEFAULT_CONCURRENCY
) -> WorkerState:
    """Set up this process as a worker: its project configuration and its store.

    Raises:
        SeatrialError: the configuration or the store cannot be opened.
    """
    global _STATE
    with _STATE_LOCK:
        if _STATE is None:
            folder = project_dir or Path(os.environ.get(PROJECT_DIR_ENV) or Path.cwd())
            config = load_config(folder)
            store = Store.open(resolve_db_url(None, config), project_dir=config.project_dir)
            client = redis_for(os.environ.get(BROKER_URL_ENV))
            if client is None:
                log.warning(
                    "the broker is not Redis: no attempt leases; the attempts of a worker "
                    "that dies come back after the visibility timeout"
                )
            leases = LeaseKeeper(client)
            _STATE = WorkerState(config=config, store=store, concurrency=concurrency, leases=leases)
        return _STATE


def close_worker() -> None:
    """Release what :func:`configure_worker` opened (at the worker's shutdown)."""
    global _STATE
    with _STATE_LOCK:
        state, _STATE = _STATE, None
    if state is not None:
        state.close()


def run_attempt_task(task: Any, run_id: str, case_id: str, attempt: int, sent_at: float) -> str:
    """The ``seatrial.run_attempt`` task: run one attempt and store it, unless the run stopped
    after the task was sent. A store that cannot be reached is tried again later."""
    state = configure_worker()
    try:
        if state.stopped_since(run_id, sent_at):
            return "skipped"
        done = state.run_one(run_id, case_id, attempt)
    except RunNotFound:
        log.error(
            "run %s is not in this worker's store (%s): point SEATRIAL_DB_URL at the "
            "coordinator's store; message dropped",
            run_id,
            state.store.url,
        )
        return "unknown run"
    except StoreError as exc:
        countdown = min(STORE_RETRY_MAX_S, 2.0 ** min(task.request.retries, 5))
        log.warning("run %s: %s; trying again in %.0f s", run_id, exc, countdown)
        raise task.retry(exc=exc, countdown=countdown) from exc
    finally:
        state.leases.release(run_id, case_id, attempt)
    return done


def lease_on_receipt(request: Any, **_: object) -> None:
    """Celery's ``task_received`` handler: take the lease on an attempt as soon as its
    message reaches this worker, before a pool thread starts it, so no message a worker
    holds is without one."""
    if request.name != RUN_ATTEMPT_TASK:
        return
    try:
        run_id, case_id, attempt = request.args[:3]
        leases = configure_worker().leases
    except (ValueError, TypeError, SeatrialError) as exc:
        log.warning("no lease for a %s message: %s", RUN_ATTEMPT_TASK, exc)
        return
    leases.acquire(str(run_id), str(case_id), int(attempt))
