"""Running a list of attempts with bounded concurrency on one event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

from seatrial.agent import AgentAdapter
from seatrial.case import Case
from seatrial.record import AttemptRecord
from seatrial.run._attempt import run_attempt


async def drain(
    plan: list[tuple[Case, int]],
    adapter: AgentAdapter,
    run_id: str,
    timeout_s: float | None,
    concurrency: int,
    on_record: Callable[[AttemptRecord], None],
) -> None:
    """Run every (case, attempt) of ``plan`` with at most ``concurrency`` in flight."""
    jobs: Iterator[tuple[Case, int]] = iter(plan)

    async def lane() -> None:
        for case, attempt in jobs:
            on_record(await run_attempt(adapter, case, attempt, run_id, timeout_s))

    await asyncio.gather(*(lane() for _ in range(max(1, min(concurrency, len(plan))))))
