"""``seatrial import tau-bench`` and ``seatrial import tau2``: others' benchmark runs, stored."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._context import open_store
from seatrial.cli._options import Db, ImportTags
from seatrial.i18n import N_, counted

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
    importer: Callable[..., ImportResult], file: Path, tags: list[str] | None, db: str | None
) -> None:
    with open_store(db) as store:
        result = importer(file, store, tags=tags or ())
        for warning in result.warnings:
            err_console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)
        _summary(store, result)


def _summary(store: Store, result: ImportResult) -> None:
    from seatrial.report import build_report, print_summary

    print_summary(build_report(store, result.run_id), console)
    console.print(
        f"imported {counted(result.cases, 'case')}, {counted(result.attempts, 'attempt')}\n"
        f"run id: [bold]{result.run_id}[/]\n"
        f"see it:     seatrial report {result.run_id}\n"
        f"compare it: seatrial compare BASELINE {result.run_id}",
        highlight=False,
    )


@import_app.command("tau-bench")
@guarded
def tau_bench(file: FileArgument, tag: ImportTags = None, db: Db = None) -> None:
    """Import a tau-bench results file (the JSON list run.py writes): one case per task, one
    attempt per trial, PASS when the reward is 1."""
    from seatrial.dataset import import_tau_bench

    _import(import_tau_bench, file, tag, db)


@import_app.command("tau2")
@guarded
def tau2(file: FileArgument, tag: ImportTags = None, db: Db = None) -> None:
    """Import a tau2-bench results file ({info, tasks, simulations}): one case per task, one
    attempt per simulation, PASS when the reward is 1."""
    from seatrial.dataset import import_tau2

    _import(import_tau2, file, tag, db)
