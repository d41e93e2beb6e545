"""The library's front door: run a suite from Python (pytest, notebooks, scripts)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from seatrial.agent import resolve_agent
from seatrial.case import Suite, load_suite
from seatrial.report import RunReport, build_report
from seatrial.run import RunOptions
from seatrial.run import run_suite_async as _run_suite_async
from seatrial.store import Store


async def run_suite_async(
    suite: Suite | str | Path,
    agent: str,
    *,
    db: str | None = None,
    project_dir: Path | None = None,
    options: RunOptions | None = None,
) -> RunReport:
    """Run a suite against an agent spec, store it, and return the report."""
    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    base_dir = project_dir or (Path(suite.path).parent if suite.path else Path.cwd())
    options = options or RunOptions()
    adapter = resolve_agent(
        agent, base_dir=base_dir, concurrency=options.concurrency, timeout_s=options.timeout_s
    )
    with Store.open(db, project_dir=project_dir) as store:
        try:
            await adapter.check()
            outcome = await _run_suite_async(suite, adapter, store, options)
        finally:
            await adapter.aclose()
        return build_report(store, outcome.run_id, with_traces=True)


def run_suite(
    suite: Suite | str | Path,
    agent: str,
    *,
    db: str | None = None,
    project_dir: Path | None = None,
    options: RunOptions | None = None,
) -> RunReport:
    """Synchronous twin of :func:`run_suite_async`."""
    return asyncio.run(
        run_suite_async(suite, agent, db=db, project_dir=project_dir, options=options)
    )
