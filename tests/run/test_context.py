"""What a run sets outside its own objects is set while it runs and put back when it ends.

Context variables (the recorder, the permission policy, the gateway server, the embeddings
factory), the garbage collector's thresholds and the SIGTERM handler are compared inside the
task that awaited the run: a value left set by the run would still be visible there.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from seatrial.agent import AgentAdapter, AgentOutput, AttemptContext, resolve_agent
from seatrial.case import load_suite
from seatrial.gateway import GatewayConfig
from seatrial.record import AttemptRecord
from seatrial.run import RunOptions, active_gateway, gateway_for_run, run_suite_async
from seatrial.run._context import RUN_GC_THRESHOLD
from seatrial.store import Store

AGENTS = Path(__file__).parent / "context_agents.py"

SUITE = """
suite: ambient
cases:
  - {id: one, input: hello, repeats: 2}
"""


def _agent(function: str) -> AgentAdapter:
    return resolve_agent(f"python:{AGENTS}:{function}")


def _process_state() -> dict[str, Any]:
    """Every Seatrial context variable set in this context, the GC thresholds, SIGTERM."""
    seatrial_vars = {
        var.name: value
        for var, value in contextvars.copy_context().items()
        if var.name.startswith("seatrial")
    }
    return {
        "context": seatrial_vars,
        "gc": gc.get_threshold(),
        "sigterm": signal.getsignal(signal.SIGTERM),
    }


def _around_run(body: Callable[[], Awaitable[object]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The process state before and after awaiting ``body``, both read in the awaiting task."""

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        before = _process_state()
        try:
            await body()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            assert task is not None
            task.uncancel()
        return before, _process_state()

    return asyncio.run(go())


class _FailingProgress:
    """A progress display that breaks on the first finished attempt."""

    def start(self, total: int, done: int) -> None:
        pass

    def advance(self, record: AttemptRecord) -> None:
        raise RuntimeError("the display broke")

    def stop(self) -> None:
        pass


def _seen(store: Store, run_id: str) -> list[dict[str, Any]]:
    return [a.final_state or {} for a in store.attempts(run_id)]


@pytest.mark.parametrize("function", ["observe", "observe_async"])
def test_a_run_sets_its_ambient_state_while_it_runs_and_puts_all_of_it_back(
    write_suite: Callable[[str], Path], store: Store, function: str
) -> None:
    suite = load_suite(write_suite(SUITE))
    run_ids: list[str] = []

    async def run() -> None:
        adapter = _agent(function)
        async with gateway_for_run(GatewayConfig(models={}), store=store) as server:
            active = active_gateway()  # the run's gateway, served by this proxy
            assert active is not None and active.server is server
            outcome = await run_suite_async(suite, adapter, store, RunOptions(concurrency=2))
            run_ids.append(outcome.run_id)
        await adapter.aclose()

    before, after = _around_run(run)
    assert after == before
    assert before["gc"][0] != RUN_GC_THRESHOLD
    seen = _seen(store, run_ids[0])
    assert len(seen) == 2
    for state in seen:
        assert state == {
            "recorder_is_the_attempts": True,
            "policy_is_the_attempts": True,
            "has_gateway_url": True,
            "gc_gen0": RUN_GC_THRESHOLD,
            "sigterm_handled": True,
        }


def test_a_run_without_a_gateway_gives_its_agent_no_gateway_url(
    write_suite: Callable[[str], Path], store: Store
) -> None:
    suite = load_suite(write_suite(SUITE))

    async def run() -> str:
        adapter = _agent("observe")
        try:
            return (await run_suite_async(suite, adapter, store)).run_id
        finally:
            await adapter.aclose()

    run_id = asyncio.run(run())
    assert {s["has_gateway_url"] for s in _seen(store, run_id)} == {False}


def test_a_run_that_raises_still_puts_everything_back_and_is_stored_interrupted(
    write_suite: Callable[[str], Path], store: Store
) -> None:
    suite = load_suite(write_suite(SUITE))

    async def run() -> None:
        adapter = _agent("observe")
        try:
            with pytest.raises(RuntimeError, match="the display broke"):
                await run_suite_async(suite, adapter, store, progress=_FailingProgress())
        finally:
            await adapter.aclose()

    before, after = _around_run(run)
    assert after == before
    [run_info] = store.list_runs()
    assert run_info.status == "interrupted"


def test_sigterm_stops_a_run_like_ctrl_c_and_the_default_handler_comes_back(
    write_suite: Callable[[str], Path], store: Store
) -> None:
    suite = load_suite(write_suite("suite: t\ncases: [{id: stop, input: now}]\n"))
    cancelled: list[bool] = []

    async def run() -> None:
        adapter = _agent("sigterm_self")
        try:
            await run_suite_async(suite, adapter, store)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        finally:
            await adapter.aclose()

    before, after = _around_run(run)
    assert cancelled == [True]
    assert after == before
    assert after["sigterm"] == signal.SIG_DFL
    [run_info] = store.list_runs()
    assert run_info.status == "interrupted"


def test_a_sigterm_handler_installed_with_signal_signal_is_put_back_after_a_run(
    write_suite: Callable[[str], Path], store: Store
) -> None:
    suite = load_suite(write_suite(SUITE))

    def mine(signum: int, frame: object) -> None:
        pass

    async def run() -> None:
        adapter = _agent("observe")
        try:
            await run_suite_async(suite, adapter, store)
        finally:
            await adapter.aclose()

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        before, after = _around_run(run)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert before["sigterm"] is mine
    assert after == before


class _Gated:
    """An in-process agent that sets ``started`` and then waits for ``until`` (if given)."""

    name = "gated"

    def __init__(self, started: asyncio.Event | None, until: asyncio.Event | None) -> None:
        self.spec = "test:gated"
        self.started, self.until = started, until

    async def check(self) -> None:
        """Nothing to check: the agent lives in this process."""

    async def run(self, ctx: AttemptContext) -> AgentOutput:
        if self.started is not None:
            self.started.set()
        if self.until is not None:
            await self.until.wait()
        return AgentOutput(responses=["ok"], final_state={"gc_gen0": gc.get_threshold()[0]})

    async def aclose(self) -> None:
        """Nothing to close."""


def test_two_overlapping_runs_leave_the_gc_thresholds_as_they_found_them(
    write_suite: Callable[[str], Path], store: Store
) -> None:
    suite = load_suite(write_suite("suite: overlap\ncases: [{id: c, input: hi}]\n"))
    second_run: list[str] = []

    async def runs() -> None:
        second_started, first_done = asyncio.Event(), asyncio.Event()

        async def first() -> None:
            # Waits until the second run has begun, so the second one ends last.
            await run_suite_async(suite, _Gated(None, second_started), store)
            first_done.set()

        async def second() -> None:
            outcome = await run_suite_async(suite, _Gated(second_started, first_done), store)
            second_run.append(outcome.run_id)

        await asyncio.gather(first(), second())

    before, after = _around_run(runs)
    assert after == before
    # The second run still had the run's threshold after the first one ended.
    assert _seen(store, second_run[0]) == [{"gc_gen0": RUN_GC_THRESHOLD}]
