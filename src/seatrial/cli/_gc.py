"""``seatrial gc``: delete old runs, keeping baselines, tagged, golden-set and running runs."""

from __future__ import annotations

import datetime as dt
import time
from typing import Annotated

import typer

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import open_store
from seatrial.cli._options import Db
from seatrial.i18n import N_, counted

_SHOWN = 20


@app.command()
@guarded
def gc(
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than",
            help=N_(
                "Delete runs that ended longer ago than this: a number and s, m, h, d or w "
                "(90d, 12h, 2w)."
            ),
        ),
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help=N_("Say what would be deleted; delete nothing."))
    ] = False,
    db: Db = None,
) -> None:
    """Delete old runs with their attempts and traces; keep what is still needed.

    Kept whatever their age: runs still running, runs with a tag, runs of a golden set, the
    newest finished run of each suite and agent, and the baselines of the runs that stay.
    """
    from seatrial.compare import REPLAY_TAG
    from seatrial.store import parse_age

    cutoff = time.time() - parse_age(older_than)
    with open_store(db) as store:
        done = store.collect_garbage(cutoff, dry_run=dry_run, ignore_tags=[REPLAY_TAG])
    deleted = done.deleted
    verb = "would delete" if dry_run else "deleted"
    when = dt.datetime.fromtimestamp(cutoff).strftime("%Y-%m-%d %H:%M")
    runs = counted(len(deleted), "run")
    console.print(f"{verb} {runs} that ended before {when}", highlight=False)
    for run in deleted[:_SHOWN] if not dry_run else deleted:
        ended = dt.datetime.fromtimestamp(run.finished_at or run.started_at)
        console.print(
            f"  {run.run_id}  {ended:%Y-%m-%d}  {run.suite}  {run.agent}  {run.status}",
            markup=False,
            highlight=False,
        )
    if not dry_run and len(deleted) > _SHOWN:
        console.print(f"  ... and {len(deleted) - _SHOWN} more", highlight=False)
    kept = done.kept_by_reason()
    if kept:
        reasons = ", ".join(f"{count} {reason}" for reason, count in kept.items())
        console.print(f"kept {sum(kept.values())} old runs: {reasons}", highlight=False)
