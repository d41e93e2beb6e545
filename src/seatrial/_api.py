"""The library's front door: run a suite from Python (pytest, notebooks, scripts).

:func:`run_suite` is ``seatrial run`` for Python callers: it calls the same
:func:`seatrial.execute_suite_async` as the commands do and returns the stored report.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from seatrial._execute import execute_suite_async
from seatrial.case import Suite, load_suite
from seatrial.config import Config, load_config
from seatrial.report import RunReport
from seatrial.run import RunOptions


def _project(suite: Suite, project_dir: Path | None) -> tuple[Config, Path]:
    """The configuration a Python call runs with, and where its relative agent paths resolve.

    seatrial.yaml is looked for from ``project_dir``, else from the suite's folder upward, so a
    suite inside a project gets the project's gates, agents, judge and store, as ``seatrial
    run`` in that project would. Without one, the store stays where it always was:
    ``project_dir``, else the current folder.
    """
    suite_dir = Path(suite.path).resolve().parent if suite.path else None
    config = load_config(project_dir or suite_dir or Path.cwd())
    if config.file is None:
        config = config.model_copy(update={"project_dir": (project_dir or Path.cwd()).resolve()})
    return config, project_dir or suite_dir or config.project_dir


async def run_suite_async(
    suite: Suite | str | Path,
    agent: str | None = None,
    *,
    db: str | None = None,
    project_dir: Path | None = None,
    options: RunOptions | None = None,
    gates: str | Path | None = None,
    baseline: str | None = None,
    judge: str | None = None,
    gateway: bool = False,
    report_dir: Path | None = None,
    dataset: str | None = None,
) -> RunReport:
    """Run a suite against an agent with its gates, store it, and return the report.

    The same run as ``seatrial run`` (see :func:`execute_suite_async`): the gates (``gates``,
    else the suite's, else seatrial.yaml's) are stored when the run starts and decide
    ``report.gate``. seatrial.yaml is found from ``project_dir``, else the suite's folder.
    ``agent`` defaults to the suite's ``agent:``; relative paths in it resolve against
    ``project_dir``, else the suite's folder. Report files are written only to
    ``report_dir``; the returned report carries every attempt's trace. ``dataset``
    (``NAME`` or ``NAME@VERSION``) also runs a golden set's cases, as ``--dataset`` does,
    and the run records the version.
    """
    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    config, agent_dir = _project(suite, project_dir)
    result = await execute_suite_async(
        suite,
        agent,
        config=config,
        options=options,
        gates=gates,
        baseline=baseline,
        judge=judge,
        gateway=gateway,
        db=db,
        agent_dir=agent_dir,
        report_dir=report_dir,
        write_report_files=report_dir is not None,
        dataset=dataset,
        with_traces=True,
    )
    return result.report


def run_suite(
    suite: Suite | str | Path,
    agent: str | None = None,
    *,
    db: str | None = None,
    project_dir: Path | None = None,
    options: RunOptions | None = None,
    gates: str | Path | None = None,
    baseline: str | None = None,
    judge: str | None = None,
    gateway: bool = False,
    report_dir: Path | None = None,
    dataset: str | None = None,
) -> RunReport:
    """Synchronous twin of :func:`run_suite_async`."""
    reports: list[RunReport] = []

    async def run() -> None:
        # The report is handed out past asyncio.run, not returned through it: asyncio formats
        # the repr of its main task, result included, as it restores the Ctrl-C handler, and
        # the repr of a report with every attempt's trace takes seconds for a large run.
        reports.append(
            await run_suite_async(
                suite,
                agent,
                db=db,
                project_dir=project_dir,
                options=options,
                gates=gates,
                baseline=baseline,
                judge=judge,
                gateway=gateway,
                report_dir=report_dir,
                dataset=dataset,
            )
        )

    asyncio.run(run())
    return reports[0]
