"""Scheduled jobs' claims: which server runs a schedule's due time, and how the job ended.

``seatrial serve`` runs the ``schedules:`` of seatrial.yaml; several servers may share one
store. Before a server runs a due time it claims it: one row of ``schedule_runs`` keyed by
``(schedule, due_at)``. The key makes the claim an INSERT only one writer can win, on SQLite
(the write lock serialises the inserts) and on PostgreSQL (the second insert waits for the
first to commit, then fails on the key), so a due time runs once however many servers are up.
The row then records the job's end: its status, the runs it started, its error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import and_, func, insert, select, update
from sqlalchemy.engine import Connection, RowMapping
from sqlalchemy.exc import IntegrityError

from seatrial.i18n import gettext as _
from seatrial.store._reads import reading
from seatrial.store._schema import schedule_runs
from seatrial.store._translate import translated

if TYPE_CHECKING:
    from seatrial.store._store import Store

ScheduleStatus = Literal["running", "ok", "failed", "error"]
"""How a claimed due time stands: ``running`` (claimed, the job not finished), ``ok`` (every
run met its gates, or the report was sent), ``failed`` (a run did not meet its gates),
``error`` (the job could not run or finish; ``error`` says why)."""

SCHEDULE_STATUSES: tuple[ScheduleStatus, ...] = ("running", "ok", "failed", "error")

_ERROR_CHARS = 2000
"""Longest error message kept; a longer one is cut."""


@dataclass(frozen=True)
class ScheduleRun:
    """One claimed due time of a schedule and what became of it."""

    schedule: str
    due_at: float
    """The due time, Unix seconds."""
    claimed_by: str
    """The server that claimed it, ``host:pid``."""
    claimed_at: float
    status: ScheduleStatus
    run_ids: tuple[str, ...]
    """The runs the job started, in order (none for the daily report)."""
    error: str | None
    finished_at: float | None


def claim_schedule(
    store: Store, schedule: str, due_at: float, *, claimed_by: str, now: float
) -> bool:
    """Claim ``schedule``'s due time for ``claimed_by``; True when this caller won it.

    False when another server claimed it first. A claim sent again by the same claimer (its
    connection was lost after the commit) is recognised as its own.
    """
    row = {
        "schedule": schedule,
        "due_at": due_at,
        "claimed_by": claimed_by,
        "claimed_at": now,
        "status": "running",
        "run_ids": [],
        "error": None,
        "finished_at": None,
    }

    def work(connection: Connection) -> None:
        connection.execute(insert(schedule_runs).values(**row))

    action = _("claim schedule {schedule}").format(schedule=repr(schedule))
    with translated(store.engine.url, action):
        try:
            store._transact(action, work)
            return True
        except IntegrityError:
            pass  # the key is taken: whose claim is it?
    return _claimer(store, schedule, due_at) == claimed_by


def finish_schedule(
    store: Store,
    schedule: str,
    due_at: float,
    *,
    status: ScheduleStatus,
    run_ids: Sequence[str] = (),
    error: str | None = None,
    now: float,
) -> None:
    """Record how the job of a claimed due time ended."""
    if status not in SCHEDULE_STATUSES or status == "running":
        raise ValueError(f"a finished job's status is ok, failed or error, not {status!r}")
    if error is not None and len(error) > _ERROR_CHARS:
        error = error[: _ERROR_CHARS - 3] + "..."
    values: dict[str, Any] = {
        "status": status,
        "run_ids": list(run_ids),
        "error": error,
        "finished_at": now,
    }
    key = and_(schedule_runs.c.schedule == schedule, schedule_runs.c.due_at == due_at)

    def work(connection: Connection) -> None:
        connection.execute(update(schedule_runs).where(key).values(**values))

    action = _("record the end of schedule {schedule}").format(schedule=repr(schedule))
    with translated(store.engine.url, action):
        store._transact(action, work)


def schedule_history(store: Store, schedule: str, *, limit: int = 20) -> list[ScheduleRun]:
    """``schedule``'s claimed due times, newest first, at most ``limit``."""
    query = (
        select(schedule_runs)
        .where(schedule_runs.c.schedule == schedule)
        .order_by(schedule_runs.c.due_at.desc())
        .limit(limit)
    )
    with reading(
        store, _("read the history of schedule {schedule}").format(schedule=repr(schedule))
    ) as connection:
        return [_record(row) for row in connection.execute(query).mappings()]


def latest_schedule_runs(store: Store) -> dict[str, ScheduleRun]:
    """Each schedule's newest claimed due time, by schedule name."""
    newest = (
        select(schedule_runs.c.schedule, func.max(schedule_runs.c.due_at).label("due_at"))
        .group_by(schedule_runs.c.schedule)
        .subquery()
    )
    query = select(schedule_runs).join(
        newest,
        and_(
            schedule_runs.c.schedule == newest.c.schedule,
            schedule_runs.c.due_at == newest.c.due_at,
        ),
    )
    with reading(store, _("read the schedules' last runs")) as connection:
        records = [_record(row) for row in connection.execute(query).mappings()]
    return {record.schedule: record for record in records}


def _claimer(store: Store, schedule: str, due_at: float) -> str | None:
    query = select(schedule_runs.c.claimed_by).where(
        schedule_runs.c.schedule == schedule, schedule_runs.c.due_at == due_at
    )
    with reading(
        store, _("read the claim of schedule {schedule}").format(schedule=repr(schedule))
    ) as connection:
        owner = connection.execute(query).scalar()
    return None if owner is None else str(owner)


def _record(row: RowMapping) -> ScheduleRun:
    return ScheduleRun(
        schedule=str(row["schedule"]),
        due_at=float(row["due_at"]),
        claimed_by=str(row["claimed_by"]),
        claimed_at=float(row["claimed_at"]),
        status=row["status"],
        run_ids=tuple(row["run_ids"] or ()),
        error=row["error"],
        finished_at=None if row["finished_at"] is None else float(row["finished_at"]),
    )
