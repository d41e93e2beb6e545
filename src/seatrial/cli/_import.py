"""``seatrial import tau-bench`` and ``seatrial import tau2``: others' benchmark runs, stored."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._context import open_store, speak_reader_language, store_settings
from seatrial.cli._options import Db, ImportTags, Lang
from seatrial.i18n import N_, ngettext
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.dataset import ImportResult
    from seatrial.store import Store

import_app = typer.Typer(
    help=N_(
        "Store a published benchmark run (tau-bench, tau2-bench) as a Seatrial run, to "
        "report, compare and gate it like Seatrial's own."
    ),
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")

FileArgument = Annotated[
    Path, typer.Argument(metavar="FILE", help=N_("The results file, as the benchmark wrote it."))
]


def _import(
    importer: Callable[..., ImportResult],
    file: Path,
    tags: list[str] | None,
    db: str | None,
    lang: str | None,
) -> None:
    config = store_settings()
    speak_reader_language(lang, config)
    with open_store(db, config) as store:
        result = importer(file, store, tags=tags or ())
        for warning in result.warnings:
            err_console.print(
                _("[yellow]warning:[/] {message}").format(message=escape(warning)),
                highlight=False,
            )
        _summary(store, result)


def _summary(store: Store, result: ImportResult) -> None:
    from seatrial.report import build_report, print_summary

    print_summary(build_report(store, result.run_id), console)
    cases = ngettext("{count} case", "{count} cases", result.cases)
    attempts = ngettext("{count} attempt", "{count} attempts", result.attempts)
    console.print(
        _(
            "imported {cases}, {attempts}\n"
            "run id: [bold]{run_id}[/]\n"
            "see it:     seatrial report {run_id}\n"
            "compare it: seatrial compare BASELINE {run_id}"
        ).format(
            cases=cases.format(count=result.cases),
            attempts=attempts.format(count=result.attempts),
            run_id=result.run_id,
        ),
        highlight=False,
    )


@import_app.command("tau-bench")
@guarded
def tau_bench(file: FileArgument, tag: ImportTags = None, db: Db = None, lang: Lang = None) -> None:
    """Import a tau-bench results file (the JSON list run.py writes): one case per task, one
    attempt per trial, PASS when the reward is 1."""
    from seatrial.dataset import import_tau_bench

    _import(import_tau_bench, file, tag, db, lang)


@import_app.command("tau2")
@guarded
def tau2(file: FileArgument, tag: ImportTags = None, db: Db = None, lang: Lang = None) -> None:
    """Import a tau2-bench results file ({info, tasks, simulations}): one case per task, one
    attempt per simulation, PASS when the reward is 1."""
    from seatrial.dataset import import_tau2

    _import(import_tau2, file, tag, db, lang)
