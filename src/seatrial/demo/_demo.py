"""``seatrial demo``: a real incident end to end, offline, in under a minute."""

from __future__ import annotations

import asyncio
from importlib.resources import files
from pathlib import Path

from rich.console import Console

from seatrial._execute import SuiteRun, execute_suite_async
from seatrial.config import load_config, resolve_db_url
from seatrial.i18n import gettext as _
from seatrial.record import failure_type_word
from seatrial.report import RunReport, print_summary, trajectory_lines
from seatrial.run import RunOptions
from seatrial.store import Store

PROJECT = Path(str(files("seatrial.demo") / "project"))
SUITE = PROJECT / "suites" / "workspace.yaml"
EXPECTED_V2_FAILURES = {
    "read-missing-config": "loop",
    "missing-then-example": "loop",
    "once-grant-second-write": "permission_violation",
}
"""What v2 must fail, and why. Anything else failing means the demo itself broke."""


async def _run_version(version: str, store: Store, report_dir: Path | None = None) -> SuiteRun:
    """One version through the front door, as ``seatrial run`` runs it: the demo project's
    configuration, the caller's store, the report files in ``report_dir`` (none without)."""
    return await execute_suite_async(
        SUITE,
        f"python:seatrial.demo.agents:{version}",
        config=load_config(PROJECT),
        options=RunOptions(tags=["demo", version]),
        store=store,
        report_dir=report_dir,
        write_report_files=report_dir is not None,
        with_traces=True,
    )


async def _run(version: str, store: Store) -> str:
    """One version's run into ``store``, no report files; its run id (the diff tests run
    the demo this way)."""
    return (await _run_version(version, store)).run_id


def _explain(report: RunReport, console: Console) -> None:
    for case in report.cases:
        if case.verdict == "PASS":
            continue
        record = next(a for a in case.attempts if a.verdict != "PASS")
        failure = failure_type_word(record.failure_type or "")
        console.print(f"[bold]{case.case_id}[/] [red]{failure}[/]", highlight=False)
        for line in trajectory_lines(record):
            console.print(line, markup=False, highlight=False)


def _as_expected(v1: RunReport, v2: RunReport) -> bool:
    failed = {c.case_id: c.attempts[0].failure_type for c in v2.cases if c.verdict != "PASS"}
    return v1.gate.passed and not v2.gate.passed and failed == EXPECTED_V2_FAILURES


def run_demo(
    console: Console, db_url: str | None = None, report_dir: Path = Path("seatrial-report")
) -> bool:
    """Run v1 and v2 of the demo agent; True when v1 passes and v2 fails exactly as it should.

    Printed in the reader's language (:func:`seatrial.i18n.set_language`)."""
    config = load_config(Path.cwd())
    console.print(
        _("[bold]Seatrial demo[/]: a workspace agent before and after a model change") + "\n"
    )
    with Store.open(resolve_db_url(db_url, config), project_dir=config.project_dir) as store:
        reports = {}
        for version in ("v1", "v2"):
            run = asyncio.run(_run_version(version, store, report_dir / version))
            reports[version] = run.report
            print_summary(reports[version], console)
            console.print()
    console.print(_("[bold]Why v2 fails[/] (its trajectory, read off the trace):"))
    _explain(reports["v2"], console)
    ok = _as_expected(reports["v1"], reports["v2"])
    console.print(
        "\n"
        + _(
            "reports in {folder}/v1 and {folder}/v2; "
            "`seatrial runs` lists both, `seatrial report latest` renders v2."
        ).format(folder=report_dir),
        highlight=False,
    )
    if not ok:
        console.print(_("[red]the demo did not behave as designed (see above)[/]"))
    return ok
