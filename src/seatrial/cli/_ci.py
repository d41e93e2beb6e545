"""``seatrial ci``: run a tier of seatrial.yaml ``tiers:`` against the target branch's
baseline (:func:`seatrial.tier.run_tier_async`), print each run, exit with the tier's code."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._context import project, speak_reader_language
from seatrial.cli._options import Agent, Db, Lang, ReportDir
from seatrial.cli._output import print_notice
from seatrial.i18n import N_

if TYPE_CHECKING:
    from seatrial.tier import TierRun


def _print_run(done: TierRun) -> None:
    from seatrial.i18n import gettext as _
    from seatrial.report import print_summary

    print_summary(done.run.report, console)
    if done.run.report_files:
        paths = ", ".join(str(p) for p in done.run.report_files)
        console.print(_("reports: {paths}").format(paths=paths))


@app.command()
@guarded
def ci(
    tier: Annotated[
        str,
        typer.Option(
            "--tier", "-t", metavar="NAME", help=N_("The tier of seatrial.yaml `tiers:`.")
        ),
    ],
    agent: Agent = None,
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            metavar="BRANCH",
            help=N_(
                "Compare with this branch's latest passing runs (default: the pull request's "
                "target branch, else the branch built, else main)."
            ),
        ),
    ] = None,
    db: Db = None,
    report_dir: ReportDir = None,
    comment: Annotated[
        Path | None,
        typer.Option(
            "--comment",
            metavar="FILE",
            help=N_("Write the pull-request comment (Markdown) for every run to FILE."),
        ),
    ] = None,
    lang: Lang = None,
) -> None:
    """Run a CI tier: its suites with its repeats and gates, each compared with the target
    branch's latest passing run. Exit 0 when every gate is met, 1 when not, 2 on bad input."""
    import asyncio

    from seatrial.i18n import gettext as _
    from seatrial.run import progress_for
    from seatrial.tier import run_tier_async

    config = project()
    speak_reader_language(lang, config)
    try:
        outcome = asyncio.run(
            run_tier_async(
                config,
                tier,
                agent=agent,
                base=base,
                db=db,
                report_dir=report_dir,
                comment=comment,
                progress=progress_for(console),
                on_notice=print_notice,
                on_run=_print_run,
            )
        )
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, or SIGTERM
        err_console.print(_("[yellow]interrupted:[/] finished attempts are stored"))
        raise typer.Exit(130) from None
    console.rule(_("tier {tier}").format(tier=tier))
    for done in outcome.runs:
        verdict = _("[green]gates met[/]") if done.run.passed else _("[bold red]gates not met[/]")
        against = (
            _("baseline {run_id}").format(run_id=done.baseline_id)
            if done.baseline_id
            else _("no baseline")
        )
        line = _("{suite}: {verdict} (run {run_id}, {against})").format(
            suite=escape(done.suite), verdict=verdict, run_id=done.run.run_id, against=against
        )
        console.print(line, highlight=False)
    if outcome.comment_file is not None:
        console.print(
            _("pull-request comment: {path}").format(path=outcome.comment_file), highlight=False
        )
    raise typer.Exit(outcome.exit_code)
