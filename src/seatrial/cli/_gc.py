"""``seatrial gc``: delete old runs, keeping baselines, tagged, golden-set and running runs."""

from __future__ import annotations

import datetime as dt
import time
from typing import Annotated

import typer

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import open_store, speak_reader_language, store_settings
from seatrial.cli._options import Db, Lang
from seatrial.i18n import N_, ngettext, pgettext
from seatrial.i18n import gettext as _

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
    lang: Lang = None,
) -> None:
    """Delete old runs with their attempts and traces; keep what is still needed.

    Kept whatever their age: runs still running, runs with a tag, runs of a golden set, the
    newest finished run of each suite and agent, and the baselines of the runs that stay.
    """
    from seatrial.compare import REPLAY_TAG
    from seatrial.store import parse_age

    config = store_settings()
    speak_reader_language(lang, config)
    cutoff = time.time() - parse_age(older_than)
    with open_store(db, config) as store:
        done = store.collect_garbage(cutoff, dry_run=dry_run, ignore_tags=[REPLAY_TAG])
    deleted = done.deleted
    when = dt.datetime.fromtimestamp(cutoff).strftime("%Y-%m-%d %H:%M")
    if dry_run:
        headline = ngettext(
            "would delete {count} run that ended before {when}",
            "would delete {count} runs that ended before {when}",
            len(deleted),
        )
    else:
        headline = ngettext(
            "deleted {count} run that ended before {when}",
            "deleted {count} runs that ended before {when}",
            len(deleted),
        )
    console.print(headline.format(count=len(deleted), when=when), highlight=False)
    statuses = {
        "running": pgettext("run", "running"),
        "finished": pgettext("run", "finished"),
        "interrupted": pgettext("run", "interrupted"),
    }
    for run in deleted[:_SHOWN] if not dry_run else deleted:
        ended = dt.datetime.fromtimestamp(run.finished_at or run.started_at)
        status = statuses.get(run.status, run.status)
        console.print(
            f"  {run.run_id}  {ended:%Y-%m-%d}  {run.suite}  {run.agent}  {status}",
            markup=False,
            highlight=False,
        )
    if not dry_run and len(deleted) > _SHOWN:
        console.print(
            _("  ... and {count} more").format(count=len(deleted) - _SHOWN), highlight=False
        )
    kept = done.kept_by_reason()
    if kept:
        reasons = pgettext("list separator", ", ").join(
            _kept(reason).format(count=count) for reason, count in kept.items()
        )
        count = sum(kept.values())
        console.print(
            ngettext(
                "kept {count} old run: {reasons}", "kept {count} old runs: {reasons}", count
            ).format(count=count, reasons=reasons),
            highlight=False,
        )


def _kept(reason: str) -> str:
    """Why old runs are kept, with a ``{count}`` placeholder, in the reader's language."""
    reasons = {
        "running": pgettext("kept runs", "{count} running"),
        "tagged": pgettext("kept runs", "{count} tagged"),
        "golden set": pgettext("kept runs", "{count} golden set"),
        "newest": pgettext("kept runs", "{count} newest"),
        "baseline": pgettext("kept runs", "{count} baseline"),
    }
    return reasons.get(reason, "{count} " + reason)
