"""Running a suite with its gates, baseline, judge, gateway and report files: one function.

``seatrial run``, ``seatrial nightly``, ``seatrial ci``, ``seatrial bench``, schedules, the
pytest plugin and :func:`seatrial.run_suite` all end in :func:`execute_suite_async`, so a rule
added here (which gates a run stores, when they are checked, what the exit code is) holds from
every entry point.

It lives above the runner and the reports rather than in ``seatrial.run``: the gate verdict is
:func:`seatrial.compare.run_meets_gates`, read from the report built from the store (the same
verdict ``seatrial report``, the dashboard and ``latest-passing`` use), and the runner may not
import the reports. Being the one module that composes both keeps the runner free of a second
copy of the verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seatrial._execute._notice import Backend, NoticeLevel, OnNotice, quiet
from seatrial._execute._rerun import rerun_attempt, rerun_attempt_async
from seatrial._execute._services import (
    GatewayStart,
    GatewayUse,
    celery_dispatch,
    gateway_use,
    needs_gateway,
    note_limits_per_worker,
    project_gateway,
    send_alerts,
    settle_workers,
)
from seatrial._execute._setup import (
    agent_for,
    baseline_for,
    default_options,
    gates_for,
    judge_needed,
    judge_settings,
    with_golden_set,
)
from seatrial.agent import AgentAdapter, check_fault_support
from seatrial.case import Suite, load_suite
from seatrial.compare import REPLAY_TAG
from seatrial.config import Config, JudgeSettings, load_config, resolve_db_url
from seatrial.dataset import parse_dataset_ref
from seatrial.errors import ConfigError, InputError
from seatrial.i18n import gettext as _
from seatrial.i18n import render
from seatrial.notify import check_channels
from seatrial.report import RunReport, build_report, write_reports
from seatrial.run import (
    JudgeRuntime,
    Progress,
    RunOptions,
    RunOutcome,
    active_gateway,
    gateway_in_process,
    git_settings,
    new_run_settings,
    resume_async,
    with_simulator_models,
)
from seatrial.run import run_suite_async as _run_cases_async
from seatrial.store import Store

__all__ = [
    "Backend",
    "GatewayStart",
    "NoticeLevel",
    "OnNotice",
    "SuiteRun",
    "agent_for",
    "check_agent",
    "default_options",
    "execute_suite",
    "execute_suite_async",
    "gates_for",
    "gateway_use",
    "judge_settings",
    "needs_gateway",
    "quiet",
    "rerun_attempt",
    "rerun_attempt_async",
]


@dataclass(frozen=True, repr=False)
class SuiteRun:
    """What running a suite came to: the stored report with its gate, and the files written."""

    run_id: str
    """The run, as stored."""
    report: RunReport
    """The report read back from the store; ``report.gate`` is the release decision."""
    report_files: tuple[Path, ...] = ()
    """report.json, junit.xml and summary.md, when they were written."""
    interrupted: bool = False
    """True when the run stopped early (Ctrl-C, SIGTERM); resume it by its id."""

    @property
    def passed(self) -> bool:
        """The run finished and met every gate (built-in and written)."""
        return self.report.gate.passed and not self.interrupted

    @property
    def exit_code(self) -> int:
        """What the command line exits with: 0 gates met, 1 not met, 130 interrupted."""
        if self.interrupted:
            return 130
        return 0 if self.report.gate.passed else 1

    def __repr__(self) -> str:
        # Short on purpose: asyncio.run() formats the repr of its main task, result included,
        # when it restores the Ctrl-C handler, and the full report's repr (every attempt of
        # every case) took ~0.3 s of a 1,000-attempt run.
        files = ", ".join(str(path) for path in self.report_files)
        return (
            f"SuiteRun(run_id={self.run_id!r}, report_files=({files}), "
            f"interrupted={self.interrupted})"
        )


async def check_agent(adapter: AgentAdapter) -> None:
    """The adapter's preflight (:meth:`AgentAdapter.check`), then its resources released:
    bad input stops a run here, before the store is touched."""
    try:
        await adapter.check()
    finally:
        await adapter.aclose()


async def _open_judge(
    stack: contextlib.AsyncExitStack,
    config: Config,
    settings: JudgeSettings,
    store: Store,
    say: OnNotice,
) -> JudgeRuntime:
    """The run's judge on a gateway of its own (no ``gateway=True`` needed), its gate read
    from the store's calibrations."""
    from seatrial.gateway import Gateway
    from seatrial.judge import Judge

    gateway = Gateway(config.gateway_config(), store=store, project_dir=config.project_dir)
    stack.push_async_callback(gateway.aclose)
    runtime = JudgeRuntime.open(Judge(gateway, settings), store)
    trust = runtime.trust
    say("info", _("judge: {reason}").format(reason=render(trust.said, trust.reason)))
    if trust.alarm is not None:
        say("alarm", render(trust.alarm_said, trust.alarm))
    return runtime


async def _drive(
    adapter: AgentAdapter,
    store: Store,
    suite: Suite | None,
    resume: str | None,
    options: RunOptions,
    config: Config,
    gateway: GatewayUse | GatewayStart | None,
    judge: JudgeSettings | None,
    recorded: dict[str, Any],
    progress: Progress | None,
    say: OnNotice,
) -> RunOutcome:
    """Open the run's judge and gateway, then run ``suite`` with the settings written here
    (``recorded`` and what the judge and gateway add), or finish the run ``resume``."""
    try:
        async with contextlib.AsyncExitStack() as stack:
            if judge is not None:
                options.judge = await _open_judge(stack, config, judge, store, say)
            if gateway and options.dispatch is not None:
                # Each worker starts its own proxy for the run (seatrial.distributed).
                say("info", _("gateway: each worker runs its own proxy for the run"))
            elif gateway == "in_process":
                await stack.enter_async_context(
                    gateway_in_process(
                        config.gateway_config(), store=store, project_dir=config.project_dir
                    )
                )
                say("info", _("gateway: in process (the model agent's calls need no proxy)"))
            elif gateway is not None:
                start = project_gateway if gateway == "proxy" else gateway
                server = await stack.enter_async_context(start(store, config))
                if server is not None:
                    say(
                        "info",
                        _("gateway: {url} (each attempt gets its own path)").format(
                            url=server.base_url
                        ),
                    )
            if resume is not None:
                return await resume_async(resume, adapter, store, progress, options)
            assert suite is not None
            settings = new_run_settings(suite, adapter, options, active_gateway(), recorded)
            return await _run_cases_async(
                suite, adapter, store, options, progress, settings=settings
            )
    finally:
        await adapter.aclose()


async def execute_suite_async(
    suite: Suite | str | Path | None = None,
    agent: str | AgentAdapter | None = None,
    *,
    resume: str | None = None,
    config: Config | None = None,
    options: RunOptions | None = None,
    gates: str | Path | dict[str, Any] | None = None,
    baseline: str | None = None,
    judge: str | None = None,
    gateway: bool | GatewayStart = False,
    dataset: str | None = None,
    db: str | None = None,
    store: Store | None = None,
    agent_dir: Path | None = None,
    report_dir: Path | None = None,
    write_report_files: bool = True,
    with_attempts: bool = True,
    with_traces: bool = False,
    progress: Progress | None = None,
    on_notice: OnNotice | None = None,
    backend: Backend = "local",
) -> SuiteRun:
    """Run ``suite`` (or finish the run ``resume`` names) with its gates, and judge the run.

    The gates are a gates file (``gates``), else the suite's ``gates:``, else seatrial.yaml's;
    they are stored with the run when it starts, with ``baseline`` (a run ref, resolved now),
    and checked when it ends together with the built-in gates (every P0 case passes, the
    suite's ``gate.min_pass_rate``). A resumed run keeps what it stored.

    Args:
        suite: the suite, or its file; None with ``resume``, or to run only ``dataset``.
        agent: an agent spec, a name from seatrial.yaml ``agents:``, or an adapter; None
            takes the suite's ``agent:`` (a resumed run's own agent).
        resume: finish this interrupted run (id, unique prefix or ``latest``).
        config: the project configuration; default: seatrial.yaml found from the current
            folder.
        options: repeats, concurrency, timeout, workers, tags; default: seatrial.yaml
            ``run:``. A resumed run keeps the ones it stored.
        gates: a gates file that wins over the suite's and seatrial.yaml's ``gates:``, or
            :func:`seatrial.compare.gate_settings` of gates written elsewhere (a CI tier's).
        baseline: the run that ``max_regression`` gates compare with: ``latest-passing``,
            ``latest``, a run id or a tag.
        judge: the judge model (a name under ``models:``), replacing ``judge.model``.
        gateway: start the model gateway for the run (each attempt gets its own base URL);
            a :data:`GatewayStart` starts that one instead of seatrial.yaml's (a rerun's
            cassette).
        dataset: a golden set, ``NAME`` or ``NAME@VERSION``, whose cases run after the
            suite's own (replacing the suite's ``dataset:``); the run stores the version.
        db: store URL, or a SQLite file's path (relative to the current folder); default:
            ``SEATRIAL_DB_URL``, seatrial.yaml ``db:``, the project's
            ``.seatrial/seatrial.db``. Ignored when ``store`` is given.
        store: an open store to use (left open).
        agent_dir: where relative paths in ``agent`` resolve (default: the project folder).
        report_dir: where report.json, junit.xml and summary.md go (default: seatrial.yaml
            ``run.report_dir``, else ``.seatrial/reports``, then the run id).
        write_report_files: False writes no report files.
        with_attempts: put every attempt in the returned report (``report.cases[].attempts``);
            False keeps the report to its figures (a few numbers per attempt, whatever the
            run's size) and streams the attempts from the store into the report files, as
            ``seatrial run`` does.
        with_traces: put each attempt, with its trace, in the returned report.
        progress: receives each attempt as it finishes.
        on_notice: receives what the run says as it starts (baseline, judge, gateway).
        backend: ``celery`` sends the attempts to Celery workers (``seatrial worker``;
            broker: ``SEATRIAL_BROKER_URL``) and follows the run from the store; the summary,
            reports and exit code are those of a local run (docs/scale.md).

    Raises:
        SeatrialError: bad input (suite, gates file, agent, configuration) before anything
            is stored, or the store failing.
    """
    say = on_notice or quiet
    config = config or load_config(Path.cwd())
    if config.alerts.channels:
        check_channels(config.alerts)  # a missing ${NAME} stops here (exit 2): nothing run
    if options is None:
        options = default_options(config)
    else:
        # The caller's options stay as given: a nightly passes the same ones to every suite.
        options = dataclasses.replace(
            options, tags=list(options.tags), settings=dict(options.settings)
        )
    if gateway and backend == "local" and options.workers > 1:
        # Asked for in so many words: bad input, before anything is loaded or stored.
        raise InputError(
            _("--gateway runs the proxy in this process: use it with --workers 1 (the default)")
        )
    if gateway is True and not config.models:
        raise ConfigError(
            _(
                "--gateway needs models: add a `models:` section to seatrial.yaml "
                "(see docs/gateway.md)"
            )
        )
    judged = judge_settings(config, judge) if options.judge is None else None
    loaded: Suite | None = None
    gate_record: dict[str, Any] = {}
    adapter: AgentAdapter | None = None
    if resume is None:
        if suite is None and dataset is None:
            raise InputError(
                _("give a suite to run, a golden set (--dataset), or the run to resume")
            )
        if suite is None:
            loaded = Suite(name=parse_dataset_ref(str(dataset))[0], cases=[])
        else:
            loaded = suite if isinstance(suite, Suite) else load_suite(suite)
        gate_record = gates_for(gates, loaded, config)
        loaded = with_simulator_models(loaded, config.simulator.model, config.models)
        # Bad input stops here, before the store is touched: nothing half-written.
        adapter = (
            agent
            if isinstance(agent, AgentAdapter)
            else agent_for(agent, loaded, config, options, agent_dir)
        )
        check_fault_support(adapter, loaded.cases)
        await check_agent(adapter)
    elif gates is not None or baseline is not None or dataset is not None:
        raise InputError(
            _(
                "--gates, --baseline and --dataset are fixed when a run starts; a resumed run "
                "keeps its own"
            )
        )
    async with contextlib.AsyncExitStack() as stack:
        if store is None:
            store = stack.enter_context(
                Store.open(resolve_db_url(db, config), project_dir=config.project_dir)
            )
        resumed = store.resolve_run_id(resume) if resume is not None else None
        if resumed is not None:
            stored = store.get_run(resumed)
            # A resumed run finishes with what it stored, whatever this call's options say.
            options = dataclasses.replace(RunOptions.of_run(stored), judge=options.judge)
            if isinstance(agent, AgentAdapter):
                adapter = agent
            else:
                adapter = agent_for(agent or stored.agent, None, config, options, agent_dir)
            await check_agent(adapter)
        assert adapter is not None
        run_cases = loaded.cases if loaded is not None else store.run_cases(str(resumed))
        # A rerun's own gateway (its cassette) is served by a proxy; otherwise the agent and
        # the cases say whether the run needs one, and how it reaches it.
        use: GatewayUse | None = (
            "proxy" if callable(gateway) else gateway_use(adapter, run_cases, asked=gateway)
        )
        settle_workers(options, backend, judge=judged is not None, gateway=use == "proxy", say=say)
        note_limits_per_worker(options, config, use, say)
        recorded = dict(gate_record)  # what the run stores, by RunSettings field
        if resumed is None:  # every new run records the branch and commit it was made from
            recorded.update(git_settings(config.project_dir))
        if backend == "celery":
            options.dispatch = celery_dispatch(
                store, options.timeout_s, config, use is not None, recorded, say
            )
        golden_ref = dataset or (loaded.dataset if loaded is not None else None)
        if golden_ref is not None and loaded is not None:
            loaded, golden = with_golden_set(store, loaded, golden_ref, say)
            recorded.update(dataset=golden)
        if baseline is not None and loaded is not None:
            recorded.update(baseline=baseline_for(store, baseline, loaded, say))
        if judged is not None and not judge_needed(
            loaded.cases if loaded is not None else run_cases
        ):
            judged = None  # nothing to judge: no judge, and no word of it
        outcome = await _drive(
            adapter,
            store,
            loaded,
            resumed,
            options,
            config,
            gateway if callable(gateway) else use,
            judged,
            recorded,
            progress,
            say,
        )
        kept = with_attempts or with_traces
        report = build_report(
            store,
            outcome.run_id,
            with_traces=with_traces,
            project_dir=config.project_dir,
            with_attempts=kept,
        )
        for drift in report.version_drift:
            say(
                "warning",
                _("{drift}: not the pinned version (models: in seatrial.yaml)").format(
                    drift=drift.line()
                ),
            )
        # A rerun (tag replay) looks at one attempt again: it is no release to alert about.
        alerting = not outcome.interrupted and REPLAY_TAG not in options.tags
        if config.alerts.channels and alerting:
            await send_alerts(store, report, config, say)
        written: list[Path] = []
        if write_report_files:
            root = config.report_path() or config.project_dir / ".seatrial" / "reports"
            directory = report_dir or root / outcome.run_id
            # A report without its attempts streams them from the store, which is open here.
            written = write_reports(report, directory, None if kept else store)
    return SuiteRun(outcome.run_id, report, tuple(written), outcome.interrupted)


def execute_suite(
    suite: Suite | str | Path | None = None,
    agent: str | AgentAdapter | None = None,
    **kwargs: Any,
) -> SuiteRun:
    """Synchronous twin of :func:`execute_suite_async` (same arguments)."""
    return asyncio.run(execute_suite_async(suite, agent, **kwargs))
