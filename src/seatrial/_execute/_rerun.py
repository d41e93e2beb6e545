"""``seatrial rerun`` through the front door: a stored attempt run again as a new run.

The rerun is planned in ``seatrial.run`` (:func:`seatrial.run.prepare_rerun`: the stored
case, its agent, how the model answers are served) and run by :func:`execute_suite_async`,
like any ``seatrial run``: the same checks, settings record and judge, with the rerun's own
gateway (the stored run's cassette, or the live models). It writes no report files and raises
no alert: what a rerun reports is its diff with the stored attempt.
"""

from __future__ import annotations

import asyncio

from seatrial.compare import AttemptRef
from seatrial.config import Config
from seatrial.run import Progress, RerunResult, prepare_rerun
from seatrial.store import Store


async def rerun_attempt_async(
    store: Store,
    ref: AttemptRef | str,
    *,
    config: Config,
    live: bool = False,
    progress: Progress | None = None,
) -> RerunResult:
    """Re-run a stored attempt as a new run (tag ``replay``) and diff it with the stored one.

    ``ref`` is an :class:`AttemptRef` or text as ``seatrial rerun`` takes it
    (``RUN:CASE#N``). ``config`` is the project's: its agents, base folder and gateway.
    Raises :class:`InputError` (exit 2) for an unknown attempt, an agent that cannot be
    resolved, or a recorded run whose cassette is gone.
    """
    # The package's front door imports this module to export it.
    from seatrial._execute import execute_suite_async

    setup = prepare_rerun(store, ref, config=config, live=live)
    await execute_suite_async(
        setup.suite,
        setup.adapter,
        config=config,
        options=setup.options,
        store=store,
        gateway=setup.gateway if setup.plan.gateway is not None else False,
        # What a rerun reports is its diff with the stored attempt, not a release's files.
        write_report_files=False,
        progress=progress,
    )
    return setup.result(store, config)


def rerun_attempt(
    store: Store,
    ref: AttemptRef | str,
    *,
    config: Config,
    live: bool = False,
    progress: Progress | None = None,
) -> RerunResult:
    """:func:`rerun_attempt_async` from synchronous code (it runs its own event loop)."""
    return asyncio.run(rerun_attempt_async(store, ref, config=config, live=live, progress=progress))
