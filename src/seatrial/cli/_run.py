"""``seatrial run``: run a suite against an agent, store it, report it, exit with the gate."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from seatrial.agent import AgentAdapter, resolve_agent
from seatrial.case import Suite, load_gates, load_suite
from seatrial.cli._app import app, console, err_console, guarded
from seatrial.compare import LATEST, LATEST_PASSING, gate_settings, resolve_run_ref
from seatrial.config import Config, JudgeSettings, load_config, resolve_db_url
from seatrial.errors import AgentSpecError, ConfigError, InputError, RunNotFound
from seatrial.report import build_report, print_summary, write_reports
from seatrial.run import (
    JudgeRuntime,
    RunOptions,
    RunOutcome,
    gateway_for_run,
    progress_for,
    resume_async,
    run_suite_async,
)
from seatrial.store import Store


def _adapter(
    spec: str | None, suite: Suite | None, config: Config, concurrency: int, timeout_s: float | None
) -> AgentAdapter:
    chosen = spec or (suite.agent if suite else None)
    if not chosen:
        raise AgentSpecError(
            "no agent given: pass --agent SPEC (python:module:function, http://host:port/path, "
            "replay:FILE, or a name from seatrial.yaml `agents:`)"
        )
    return resolve_agent(
        chosen,
        agents=config.agents,
        base_dir=config.project_dir,
        concurrency=concurrency,
        timeout_s=timeout_s,
    )


def _judge_settings(config: Config, model: str | None) -> JudgeSettings | None:
    """``judge:`` of seatrial.yaml, its model replaced by ``--judge``; None without a model."""
    settings = config.judge
    if model is not None:
        if model not in config.models:
            known = ", ".join(sorted(config.models)) or "none"
            raise ConfigError(
                f"--judge {model}: no such model under models: in seatrial.yaml (known: "
                f"{known}); add it there (see docs/judge.md)"
            )
        settings = settings.model_copy(update={"model": model})
    return settings if settings.model is not None else None


async def _open_judge(
    stack: contextlib.AsyncExitStack, config: Config, settings: JudgeSettings, store: Store
) -> JudgeRuntime:
    """The run's judge on a gateway of its own (no ``--gateway`` needed), gate read from the
    store; says on the console whether its FAIL counts, and raises any alarm."""
    from seatrial.gateway import Gateway
    from seatrial.judge._llm import Judge

    gateway = Gateway(config.gateway_config(), store=store, project_dir=config.project_dir)
    stack.push_async_callback(gateway.aclose)
    runtime = JudgeRuntime.open(Judge(gateway, settings), store)
    console.print(f"judge: {escape(runtime.gate.reason)}", highlight=False)
    if runtime.gate.alarm is not None:
        err_console.print(f"[bold red]{escape(runtime.gate.alarm)}[/]", highlight=False)
    return runtime


async def _drive(
    adapter: AgentAdapter,
    store: Store,
    suite: Suite | None,
    resume: str | None,
    options: RunOptions,
    gateway: Config | None = None,
    judge: tuple[Config, JudgeSettings] | None = None,
) -> RunOutcome:
    progress = progress_for(console)
    try:
        async with contextlib.AsyncExitStack() as stack:
            if judge is not None:
                options.judge = await _open_judge(stack, *judge, store)
            if gateway is not None:
                server = await stack.enter_async_context(
                    gateway_for_run(
                        gateway.gateway_config(), store=store, project_dir=gateway.project_dir
                    )
                )
                console.print(f"gateway: {server.base_url} (each attempt gets its own path)")
            if resume:
                return await resume_async(resume, adapter, store, progress, options.judge)
            assert suite is not None
            return await run_suite_async(suite, adapter, store, options, progress)
    finally:
        await adapter.aclose()


def _gates_for(path: Path | None, suite: Suite, config: Config) -> dict[str, Any]:
    """The gates a new run stores: ``--gates FILE``, else the suite's, else seatrial.yaml's."""
    if path is not None:
        return gate_settings(load_gates(path), f"file:{path.resolve()}")
    if suite.gates:
        return gate_settings(list(suite.gates), f"suite:{Path(suite.path).resolve()}")
    if config.gates and config.file is not None:
        return gate_settings(list(config.gates), f"config:{config.file}")
    return {}


def _baseline_for(store: Store, ref: str, suite: Suite) -> dict[str, Any]:
    """The baseline run, resolved before the run starts; none yet is said, not an error."""
    try:
        run_id = resolve_run_ref(store, ref, suite=suite.name)
    except RunNotFound as exc:
        if ref not in (LATEST, LATEST_PASSING):
            raise
        err_console.print(f"[yellow]no baseline:[/] {escape(str(exc))}", highlight=False)
        return {"ref": ref, "run_id": None}
    console.print(f"baseline: {run_id} ({ref})", highlight=False)
    return {"ref": ref, "run_id": run_id}


async def _check(adapter: AgentAdapter) -> None:
    try:
        await adapter.check()
    finally:
        await adapter.aclose()


@app.command()
@guarded
def run(
    suite_path: Annotated[
        Path | None, typer.Argument(metavar="SUITE", help="Suite file (YAML, JSONL, XLSX).")
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", "-a", help="Agent spec or a name from seatrial.yaml.")
    ] = None,
    repeats: Annotated[int | None, typer.Option(min=1, help="Run every case N times.")] = None,
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="Attempts in flight (default 8).")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option(min=0.001, help="Seconds per attempt (default 60).")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="Processes sharing the attempts (default 1; one per core)."),
    ] = None,
    tag: Annotated[list[str] | None, typer.Option(help="Label the run (repeatable).")] = None,
    db: Annotated[
        str | None,
        typer.Option(
            help="Store URL (default: SEATRIAL_DB_URL, seatrial.yaml, .seatrial/seatrial.db)."
        ),
    ] = None,
    report_dir: Annotated[
        Path | None, typer.Option(help="Where report.json, junit.xml and summary.md go.")
    ] = None,
    resume: Annotated[
        str | None, typer.Option(metavar="RUN_ID", help="Finish an interrupted run.")
    ] = None,
    gateway: Annotated[
        bool,
        typer.Option(
            "--gateway",
            help="Start the model gateway for the run; each attempt gets its own base URL.",
        ),
    ] = False,
    gates: Annotated[
        Path | None,
        typer.Option(
            "--gates",
            metavar="FILE",
            help="Release gates for this run (else the suite's `gates:`, else seatrial.yaml's); "
            "stored with the run when it starts.",
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="REF",
            help="Compare with this run for max_regression gates: latest-passing, latest, a "
            "run id or a tag.",
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            metavar="MODEL",
            help="Judge L3 assertions with this model from seatrial.yaml `models:` "
            "(overrides judge.model).",
        ),
    ] = None,
) -> None:
    """Run SUITE against an agent; exit 0 when the gate is met, 1 when not, 2 on bad input."""
    config = load_config(Path.cwd())
    defaults = config.run
    concurrency = concurrency or defaults.concurrency
    repeats = repeats or defaults.repeats
    workers = workers or defaults.workers
    timeout_s = timeout if timeout is not None else defaults.timeout_s
    if gateway and workers > 1:
        raise InputError(
            "--gateway runs the proxy in this process: use it with --workers 1 (the default)"
        )
    if gateway and not config.models:
        raise ConfigError(
            "--gateway needs models: add a `models:` section to seatrial.yaml (see docs/gateway.md)"
        )
    judge_settings = _judge_settings(config, judge)
    if judge_settings is not None and workers > 1:
        # The judge's connections belong to this process's event loop: the runner keeps a
        # judged run in one process. Say so rather than leave --workers silently unused.
        err_console.print(
            f"[yellow]note:[/] the LLM judge runs in this process: --workers {workers} is "
            "ignored for this run (unset judge.model to use several processes)",
            highlight=False,
        )
        workers = 1
    suite: Suite | None = None
    if resume is None:
        if suite_path is None:
            raise typer.BadParameter("give a SUITE file, or --resume RUN_ID")
        suite = load_suite(suite_path)
    elif gates is not None or baseline is not None:
        raise InputError(
            "--gates and --baseline are fixed when a run starts; a resumed run keeps its own"
        )
    gate_record = _gates_for(gates, suite, config) if suite is not None else {}
    db_url = resolve_db_url(db, config)
    if suite is not None:
        # Bad input stops here, before the store is touched: nothing half-written.
        adapter = _adapter(agent, suite, config, concurrency, timeout_s)
        asyncio.run(_check(adapter))
    store = Store.open(db_url, project_dir=config.project_dir)
    try:
        run_id = store.resolve_run_id(resume) if resume else None
        if run_id is not None:
            adapter = _adapter(
                agent or store.get_run(run_id).agent, None, config, concurrency, timeout_s
            )
            asyncio.run(_check(adapter))
        settings = dict(gate_record)
        if baseline is not None and suite is not None:
            settings["baseline"] = _baseline_for(store, baseline, suite)
        options = RunOptions(
            repeats=repeats,
            concurrency=concurrency,
            timeout_s=timeout_s,
            tags=tag or [],
            workers=workers,
            settings=settings,
        )
        try:
            outcome = asyncio.run(
                _drive(
                    adapter,
                    store,
                    suite,
                    run_id,
                    options,
                    config if gateway else None,
                    (config, judge_settings) if judge_settings is not None else None,
                )
            )
        except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, or SIGTERM
            interrupted = run_id or store.resolve_run_id("latest")
            err_console.print(
                "[yellow]interrupted:[/] finished attempts are stored; "
                f"continue with `seatrial run --resume {interrupted}`",
                highlight=False,
            )
            raise typer.Exit(130) from None
        report = build_report(store, outcome.run_id, project_dir=config.project_dir)
    finally:
        store.close()
    print_summary(report, console)
    reports_root = config.report_path() or config.project_dir / ".seatrial" / "reports"
    directory = report_dir or reports_root / outcome.run_id
    written = write_reports(report, directory)
    console.print(f"reports: {', '.join(str(p) for p in written)}")
    if outcome.interrupted:
        console.print(
            f"[yellow]run interrupted[/]: resume with `seatrial run --resume {outcome.run_id}`"
        )
        raise typer.Exit(130)
    raise typer.Exit(0 if report.gate.passed else 1)
