"""``seatrial cases stale``: cases that always pass (graduate) or never pass (review)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from seatrial.cli._app import app, cases_app, console, guarded
from seatrial.cli._context import open_store, project, speak_reader_language
from seatrial.cli._options import AgentFilter, Db, StaleSuite, TextOrJson, chosen_format
from seatrial.errors import RunNotFound
from seatrial.i18n import N_, ngettext, pgettext
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.compare import StaleCase, StaleReport


app.add_typer(cases_app, name="cases")


def _table(cases: tuple[StaleCase, ...], verdicts: bool) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    table.add_column(pgettext("stale column", "case"), no_wrap=True)
    table.add_column(pgettext("stale column", "runs"), justify="right")
    table.add_column(pgettext("stale column", "attempts"), justify="right")
    table.add_column(pgettext("stale column", "since run"), no_wrap=True)
    if verdicts:
        table.add_column(pgettext("stale column", "verdicts"), no_wrap=True)
    table.add_column(pgettext("stale column", "category"))
    table.add_column(pgettext("stale column", "name"))
    for case in cases:
        row = [escape(case.case_id), str(case.runs), str(case.attempts), case.oldest_run_id]
        if verdicts:
            row.append(", ".join(f"{v} {n}" for v, n in case.verdicts.items()))
        table.add_row(*row, escape(case.category), escape(case.name))
    return table


def _print(report: StaleReport) -> None:
    runs = len(report.run_ids)
    read = ngettext(
        "the last run read (finished runs, newest first, replays skipped)",
        "the last {count} runs read (finished runs, newest first, replays skipped)",
        runs,
    ).format(count=runs)
    headline = (
        _("suite [bold]{suite}[/], agent {agent}: {read}").format(
            suite=escape(report.suite), agent=escape(report.agent), read=read
        )
        if report.agent
        else _("suite [bold]{suite}[/], every agent: {read}").format(
            suite=escape(report.suite), read=read
        )
    )
    console.print(headline, highlight=False)
    console.print(
        "\n"
        + _(
            "[bold]graduate[/] ({count}): passed every attempt of every run they appear in; "
            "candidates to leave the golden set"
        ).format(count=len(report.graduate)),
        highlight=False,
    )
    if report.graduate:
        console.print(_table(report.graduate, verdicts=False))
    console.print(
        "\n"
        + _(
            "[bold]review[/] ({count}): never passed in these runs; fix the agent, or check the "
            "case asks for the right thing"
        ).format(count=len(report.review)),
        highlight=False,
    )
    if report.review:
        console.print(_table(report.review, verdicts=True))
    for note in report.notes:
        console.print(_("note: {note}").format(note=note), markup=False, highlight=False)


@cases_app.command()
@guarded
def stale(
    suite: StaleSuite = None,
    last: Annotated[int, typer.Option(min=1, help=N_("How many of the newest runs to read."))] = 20,
    agent: AgentFilter = None,
    format: TextOrJson = "text",
    db: Db = None,
) -> None:
    """List cases that passed every repeat of the last runs (graduate) or never passed
    (review)."""
    from seatrial.compare import stale_cases

    chosen_format(format)
    config = project()
    speak_reader_language(None, config)
    with open_store(db, config) as store:
        if suite is None:
            newest = store.list_runs(limit=1, agent=agent)
            if not newest:
                raise RunNotFound(
                    _(
                        "the store at {url} holds no runs yet; run a suite first "
                        "(`seatrial run SUITE`)"
                    ).format(url=store.url)
                )
            suite = newest[0].suite
        report = stale_cases(store, suite=suite, last=last, agent=agent)
    if format == "json":
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        _print(report)
