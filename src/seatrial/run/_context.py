"""What a run sets outside its own objects: its ambient gateway, and two process-wide settings.

The run's gateway (:class:`~seatrial.gateway.RunGateway`: the gateway, and its proxy when
one serves the run) is the one context variable of this package. It is ambient, not an
argument, because library code starts it around the runs it serves
(``async with gateway_for_run(...): await run_suite_async(...)``) and the runner cannot
reach that code's variables. :func:`use_gateway` is its only setter
(:func:`seatrial.run.gateway_for_run` and :func:`seatrial.run.gateway_in_process` call it);
the runner reads it once when a run starts and hands it to each attempt. The run's judge is
not ambient: it travels in ``RunOptions.judge`` to every attempt.

Ambient state owned by lower packages, which cannot import this one:

- the attempt's trace recorder: ``seatrial.trace`` (``TraceRecorder.activate``, set by each
  attempt around its agent and by the gateway's proxy around a request);
- the attempt's permission policy: ``seatrial.agent`` (``PermissionPolicy.activate``, set by
  the Python adapter and ``Session.call_tool`` around the agent's code and tools);
- the gateway embeddings factory: ``seatrial.judge`` (``use_embedders``, set by
  ``use_gateway_embeddings``).

Each is reset when the block that set it ends. :func:`run_process_settings` changes the two
process-wide things a run changes and puts both back.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seatrial.gateway import RunGateway

RUN_GC_THRESHOLD = 50_000
"""Gen-0 threshold of Python's garbage collector while a run executes."""

_run_gateway: contextvars.ContextVar[RunGateway | None] = contextvars.ContextVar(
    "seatrial_run_gateway", default=None
)


def active_gateway() -> RunGateway | None:
    """The gateway runs started in this context register their attempts with, if any."""
    return _run_gateway.get()


@contextmanager
def use_gateway(gateway: RunGateway) -> Iterator[RunGateway]:
    """Register the attempts of runs started in this block (and its tasks) with ``gateway``."""
    token = _run_gateway.set(gateway)
    try:
        yield gateway
    finally:
        _run_gateway.reset(token)


class _ProcessSettings:
    """The runs in flight in this process; the first changes the settings, the last restores.

    Counted rather than saved per run: two runs that overlap (two tasks, two threads) would
    otherwise save each other's values, and the one that ends last would restore the run's
    threshold for good.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs = 0
        self._gc_before: tuple[int, int, int] = gc.get_threshold()
        self._cancel: set[asyncio.Task[Any]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sigterm_before: Any = None

    def enter(self) -> None:
        with self._lock:
            if self._runs == 0:
                self._gc_before = gc.get_threshold()
                # A run allocates many short-lived objects per attempt (spans, results,
                # records); the default gen-0 threshold of 700 makes the collector a
                # measurable share of the harness's CPU (benchmarks/runner_overhead.py:
                # 3.5 s -> 2.7 s). Collections still happen, rarer.
                gc.set_threshold(RUN_GC_THRESHOLD, 20, 100)
            self._runs += 1

    def leave(self) -> None:
        with self._lock:
            self._runs -= 1
            if self._runs == 0:
                gc.set_threshold(*self._gc_before)

    def cancel_on_sigterm(self) -> Callable[[], None]:
        """Treat SIGTERM like Ctrl-C for the calling task; the returned function undoes it."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is None:
            return lambda: None
        with self._lock:
            if not self._cancel:
                before = signal.getsignal(signal.SIGTERM)
                try:
                    loop.add_signal_handler(signal.SIGTERM, self._on_sigterm)
                except (NotImplementedError, RuntimeError, ValueError):
                    return lambda: None  # not the main thread, or Windows: no handler
                self._loop, self._sigterm_before = loop, before
            elif loop is not self._loop:
                return lambda: None  # signals reach the main thread's loop only
            self._cancel.add(task)

        def restore() -> None:
            with self._lock:
                self._cancel.discard(task)
                if self._cancel or self._loop is None:
                    return
                loop, self._loop = self._loop, None
                ours = signal.getsignal(signal.SIGTERM)
                loop.remove_signal_handler(signal.SIGTERM)
                before = self._sigterm_before
                # A handler installed with signal.signal() is put back. One installed with
                # another loop.add_signal_handler() shows as the loop's own wake-up function,
                # whose callback the loop has already dropped: SIGTERM is left at its default.
                if before is not None and before is not ours and before != signal.SIG_DFL:
                    signal.signal(signal.SIGTERM, before)

        return restore

    def _on_sigterm(self) -> None:
        for task in list(self._cancel):
            task.cancel()


_PROCESS = _ProcessSettings()


@contextmanager
def run_process_settings() -> Iterator[None]:
    """While a run executes: a higher GC threshold, and SIGTERM cancelling the run's task.

    Both are put back when the last run in flight in this process leaves the block, however it
    leaves. Call it from the run's task (the one SIGTERM should cancel).
    """
    _PROCESS.enter()
    try:
        restore = _PROCESS.cancel_on_sigterm()
        try:
            yield
        finally:
            restore()
    finally:
        _PROCESS.leave()
