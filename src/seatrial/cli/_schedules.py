"""``seatrial schedules``: each schedule of seatrial.yaml with its next due time and its last
run, or one schedule's history."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import open_store, project, speak_reader_language
from seatrial.cli._options import Db, HistoryLimit, Lang, TextOrJson, chosen_format
from seatrial.errors import InputError
from seatrial.i18n import N_, pgettext
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.config import ScheduleConfig
    from seatrial.store import ScheduleRun


@app.command()
@guarded
def schedules(
    history: Annotated[
        str | None,
        typer.Option("--history", metavar="NAME", help=N_("Show this schedule's past due times.")),
    ] = None,
    limit: HistoryLimit = 20,
    format: TextOrJson = "text",
    db: Db = None,
    lang: Lang = None,
) -> None:
    """List the schedules `seatrial serve` runs: job, cron, next due time, last run and its
    result (ok, failed: a gate not met, error, running)."""
    import datetime as dt

    from seatrial.config import CONFIG_FILE
    from seatrial.store import latest_schedule_runs, schedule_history

    chosen_format(format)
    config = project()
    speak_reader_language(lang, config)
    if not config.schedules and format == "json":
        typer.echo("[]")
        return
    if not config.schedules:
        console.print(
            _("{file} has no `schedules:` (see docs/monitoring.md)").format(
                file=config.file or CONFIG_FILE
            ),
            highlight=False,
        )
        return
    named = {schedule.name: schedule for schedule in config.schedules}
    if history is not None and history not in named:
        raise InputError(
            _("--history {name}: no such schedule in {file}; known: {known}").format(
                name=history, file=config.file, known=", ".join(sorted(named)) or _("none")
            )
        )
    with open_store(db, config) as store:
        if history is not None:
            runs = schedule_history(store, history, limit=limit)
            if format == "json":
                typer.echo(json.dumps([asdict(run) for run in runs], indent=2, ensure_ascii=False))
            else:
                _print_history(named[history], runs)
            return
        latest = latest_schedule_runs(store)
    now = dt.datetime.now(dt.UTC)
    if format == "json":
        listed = [
            {
                "schedule": schedule.name,
                "job": schedule.job,
                "cron": schedule.cron,
                "timezone": schedule.timezone,
                "next_due_at": schedule.next_after(now).timestamp(),
                "last": asdict(latest[schedule.name]) if schedule.name in latest else None,
            }
            for schedule in config.schedules
        ]
        typer.echo(json.dumps(listed, indent=2, ensure_ascii=False))
        return
    table = Table(show_edge=False, pad_edge=False)
    for column in (
        pgettext("schedules column", "schedule"),
        pgettext("schedules column", "job"),
        "cron",
        pgettext("schedules column", "next due"),
        pgettext("schedules column", "last due"),
        pgettext("schedules column", "result"),
        pgettext("schedules column", "runs"),
    ):
        table.add_column(column)
    for schedule in config.schedules:
        last = latest.get(schedule.name)
        table.add_row(
            schedule.name,
            schedule.job,
            schedule.cron,
            schedule.shown(schedule.next_after(now)),
            *(_last_cells(schedule, last) if last else ("-", _("not run yet"), "")),
        )
    console.print(table, markup=False, highlight=False)


def _status(status: str) -> str:
    """A schedule run's status (ok, failed, error, running) in the reader's language."""
    words = {
        "ok": pgettext("schedule", "ok"),
        "failed": pgettext("schedule", "failed"),
        "error": pgettext("schedule", "error"),
        "running": pgettext("schedule", "running"),
    }
    return words.get(status, status)


def _last_cells(schedule: ScheduleConfig, run: ScheduleRun) -> tuple[str, str, str]:
    status = _status(run.status)
    result = _("{status}: {error}").format(status=status, error=run.error) if run.error else status
    return schedule.shown(run.due_at), result, " ".join(run.run_ids)


def _print_history(schedule: ScheduleConfig, runs: list[ScheduleRun]) -> None:
    if not runs:
        console.print(_("schedule {name}: not run yet").format(name=schedule.name), highlight=False)
        return
    table = Table(show_edge=False, pad_edge=False)
    for column in (
        pgettext("schedules column", "due"),
        pgettext("schedules column", "result"),
        pgettext("schedules column", "runs"),
        pgettext("schedules column", "server"),
    ):
        table.add_column(column)
    for run in runs:
        result, run_ids = _last_cells(schedule, run)[1:]
        table.add_row(schedule.shown(run.due_at), result, run_ids, run.claimed_by)
    console.print(table, markup=False, highlight=False)
