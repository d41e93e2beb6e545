"""Deleting old runs (``seatrial gc``) while keeping every run something still needs.

A run older than the cutoff (it finished, or started when it never finished, before it) is
deleted with everything tied to it, unless it is kept for one of these reasons, checked in
this order:

- ``running``: its status is still ``running`` (going, or killed and waiting for
  ``--resume``);
- ``tagged``: it has a tag a person gave (``--tag``); tags Seatrial adds itself, such as
  ``replay``, are passed in ``ignore_tags`` and keep nothing;
- ``golden set``: it ran a golden set (``settings.dataset``, ``seatrial run --dataset``);
- ``newest``: it is the newest finished run of its suite and agent, which ``--baseline
  latest``, the default baseline of ``seatrial compare`` and the leaderboard fall back on;
- ``baseline``: a run that stays names it as its baseline (``settings.baseline``), and so
  on down the chain, so every report that stays can still compare.

Deleting a run deletes its tags, cases, attempts and their spans (foreign keys with ``ON
DELETE CASCADE``), its rows in the spend ledger (``model_calls``) and its review items still
open. Human labels, labelled review items, calibrations, golden sets and ingested
production traces are never deleted: they are not a run's, and outlive it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, func, select
from sqlalchemy.engine import Connection, Engine

from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.record import settings_key
from seatrial.store._engine import retry_lost_connections
from seatrial.store._schema import model_calls, review_items, run_tags, runs
from seatrial.store._translate import translated

KEEP_REASONS = ("running", "tagged", "golden set", "newest", "baseline")
"""Why an old run is kept, in the order the reasons are checked."""

DELETE_CHUNK = 100
"""Runs deleted per transaction: a long collection never holds one huge transaction."""

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_AGE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", re.IGNORECASE)


def parse_age(text: str) -> float:
    """Seconds in an age such as ``90d``, ``12h``, ``2w``, ``30m`` or ``45s``.

    :class:`InputError` (exit code 2) for anything else, saying what is accepted.
    """
    match = _AGE.fullmatch(text)
    if match is None or float(match.group(1)) <= 0:
        raise InputError(
            _(
                "--older-than {text} is not an age; write a positive number and a "
                "unit: s, m, h, d or w (for example 90d, 12h, 2w)"
            ).format(text=repr(text))
        )
    return float(match.group(1)) * _UNITS[match.group(2).lower()]


@dataclass(frozen=True)
class ExpiredRun:
    """A run older than the cutoff: deleted, or kept for a reason."""

    run_id: str
    suite: str
    agent: str
    status: str
    started_at: float
    finished_at: float | None
    kept: str | None
    """Why it is kept (one of :data:`KEEP_REASONS`); None when it is (or would be) deleted."""


@dataclass(frozen=True)
class GarbageCollection:
    """What ``collect_garbage`` did, or with ``dry_run`` would do."""

    cutoff: float
    """Unix time: runs that ended before it are old."""
    dry_run: bool
    runs: tuple[ExpiredRun, ...]
    """Every old run, oldest first, deleted ones and kept ones."""

    @property
    def deleted(self) -> list[ExpiredRun]:
        """The old runs deleted (or, in a dry run, that would be)."""
        return [run for run in self.runs if run.kept is None]

    def kept_by_reason(self) -> dict[str, int]:
        """How many old runs are kept, per reason (reasons with none are absent)."""
        kept = [run.kept for run in self.runs if run.kept is not None]
        return {reason: kept.count(reason) for reason in KEEP_REASONS if reason in kept}


class GcMixin:
    """The garbage collection of :class:`~seatrial.store.Store`."""

    # Set by Store.__init__; declared here so the methods type-check on their own.
    _engine: Engine
    _writer: Engine

    def collect_garbage(
        self, cutoff: float, *, dry_run: bool = False, ignore_tags: Iterable[str] = ()
    ) -> GarbageCollection:
        """Delete the runs that ended before ``cutoff`` (Unix time) except those kept.

        Runs are deleted :data:`DELETE_CHUNK` at a time, each chunk in one transaction, so
        an interrupted collection leaves whole runs, never half of one. ``dry_run`` deletes
        nothing. ``ignore_tags`` are tags that do not keep a run (the ``replay`` tag).
        """
        with (
            translated(self._engine.url, _("find the runs to delete")),
            self._engine.connect() as c,
        ):
            expired = _plan(c, cutoff, frozenset(ignore_tags))
        collection = GarbageCollection(cutoff, dry_run, tuple(expired))
        gone = [run.run_id for run in collection.deleted]
        if not dry_run:
            for first in range(0, len(gone), DELETE_CHUNK):
                self._delete_runs(gone[first : first + DELETE_CHUNK])
        return collection

    def _delete_runs(self, run_ids: Sequence[str]) -> None:
        action = _("delete {count} old runs").format(count=len(run_ids))

        def once() -> None:
            with self._writer.begin() as connection:
                connection.execute(delete(model_calls).where(model_calls.c.run_id.in_(run_ids)))
                connection.execute(
                    delete(review_items).where(
                        review_items.c.run_id.in_(run_ids), review_items.c.status == "open"
                    )
                )
                # Tags, cases, attempts and spans go with the run (ON DELETE CASCADE). A run
                # resumed since the plan was made is running again: it stays.
                connection.execute(
                    delete(runs).where(runs.c.run_id.in_(run_ids), runs.c.status != "running")
                )

        with translated(self._engine.url, action, note=_("runs deleted before this stay deleted")):
            retry_lost_connections(action, once)


def _plan(connection: Connection, cutoff: float, ignore_tags: frozenset[str]) -> list[ExpiredRun]:
    # A run that finished before the cutoff started before it: the started_at index
    # narrows the scan to old runs, whatever their number.
    ended = func.coalesce(runs.c.finished_at, runs.c.started_at)
    old_rows = connection.execute(
        select(
            runs.c.run_id,
            runs.c.suite,
            runs.c.agent,
            runs.c.status,
            runs.c.started_at,
            runs.c.finished_at,
            runs.c.settings[settings_key("dataset")].label("dataset"),
        )
        .where(runs.c.started_at < cutoff, ended < cutoff)
        .order_by(runs.c.started_at, runs.c.run_id)
    ).all()
    if not old_rows:
        return []
    tagged = _tagged(connection, [row.run_id for row in old_rows], ignore_tags)
    newest = _newest_finished(connection, {(row.suite, row.agent) for row in old_rows})
    reasons: dict[str, str | None] = {}
    for row in old_rows:
        reason: str | None = None
        if row.status == "running":
            reason = "running"
        elif row.run_id in tagged:
            reason = "tagged"
        elif row.dataset:
            reason = "golden set"
        elif row.run_id in newest:
            reason = "newest"
        reasons[row.run_id] = reason
    _keep_baselines(connection, reasons)
    return [
        ExpiredRun(
            row.run_id,
            row.suite,
            row.agent,
            row.status,
            row.started_at,
            row.finished_at,
            reasons[row.run_id],
        )
        for row in old_rows
    ]


def _tagged(connection: Connection, run_ids: list[str], ignore_tags: frozenset[str]) -> set[str]:
    found: set[str] = set()
    for first in range(0, len(run_ids), 500):
        query = select(run_tags.c.run_id).where(run_tags.c.run_id.in_(run_ids[first : first + 500]))
        if ignore_tags:
            query = query.where(run_tags.c.tag.not_in(sorted(ignore_tags)))
        found.update(connection.execute(query.distinct()).scalars())
    return found


def _newest_finished(connection: Connection, pairs: set[tuple[str, str]]) -> set[str]:
    """The newest finished run of each (suite, agent) among ``pairs`` (ties: greatest id)."""
    newest: set[str] = set()
    for suite, agent in sorted(pairs):
        run_id = connection.execute(
            select(runs.c.run_id)
            .where(runs.c.suite == suite, runs.c.agent == agent, runs.c.status == "finished")
            .order_by(runs.c.started_at.desc(), runs.c.run_id.desc())
            .limit(1)
        ).scalar()
        if run_id is not None:
            newest.add(str(run_id))
    return newest


def _keep_baselines(connection: Connection, reasons: dict[str, str | None]) -> None:
    """Mark as kept each old run that a staying run names as its baseline, transitively."""
    baseline = runs.c.settings[settings_key("baseline")]["run_id"].as_string()
    named: dict[str, str] = {
        str(run_id): str(base)
        for run_id, base in connection.execute(
            select(runs.c.run_id, baseline).where(and_(baseline.is_not(None), baseline != ""))
        )
    }
    # A run stays when it is not old, or old and kept; follow each one's baseline chain.
    pending: list[Any] = [run_id for run_id in named if reasons.get(run_id, "young") is not None]
    while pending:
        base = named.get(pending.pop())
        if base is not None and base in reasons and reasons[base] is None:
            reasons[base] = "baseline"
            pending.append(base)
