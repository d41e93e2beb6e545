"""Sharing a run's attempts between worker processes, one event loop each (``--workers``).

One Python process runs one core: past a few hundred attempts in flight the harness's own
work (recording, evaluating, storing) becomes the limit, not the agent. Workers are forked
from the process that created the run, so each inherits the loaded agent and the cases; each
opens its own connection to the store and commits its own attempts, and reports every finished
attempt back for the progress display. Ctrl-C reaches the whole process group: every worker
stores what finished and stops. POSIX only (``fork``); elsewhere the runner stays in-process.

A run with a gateway but no proxy (a ``model:`` agent, simulated users) forks too: each
worker opens its own gateway after the fork (:meth:`seatrial.gateway.Gateway.for_process`:
its own providers, cache, cassette writer and store connection) and its attempts call it in
process. Budgets hold across the workers through the store's ledger; rate limits (``rpm``,
``tpm``) only through ``gateway.redis_url``, else each worker holds the limit on its own.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import queue
import signal
import threading
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from typing import TYPE_CHECKING, Any

from seatrial.agent import AgentAdapter
from seatrial.errors import SeatrialError
from seatrial.record import AttemptRecord
from seatrial.run._drain import drain
from seatrial.run._plan import CasePlan
from seatrial.run._writer import AttemptWriter
from seatrial.store import Store

if TYPE_CHECKING:
    from seatrial.gateway import RunGateway
    from seatrial.run._runner import RunOptions

_DONE = "done"
_FAILED = "failed"
_INTERRUPTED = "interrupted"
_JOIN_TIMEOUT_S = 60.0


def can_fork() -> bool:
    """Worker processes need ``fork`` (Linux, macOS)."""
    return "fork" in multiprocessing.get_all_start_methods()


def _child(
    run_id: str,
    share: list[tuple[CasePlan, int]],
    adapter: AgentAdapter,
    db_url: str,
    timeout_s: float | None,
    concurrency: int,
    messages: Queue[Any],
    gateway: RunGateway | None,
) -> None:
    # The parent's event loop handlers came along with the fork: a worker reacts to signals
    # itself (Ctrl-C stores what finished and stops).
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    store: Store | None = None
    writer: AttemptWriter | None = None
    try:
        store = Store.open(db_url)
        writer = AttemptWriter(store)
        submit = writer.submit

        def on_record(record: AttemptRecord) -> None:
            submit(record)
            messages.put((record.case_id, record.attempt, record.verdict, record.failure_type))

        asyncio.run(
            _drain_share(
                share, adapter, run_id, timeout_s, concurrency, on_record, writer, store, gateway
            )
        )
    except KeyboardInterrupt:
        # Ctrl-C: the finally block stores what finished, and the parent learns its share
        # was cut short even when its own SIGINT comes after every worker said it is done.
        messages.put((_INTERRUPTED,))
    except BaseException as exc:
        messages.put((_FAILED, f"{type(exc).__name__}: {exc}"))
    finally:
        try:
            if writer is not None:
                writer.close()
        except BaseException as exc:
            messages.put((_FAILED, f"{type(exc).__name__}: {exc}"))
        if store is not None:
            store.close()
        messages.put((_DONE,))


async def _drain_share(
    share: list[tuple[CasePlan, int]],
    adapter: AgentAdapter,
    run_id: str,
    timeout_s: float | None,
    concurrency: int,
    on_record: Callable[[AttemptRecord], None],
    writer: AttemptWriter,
    store: Store,
    gateway: RunGateway | None,
) -> None:
    """Run this worker's share, with a gateway of its own when the run has one: the parent's
    providers, cache and store connection belong to the parent's process and loop."""
    own: RunGateway | None = None
    if gateway is not None:
        from seatrial.gateway import RunGateway

        own = RunGateway(gateway.gateway.for_process(store))
    try:
        await drain(
            share,
            adapter,
            run_id,
            timeout_s,
            concurrency,
            on_record,
            gateway=own,
            room=writer.room,
        )
    finally:
        if own is not None:
            await own.gateway.aclose()


def _read_messages(
    messages: Queue[Any],
    processes: list[BaseProcess],
    on_record: Callable[[AttemptRecord], None],
    failures: list[str],
    interrupted: list[bool],
) -> None:
    """Feed the progress display until every worker said it is done (or died)."""
    running = len(processes)
    while running:
        try:
            message = messages.get(timeout=0.2)
        except queue.Empty:
            if not any(p.is_alive() for p in processes):
                return
            continue
        if message[0] == _DONE:
            running -= 1
        elif message[0] == _FAILED:
            failures.append(message[1])
        elif message[0] == _INTERRUPTED:
            interrupted.append(True)
        else:
            case_id, attempt, verdict, failure_type = message
            on_record(
                AttemptRecord(
                    run_id="",
                    case_id=case_id,
                    attempt=attempt,
                    verdict=verdict,
                    failure_type=failure_type,
                )
            )


async def run_in_workers(
    run_id: str,
    plan: list[tuple[CasePlan, int]],
    adapter: AgentAdapter,
    store: Store,
    options: RunOptions,
    on_record: Callable[[AttemptRecord], None],
    gateway: RunGateway | None = None,
) -> None:
    """Run ``plan`` in ``options.workers`` forked processes; each stores its own attempts and,
    when the run has a ``gateway`` (without a proxy), opens its own in its process."""
    count = min(options.workers, len(plan))
    concurrency = max(1, -(-options.concurrency // count))
    context = multiprocessing.get_context("fork")
    messages: Queue[Any] = context.Queue()
    db_url = store.engine.url.render_as_string(hide_password=False)
    processes: list[BaseProcess] = [
        context.Process(
            target=_child,
            args=(
                run_id,
                plan[i::count],
                adapter,
                db_url,
                options.timeout_s,
                concurrency,
                messages,
                gateway,
            ),
            name=f"seatrial-worker-{i + 1}",
            daemon=True,
        )
        for i in range(count)
    ]
    for process in processes:
        process.start()
    failures: list[str] = []
    interrupted: list[bool] = []
    reader = threading.Thread(
        target=_read_messages,
        args=(messages, processes, on_record, failures, interrupted),
        daemon=True,
    )
    reader.start()
    try:
        while reader.is_alive():
            await asyncio.sleep(0.05)
    finally:
        for process in processes:
            if process.is_alive() and process.pid is not None and reader.is_alive():
                os.kill(process.pid, signal.SIGINT)
        for process in processes:
            process.join(_JOIN_TIMEOUT_S)
        reader.join(_JOIN_TIMEOUT_S)
        messages.close()
    crashed = [p.name for p in processes if p.exitcode not in (0, None)]
    if failures or crashed:
        detail = "; ".join(failures) or f"{', '.join(crashed)} exited abnormally"
        raise SeatrialError(f"a worker process failed: {detail}")
    if interrupted:
        # A worker stopped on Ctrl-C: the run is interrupted, never finished with part of
        # its attempts (the parent's own SIGINT may land after this point, or not at all).
        raise KeyboardInterrupt
