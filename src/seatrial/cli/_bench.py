"""``seatrial bench``: one suite across several agents or models, and the leaderboard.

Each agent's run goes through the library's front door (:func:`seatrial.execute_suite_async`)
with the same loaded suite, repeats, run options and gateway configuration; the runs are
linked by the benchmark's id (``RunSettings.bench`` and the tag ``bench:ID``), and the
leaderboard is built from the store (:func:`seatrial.compare.bench_leaderboard`), so
``--show ID`` prints the same board later. A benchmark ranks; it does not gate: exit 0 unless
the input is bad (2) or Seatrial failed (3).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._context import open_store, project, speak_reader_language
from seatrial.cli._options import (
    TEXT_JSON_OR_MD,
    Concurrency,
    Db,
    Gateway,
    Judge,
    Lang,
    LeaderboardOutput,
    Repeats,
    Tags,
    TextJsonOrMd,
    Timeout,
    chosen_format,
)
from seatrial.cli._output import print_notice
from seatrial.errors import InputError
from seatrial.i18n import N_, ngettext
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial._execute import NoticeLevel, OnNotice
    from seatrial.case import Suite
    from seatrial.compare import Leaderboard
    from seatrial.config import Config
    from seatrial.run import RunOptions
    from seatrial.store import Store


def parse_agents(value: str | None) -> list[str]:
    """The agents of ``--agents A,B,C``: at least two, none twice."""
    agents = [part.strip() for part in (value or "").split(",") if part.strip()]
    if len(agents) < 2:
        raise InputError(
            _(
                "--agents needs at least two agents, comma-separated (e.g. --agents "
                "model:gpt-4o,model:qwen-max): a benchmark compares agents"
            )
        )
    twice = sorted({agent for agent in agents if agents.count(agent) > 1})
    if twice:
        raise InputError(
            _("--agents names {agents} more than once; name each once").format(
                agents=", ".join(twice)
            )
        )
    return agents


def _render(board: Leaderboard, format: str, output: Path | None) -> None:
    from seatrial.compare import leaderboard_json, leaderboard_markdown, leaderboard_table

    if format == "text" and output is None:
        console.print(leaderboard_table(board))
        return
    if format == "json":
        text = leaderboard_json(board) + "\n"
    elif format == "md":
        text = leaderboard_markdown(board)
    else:
        recorder = Console(record=True, width=160, file=io.StringIO())
        recorder.print(leaderboard_table(board))
        text = recorder.export_text()
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        err_console.print(_("leaderboard written to {path}").format(path=output), highlight=False)


async def _check_agents(
    agents: list[str], suite_path: Path, config: Config, options: RunOptions
) -> Suite:
    """Load the suite once, then resolve and check every agent before the first run: a bad
    spec or a dead endpoint stops the benchmark (exit 2) with nothing stored."""
    from seatrial._execute import agent_for, check_agent
    from seatrial.case import load_suite

    suite = load_suite(suite_path)
    for spec in agents:
        await check_agent(agent_for(spec, suite, config, options))
    return suite


def _notices_to(chatter: Console) -> OnNotice:
    """What each run says as it starts: choices where the progress goes (stderr when stdout
    carries Markdown or JSON), warnings and alarms on stderr as ``seatrial run`` does."""

    def say(level: NoticeLevel, text: str) -> None:
        if level == "info":
            chatter.print(escape(text), highlight=False)
        else:
            print_notice(level, text)

    return say


def _stopped(bench_id: str, spec: str, run_id: str | None) -> None:
    err_console.print(
        _(
            "[yellow]benchmark {bench_id} stopped at {spec}[/]: the finished runs are stored "
            "(`seatrial bench --show {bench_id}`); finish the interrupted one with "
            "`seatrial run --resume {run_id}`"
        ).format(bench_id=bench_id, spec=escape(spec), run_id=run_id),
        highlight=False,
    )


async def _run_bench(
    suite_path: Path,
    agents: list[str],
    config: Config,
    store: Store,
    base: RunOptions,
    gateway: bool,
    judge: str | None,
    chatter: Console,
) -> str:
    """Run the suite once per agent, one after another; the benchmark's id."""
    import asyncio
    import dataclasses

    from seatrial._execute import execute_suite_async
    from seatrial.compare import bench_record, bench_tag, new_bench_id
    from seatrial.run import new_run_id, progress_for

    suite = await _check_agents(agents, suite_path, config, base)
    bench_id = new_bench_id()
    chatter.print(
        _("benchmark {bench_id}: suite {suite}, {cases}, {agents}").format(
            bench_id=bench_id,
            suite=suite.name,
            cases=ngettext("{count} case", "{count} cases", len(suite.cases)).format(
                count=len(suite.cases)
            ),
            agents=ngettext("{count} agent", "{count} agents", len(agents)).format(
                count=len(agents)
            ),
        ),
        highlight=False,
        markup=False,
    )
    for position, spec in enumerate(agents):
        options = dataclasses.replace(
            base,
            tags=[*base.tags, bench_tag(bench_id)],
            settings={"bench": bench_record(bench_id, agents, position)},
            run_id=new_run_id(),
        )
        chatter.print(f"[bold]{position + 1}/{len(agents)}[/] {escape(spec)}", highlight=False)
        try:
            result = await execute_suite_async(
                suite,
                spec,
                config=config,
                options=options,
                gateway=gateway,
                judge=judge,
                store=store,
                write_report_files=False,
                with_attempts=False,
                progress=progress_for(chatter),
                on_notice=_notices_to(chatter),
            )
        except (KeyboardInterrupt, asyncio.CancelledError):
            _stopped(bench_id, spec, options.run_id)
            raise
        if result.interrupted:
            _stopped(bench_id, spec, result.run_id)
            raise KeyboardInterrupt
        summary = result.report.summary
        chatter.print(
            "  "
            + _("run {run_id}: {passed}/{attempts} attempts passed").format(
                run_id=result.run_id, passed=summary.passed, attempts=summary.attempts
            ),
            highlight=False,
            markup=False,
        )
    return bench_id


@app.command(name="bench")
@guarded
def bench_command(
    suite_path: Annotated[
        Path | None, typer.Argument(metavar="SUITE", help=N_("Suite file (YAML, JSONL, XLSX)."))
    ] = None,
    agents: Annotated[
        str | None,
        typer.Option(
            "--agents",
            metavar="A,B,C",
            help=N_(
                "The agents to rank, comma-separated: specs (model:NAME, python:..., "
                "http://...) or names from seatrial.yaml `agents:`."
            ),
        ),
    ] = None,
    repeats: Repeats = None,
    format: TextJsonOrMd = "text",
    output: LeaderboardOutput = None,
    show: Annotated[
        str | None,
        typer.Option("--show", metavar="BENCH_ID", help=N_("Print a stored benchmark's board.")),
    ] = None,
    gateway: Gateway = False,
    judge: Judge = None,
    concurrency: Concurrency = None,
    timeout: Timeout = None,
    tag: Tags = None,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Run SUITE once per agent with the same cases, repeats and gateway settings, and rank
    them: success with intervals, pass^k, latency, tokens, cost per success, tool success,
    failure types, and which differences are significant. Exit 0 unless the input is bad."""
    import asyncio

    from seatrial._execute import default_options
    from seatrial.compare import bench_leaderboard

    chosen_format(format, TEXT_JSON_OR_MD)
    config = project()
    speak_reader_language(lang, config)
    if show is None:
        if suite_path is None:
            raise InputError(_("give a SUITE file to benchmark, or --show BENCH_ID"))
        names = parse_agents(agents)
    elif suite_path is not None or agents is not None:
        raise InputError(_("--show prints a stored benchmark: give it without SUITE and --agents"))
    # A benchmark's runs keep to this process (seatrial.yaml's run.workers is not read).
    base = default_options(
        config,
        repeats=repeats,
        tags=tag or [],
        concurrency=concurrency,
        timeout_s=timeout,
        workers=1,
    )
    # Progress and notices go to stderr when stdout carries Markdown or JSON.
    chatter = console if format == "text" and output is None else err_console
    with open_store(db, config) as store:
        if show is None:
            assert suite_path is not None
            try:
                bench_id = asyncio.run(
                    _run_bench(suite_path, names, config, store, base, gateway, judge, chatter)
                )
            except (KeyboardInterrupt, asyncio.CancelledError):
                raise typer.Exit(130) from None
        else:
            bench_id = show
        board = bench_leaderboard(store, bench_id)
    _render(board, format, output)
    if show is None:
        chatter.print(
            _("again: {command}").format(command=f"seatrial bench --show {bench_id}"),
            highlight=False,
            markup=False,
        )
