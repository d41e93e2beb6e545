"""Running a suite: every case and repeat, bounded concurrency, resumable."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from seatrial._version import __version__
from seatrial.agent import AgentAdapter
from seatrial.case import Case, Suite
from seatrial.record import (
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT_S,
    DEFAULT_WORKERS,
    AttemptRecord,
    RunInfo,
    RunSettings,
)
from seatrial.run._context import active_gateway, run_process_settings
from seatrial.run._drain import drain
from seatrial.run._placement import placement
from seatrial.run._plan import CasePlan
from seatrial.run._run_settings import new_run_settings
from seatrial.run._workers import run_in_workers
from seatrial.run._writer import AttemptWriter
from seatrial.store import Store

if TYPE_CHECKING:
    from seatrial.gateway import RunGateway
    from seatrial.run._judge_hook import JudgeRuntime


class Progress(Protocol):
    """Receives progress as attempts finish."""

    def start(self, total: int, done: int) -> None:
        """The run starts with ``total`` attempts, ``done`` of them already stored."""

    def advance(self, record: AttemptRecord) -> None:
        """One attempt finished."""

    def stop(self) -> None:
        """The run ended (finished or interrupted)."""


class Dispatch(Protocol):
    """Runs a plan's attempts somewhere else (Celery workers) and reports each one stored."""

    async def __call__(
        self,
        run_id: str,
        plan: list[tuple[Case, int]],
        on_record: Callable[[AttemptRecord], None],
    ) -> None:
        """Return once every (case, attempt) of ``plan`` is stored for ``run_id``."""


@dataclass
class RunOptions:
    """How to run: repeats override, concurrency, per-attempt timeout, tags."""

    repeats: int | None = None
    """Repeat every case this many times (overrides each case's ``repeats``)."""
    concurrency: int = DEFAULT_CONCURRENCY
    """Attempts in flight at once."""
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    """Wall-clock limit per attempt; past it the attempt is ERROR (``timeout``)."""
    tags: list[str] = field(default_factory=list)
    """Labels stored with the run."""
    workers: int = DEFAULT_WORKERS
    """Processes sharing the attempts (one event loop each); more than 1 uses every core."""
    judge: JudgeRuntime | None = None
    """The LLM judge of L3 assertions; a run with one stays in this process."""
    settings: dict[str, Any] = field(default_factory=dict)
    """More settings to store with the run when it starts (a benchmark's, a rerun's ...), by
    :class:`~seatrial.record.RunSettings` field name; :func:`new_run_settings` validates
    them into the run's settings."""
    run_id: str | None = None
    """The new run's id; None makes one (:func:`new_run_id`). ``seatrial rerun`` picks it
    beforehand to point the gateway's cassette at the attempt it replays."""
    dispatch: Dispatch | None = None
    """Run the attempts elsewhere (``--backend celery``); None runs them in this machine."""

    @classmethod
    def of_run(cls, info: RunInfo) -> RunOptions:
        """The options a stored run ran with (its settings and tags), to finish it with:
        the one place they are read back, for the front door and :func:`resume_async`."""
        settings = info.settings
        return cls(
            repeats=settings.repeats,
            concurrency=settings.concurrency,
            timeout_s=settings.timeout_s,
            tags=list(info.tags),
            workers=settings.workers,
        )


@dataclass
class RunOutcome:
    """What a call to the runner did."""

    run_id: str
    attempts_run: int
    interrupted: bool = False


def new_run_id() -> str:
    """A sortable run id: UTC time plus a random suffix.

    The suffix comes from the operating system, not the ``random`` module: an in-process
    agent, a test library or a plugin that seeds ``random`` would otherwise make two runs
    started in the same second collide.
    """
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + f"-{secrets.token_hex(3)}"


def _plan(
    cases: list[Case], repeats: int | None, done: set[tuple[str, int]]
) -> list[tuple[CasePlan, int]]:
    """Every (case, attempt) still to run, each case planned once for all its attempts."""
    return [
        (planned, n)
        for planned in map(CasePlan.of, cases)
        for n in range(1, (repeats or planned.case.repeats) + 1)
        if (planned.case.id, n) not in done
    ]


async def run_suite_async(
    suite: Suite,
    adapter: AgentAdapter,
    store: Store,
    options: RunOptions | None = None,
    progress: Progress | None = None,
    *,
    settings: RunSettings | None = None,
) -> RunOutcome:
    """Run every case and repeat of ``suite`` against ``adapter``, storing each attempt.

    ``settings`` is the record the run stores, as the front door built it
    (:func:`new_run_settings`); None builds it here from ``suite``, ``adapter`` and
    ``options`` with the same function.
    """
    options = options or RunOptions()
    gateway = active_gateway()
    if options.judge is not None:
        options.judge.rubrics = dict(suite.rubrics)
    if settings is None:
        settings = new_run_settings(suite, adapter, options, gateway)
    info = RunInfo(
        run_id=options.run_id or new_run_id(),
        suite=suite.name,
        suite_path=suite.path,
        agent=adapter.spec,
        tags=list(options.tags),
        started_at=time.time(),
        seatrial_version=__version__,
        settings=settings,
    )
    # Planned before the run is stored: a case the runner cannot plan stores nothing.
    plan = _plan(suite.cases, options.repeats, set())
    store.create_run(info, suite.cases)
    return await _execute(info.run_id, plan, 0, adapter, store, options, progress, gateway)


async def resume_async(
    run_id: str,
    adapter: AgentAdapter,
    store: Store,
    progress: Progress | None = None,
    options: RunOptions | None = None,
) -> RunOutcome:
    """Finish a run that was interrupted, without redoing the attempts already stored.

    ``options`` are the run's own (:meth:`RunOptions.of_run`, with its judge and dispatch
    when it has them); None reads them from the stored run.
    """
    info = store.get_run(run_id)
    options = options or RunOptions.of_run(info)
    if options.judge is not None:
        options.judge.rubrics = dict(info.settings.rubrics)
    done = store.finished_attempts(run_id)
    plan = _plan(store.run_cases(run_id), options.repeats, done)
    return await _execute(
        run_id, plan, len(done), adapter, store, options, progress, active_gateway()
    )


async def _execute(
    run_id: str,
    plan: list[tuple[CasePlan, int]],
    already_done: int,
    adapter: AgentAdapter,
    store: Store,
    options: RunOptions,
    progress: Progress | None,
    gateway: RunGateway | None,
) -> RunOutcome:
    finished = 0

    def on_record(record: AttemptRecord) -> None:
        nonlocal finished
        finished += 1
        if progress is not None:
            progress.advance(record)

    if progress is not None:
        progress.start(len(plan) + already_done, already_done)
    interrupted = True
    try:
        with run_process_settings():
            where = placement(
                workers=options.workers,
                attempts=len(plan),
                dispatch=options.dispatch is not None,
                judge=options.judge is not None,
                # A proxy belongs to this process's loop; the gateway alone does not: each
                # worker opens its own.
                gateway=gateway is not None and gateway.server is not None,
            )
            if options.dispatch is not None:
                await options.dispatch(run_id, [(p.case, n) for p, n in plan], on_record)
            elif where == "workers":
                await run_in_workers(run_id, plan, adapter, store, options, on_record, gateway)
            else:
                writer = AttemptWriter(store)
                try:

                    def store_and_count(record: AttemptRecord) -> None:
                        writer.submit(record)
                        on_record(record)

                    await drain(
                        plan,
                        adapter,
                        run_id,
                        options.timeout_s,
                        options.concurrency,
                        store_and_count,
                        judge=options.judge,
                        gateway=gateway,
                        room=writer.room,
                    )
                finally:
                    writer.close()
        interrupted = False
    finally:
        if progress is not None:
            progress.stop()
        if options.judge is not None:
            # After the writer closed: the items point at attempts that are stored by now.
            store.add_review_items(options.judge.take_review_items())
        store.finish_run(run_id, "interrupted" if interrupted else "finished", time.time())
    return RunOutcome(run_id=run_id, attempts_run=finished, interrupted=interrupted)
