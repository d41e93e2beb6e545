"""``seatrial --version``, ``seatrial validate``, ``runs``, ``report`` (a run's report, the
``--format github`` comment, and ``seatrial report daily``), ``init`` and ``demo``.

``daily`` is a reserved word of ``seatrial report``: ``seatrial report daily`` writes the daily
report, never a run tagged ``daily`` (name such a run by its id).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._context import open_store, project, speak_reader_language, store_settings
from seatrial.cli._options import (
    AgentFilter,
    Db,
    DemoReportDir,
    Lang,
    ReportBaseline,
    ReportFormat,
    ReportOutput,
    RunsLimit,
    SuiteFilter,
    TagFilter,
    TextOrJson,
    chosen_format,
)
from seatrial.errors import InputError
from seatrial.i18n import N_

if TYPE_CHECKING:
    from seatrial.config import Config
    from seatrial.store import Store


def _print_version(asked: bool) -> None:
    if asked:
        from seatrial._version import __version__

        # untranslated: the command's name and its version
        console.print(f"seatrial {__version__}", markup=False, highlight=False)
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_print_version,
            help=N_("Print Seatrial's version and exit."),
        ),
    ] = False,
) -> None:
    """The options of ``seatrial`` itself, before a command."""


@app.command()
@guarded
def validate(
    paths: Annotated[
        list[Path], typer.Argument(metavar="PATH...", help=N_("Suite files to check."))
    ],
    lang: Lang = None,
) -> None:
    """Check suite files without running anything; exit 2 listing every problem."""
    from seatrial.case import suite_files_in, validate_paths
    from seatrial.cli._help import configured_language
    from seatrial.i18n import gettext, language_of, ngettext, reader_language, set_language

    # seatrial.yaml's `language:` read as help reads it, not with the project's settings:
    # loading those loads what a run needs, and validate stays light (tests/cli/test_startup.py).
    written = configured_language(Path.cwd())
    set_language(reader_language(lang, language_of(written) if written else None))
    problems = validate_paths(paths)
    if problems:
        count = len(problems)
        heading = ngettext("[red]{count} problem:[/]", "[red]{count} problems:[/]", count)
        err_console.print(heading.format(count=count))
        for problem in problems:
            err_console.print(f"  {problem.said(gettext)}", markup=False)
        raise typer.Exit(2)
    # A folder stands for the suite files in it: count those, not the arguments.
    files = sum(len(suite_files_in(path)) if path.is_dir() else 1 for path in paths)
    valid = ngettext("[green]ok[/]: {count} file valid", "[green]ok[/]: {count} files valid", files)
    console.print(valid.format(count=files))


@app.command()
@guarded
def runs(
    limit: RunsLimit = 20,
    suite: SuiteFilter = None,
    agent: AgentFilter = None,
    tag: TagFilter = None,
    format: TextOrJson = "text",
    db: Db = None,
    lang: Lang = None,
) -> None:
    """List stored runs, newest first."""
    from seatrial.config import resolve_db_url
    from seatrial.i18n import gettext as _
    from seatrial.i18n import pgettext
    from seatrial.store import listed_runs

    chosen_format(format)
    settings = store_settings()
    speak_reader_language(lang, settings)
    infos = listed_runs(
        resolve_db_url(db, settings),
        settings.project_dir,
        limit=limit,
        suite=suite,
        agent=agent,
        tag=tag,
    )
    listed: list[dict[str, Any]] = []
    for info in infos:
        total = sum(info.verdicts.values())
        passed = info.verdicts.get("PASS", 0)
        listed.append(
            {
                "run_id": info.run_id,
                "started_at": info.started_at,
                "suite": info.suite,
                "agent": info.agent,
                "status": info.status,
                "attempts": total,
                "passed": passed,
                "pass_rate": passed / total if total else None,
                "tags": list(info.tags),
            }
        )
    if format == "json":
        typer.echo(json.dumps(listed, indent=2, ensure_ascii=False))
        return
    if not listed:
        console.print(_("no runs stored yet: try `seatrial demo`"))
        return
    table = Table(show_edge=False, pad_edge=False)
    table.add_column(pgettext("runs column", "run"), no_wrap=True)
    for column in (
        pgettext("runs column", "started"),
        pgettext("runs column", "suite"),
        pgettext("runs column", "agent"),
        pgettext("runs column", "status"),
        pgettext("runs column", "attempts"),
        pgettext("runs column", "pass rate"),
        pgettext("runs column", "tags"),
    ):
        table.add_column(column)
    status_words = {
        "running": pgettext("run", "running"),
        "finished": pgettext("run", "finished"),
        "interrupted": pgettext("run", "interrupted"),
    }
    for run in listed:
        started = dt.datetime.fromtimestamp(run["started_at"]).strftime("%Y-%m-%d %H:%M")
        rate = run["pass_rate"]
        table.add_row(
            escape(run["run_id"]),
            started,
            escape(run["suite"]),
            escape(run["agent"]),
            status_words.get(run["status"], run["status"]),
            str(run["attempts"]),
            "-" if rate is None else f"{rate:.0%}",
            escape(",".join(run["tags"])),
        )
    console.print(table)


@app.command()
@guarded
def report(
    run_id: Annotated[
        str,
        typer.Argument(
            metavar="RUN",
            help=N_("A run id, a unique prefix, `latest`, or a tag; `daily` for the daily report."),
        ),
    ],
    format: ReportFormat = "md",
    output: ReportOutput = None,
    date: Annotated[
        str | None,
        typer.Option(
            "--date", metavar="YYYY-MM-DD", help=N_("`daily` only: the day (local time); today.")
        ),
    ] = None,
    baseline: ReportBaseline = None,
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Render a stored run as JSON, JUnit XML, Markdown or a GitHub pull-request comment;
    `seatrial report daily` writes the daily report (Markdown and HTML) over the day's runs."""
    from seatrial.compare import resolve_run_ref
    from seatrial.i18n import gettext as _
    from seatrial.report import FORMATS, build_report, render

    if run_id == "daily":
        write_daily(date, output or Path("seatrial-report"), db, lang)
        return
    if date is not None:
        raise InputError(_("--date goes with `seatrial report daily`, not with a run"))
    chosen_format(format, (*FORMATS, "github"))
    if baseline is not None and format != "github":
        raise InputError(_("--baseline goes with --format github"))
    config = project()
    speak_reader_language(lang, config)
    with open_store(db, config) as store:
        found = resolve_run_ref(store, run_id)
        if format == "github":
            text = github_report(store, found, baseline, config)
        else:
            text = render(build_report(store, found, project_dir=config.project_dir), format)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        console.print(_("wrote {path}").format(path=output), highlight=False)


def _day(text: str | None) -> dt.date:
    from seatrial.i18n import gettext as _

    if text is None:
        return dt.date.today()
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InputError(
            _("--date {value} is not a date: write it as YYYY-MM-DD, e.g. 2026-03-31").format(
                value=repr(text)
            )
        ) from None


def write_daily(date: str | None, out: Path, db: str | None, lang: str | None = None) -> None:
    """Write the daily report over the runs started that day: pass rates and their change
    against each suite's previous run, new failures, failure clusters, cost; in the reader's
    language (``lang``: ``--lang``)."""
    from seatrial.i18n import gettext as _
    from seatrial.report import daily_headline, daily_report, write_daily_report

    config = project()
    speak_reader_language(lang, config)
    day = _day(date)
    with open_store(db, config) as store:
        report = daily_report(store, day)
    for path in write_daily_report(report, out):
        console.print(_("wrote {path}").format(path=path), highlight=False)
    console.print(daily_headline(report), highlight=False, markup=False)


def github_report(store: Store, run_id: str, baseline: str | None, config: Config) -> str:
    """``seatrial report RUN --format github``: the comment for one run, its regressions
    against ``baseline`` (a run ref; None: the baseline the run stored)."""
    from seatrial.compare import resolve_run_ref
    from seatrial.report import github_comment

    base_id = None
    if baseline is not None:
        base_id = resolve_run_ref(store, baseline, suite=store.get_run(run_id).suite)
    return github_comment(
        store,
        [(run_id, base_id)],
        dashboard_url=config.dashboard_address(),
        project_dir=config.project_dir,
    )


@app.command()
@guarded
def init(
    directory: Annotated[Path, typer.Argument(help=N_("Project folder to create or fill."))] = Path(
        "."
    ),
    lang: Lang = None,
) -> None:
    """Create a project: seatrial.yaml, an example suite, a fixture and an example agent."""
    from seatrial.demo import write_project
    from seatrial.i18n import current_language
    from seatrial.i18n import gettext as _

    speak_reader_language(lang, project())
    written = write_project(directory, current_language())
    for path in written:
        console.print(_("created {path}").format(path=path))
    console.print(
        _("next: {command}").format(
            command=f"cd {directory} && seatrial run suites/example.yaml --agent example"
        )
    )


@app.command()
@guarded
def demo(
    db: Db = None,
    report_dir: DemoReportDir = Path("seatrial-report"),
    lang: Lang = None,
) -> None:
    """A real incident, offline: v1 passes; v2 (a new model) loops and over-uses a write grant."""
    from seatrial.demo import run_demo

    speak_reader_language(lang, project())

    ok = run_demo(console, db_url=db, report_dir=report_dir)
    raise typer.Exit(0 if ok else 1)
