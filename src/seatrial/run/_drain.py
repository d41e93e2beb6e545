"""Running a list of attempts with bounded concurrency on one event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING

from seatrial.agent import AgentAdapter
from seatrial.record import AttemptRecord
from seatrial.run._attempt import run_attempt
from seatrial.run._plan import CasePlan

if TYPE_CHECKING:
    from seatrial.gateway import RunGateway
    from seatrial.run._judge_hook import JudgeRuntime


async def drain(
    plan: list[tuple[CasePlan, int]],
    adapter: AgentAdapter,
    run_id: str,
    timeout_s: float | None,
    concurrency: int,
    on_record: Callable[[AttemptRecord], None],
    *,
    judge: JudgeRuntime | None = None,
    gateway: RunGateway | None = None,
    room: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Run every (case, attempt) of ``plan`` (each case planned once for the run) with at
    most ``concurrency`` in flight, each with the run's ``judge`` and ``gateway``
    (when it has them). ``room``, when given, is awaited before each attempt starts: the
    store's writer holds attempts back while it has too many waiting
    (:meth:`AttemptWriter.room`)."""
    jobs: Iterator[tuple[CasePlan, int]] = iter(plan)

    async def lane() -> None:
        for case, attempt in jobs:
            if room is not None:
                await room()
            record = await run_attempt(
                adapter, case, attempt, run_id, timeout_s, judge=judge, gateway=gateway
            )
            on_record(record)

    await asyncio.gather(*(lane() for _ in range(max(1, min(concurrency, len(plan))))))
