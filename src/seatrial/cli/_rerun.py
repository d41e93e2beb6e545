"""``seatrial rerun``: re-run a stored attempt from its snapshot and diff the trajectories.

``seatrial replay`` is its old name, kept hidden for one release: "replay" also names the
gateway's cassette mode and the ``replay:`` agent, so the command got a word of its own.
"""

from __future__ import annotations

import functools
import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from seatrial.cli._app import app, console, err_console, guarded
from seatrial.cli._context import open_store, project, speak_reader_language
from seatrial.cli._options import Db, Lang, TextOrJson, chosen_format
from seatrial.i18n import N_, ngettext
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.run import RerunResult


def _verdict(verdict: str, failure_type: str | None) -> str:
    from seatrial.record import failure_type_word, verdict_word

    if not failure_type:
        return verdict_word(verdict)
    return _("{verdict} ({failure_type})").format(
        verdict=verdict_word(verdict), failure_type=failure_type_word(failure_type)
    )


def _print_text(result: RerunResult, agent: str) -> None:
    from seatrial.compare import header_of, render_terminal

    how = (
        _("model answers from the cassette {cassette}").format(cassette=result.cassette)
        if result.mode == "cassette"
        else _("live")
    )
    console.print(
        _("rerun of {attempt} ({how})").format(attempt=escape(str(result.source)), how=escape(how))
    )
    if result.changes:
        console.print(_("changed since the snapshot:"))
        for change in result.changes:
            console.print(f"  {escape(change.line())}")
    else:
        console.print(_("nothing changed since the snapshot"))
    for note in result.notes:
        console.print(_("[yellow]note:[/] {note}").format(note=escape(note)))
    console.print(_("new run: {run_id} (tag replay)").format(run_id=result.run_id))
    stored, replayed = result.stored, result.replayed
    console.print(
        _("verdict: {stored} -> {replayed}").format(
            stored=_verdict(stored.verdict, stored.failure_type),
            replayed=_verdict(replayed.verdict, replayed.failure_type),
        )
    )
    if result.reproduced:
        steps = len(result.diff.rows)
        console.print(
            ngettext(
                "[green]reproduced[/]: the trajectory is identical ({n} step)",
                "[green]reproduced[/]: the trajectory is identical ({n} steps)",
                steps,
            ).format(n=steps)
        )
    else:
        console.print(
            render_terminal(result.diff, header_of(stored, agent), header_of(replayed, agent))
        )
        if result.mismatch:
            console.print(_("gateway: {mismatch}").format(mismatch=escape(result.mismatch)))
    if result.live:
        if replayed.verdict == "PASS":
            console.print(_("[green]live: the new attempt passes[/]"))
        else:
            console.print(
                _("[red]live: the new attempt does not pass[/] ({reason})").format(
                    reason=escape(replayed.reason)
                )
            )


@app.command()
@guarded
def rerun(
    attempt: Annotated[
        str,
        typer.Argument(
            metavar="ATTEMPT",
            help=N_(
                "RUN:CASE or RUN:CASE#N (RUN: id, unique prefix, tag or `latest`; default N: "
                "the first attempt that did not pass)."
            ),
        ),
    ],
    live: Annotated[
        bool,
        typer.Option(
            "--live", help=N_("Run the current agent against the live models (no cassette).")
        ),
    ] = False,
    format: TextOrJson = "text",
    db: Db = None,
    lang: Lang = None,
) -> None:
    """Re-run a stored attempt from its snapshot as a new run and diff it with the stored one.

    With a recorded cassette the gateway serves the stored model answers. Exit 0 when the
    trajectory is reproduced (with --live: when the new attempt passes), 1 when it diverged
    (or did not pass), 2 on a bad reference or an agent that cannot be resolved.
    """
    from seatrial._execute import rerun_attempt

    chosen_format(format)
    config = project()
    speak_reader_language(lang, config)
    with open_store(db, config) as store:
        result = rerun_attempt(store, attempt, config=config, live=live)
        agent = store.get_run(result.source.run_id).agent
    if format == "json":
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        _print_text(result, agent)
    raise typer.Exit(result.exit_code)


@app.command("replay", hidden=True)
@functools.wraps(rerun)
def replay(*args: Any, **kwargs: Any) -> None:
    err_console.print(
        _("note: `seatrial replay` is now `seatrial rerun`; the old name goes in a later release")
    )
    rerun(*args, **kwargs)
