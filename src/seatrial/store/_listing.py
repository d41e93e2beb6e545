"""The list of stored runs, read with the tables alone: the runs' rows, their tags, and their
attempts counted per verdict by the database.

:meth:`Store.list_runs` builds its run headers from these rows, and
:func:`listed_runs` gives them as they are, without the records' models, so ``seatrial runs``
starts without loading pydantic (docs/performance.md, "Starting the command").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from sqlalchemy import and_, exists, func, select
from sqlalchemy.engine import Connection, RowMapping

from seatrial.i18n import gettext as _
from seatrial.store._open import open_engine
from seatrial.store._schema import attempts, run_tags, runs
from seatrial.store._translate import translated


class ListedRun(NamedTuple):
    """A stored run as a list of runs shows it."""

    run_id: str
    started_at: float
    suite: str
    agent: str
    status: str
    """``running``, ``finished`` or ``interrupted``."""
    tags: list[str]
    verdicts: dict[str, int]
    """Its attempts per verdict (``PASS``, ``FAIL``, ``WARNING``, ``ERROR``)."""


def run_rows(
    connection: Connection,
    limit: int | None,
    suite: str | None = None,
    agent: str | None = None,
    tag: str | None = None,
) -> Sequence[RowMapping]:
    """The ``runs`` rows, newest first, optionally only those of a suite, an agent, or with
    a tag; at most ``limit`` of them (all when None)."""
    query = select(runs).order_by(runs.c.started_at.desc(), runs.c.run_id.desc())
    if suite is not None:
        query = query.where(runs.c.suite == suite)
    if agent is not None:
        query = query.where(runs.c.agent == agent)
    if tag is not None:
        query = query.where(
            exists().where(and_(run_tags.c.run_id == runs.c.run_id, run_tags.c.tag == tag))
        )
    if limit is not None:
        query = query.limit(limit)
    return connection.execute(query).mappings().all()


def tags_of(connection: Connection, run_ids: Sequence[str]) -> dict[str, list[str]]:
    """Each run's tags in the order they were given; a run without tags is absent."""
    if not run_ids:
        return {}
    found: dict[str, list[str]] = {}
    rows = connection.execute(
        select(run_tags.c.run_id, run_tags.c.tag)
        .where(run_tags.c.run_id.in_(list(run_ids)))
        .order_by(run_tags.c.run_id, run_tags.c.position)
    )
    for run_id, tag in rows:
        found.setdefault(run_id, []).append(tag)
    return found


def verdict_counts(connection: Connection, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """Attempts per verdict for each run, counted by the database."""
    counts: dict[str, dict[str, int]] = {run_id: {} for run_id in run_ids}
    if not run_ids:
        return counts
    rows = connection.execute(
        select(attempts.c.run_id, attempts.c.verdict, func.count())
        .where(attempts.c.run_id.in_(list(run_ids)))
        .group_by(attempts.c.run_id, attempts.c.verdict)
    ).all()
    for run_id, verdict, count in rows:
        counts[str(run_id)][str(verdict)] = int(count)
    return counts


def listed_runs(
    url: str | None,
    project_dir: Path | None = None,
    *,
    limit: int | None = 50,
    suite: str | None = None,
    agent: str | None = None,
    tag: str | None = None,
) -> list[ListedRun]:
    """The runs of the store ``url`` names (as :meth:`Store.open` takes it), newest first,
    filtered as :meth:`Store.list_runs` filters them, with their attempts per verdict.

    Raises:
        StoreError: the store cannot be opened or read.
    """
    engine = open_engine(url, project_dir)
    try:
        with translated(engine.url, _("list runs")), engine.connect() as connection:
            rows = run_rows(connection, limit, suite, agent, tag)
            ids = [str(row["run_id"]) for row in rows]
            tags = tags_of(connection, ids)
            counts = verdict_counts(connection, ids)
    finally:
        engine.dispose()
    return [_listed(row, tags.get(str(row["run_id"]), []), counts) for row in rows]


def _listed(row: RowMapping, tags: list[str], counts: dict[str, dict[str, int]]) -> ListedRun:
    run_id = str(row["run_id"])
    return ListedRun(
        run_id=run_id,
        started_at=float(row["started_at"]),
        suite=str(row["suite"]),
        agent=str(row["agent"]),
        status=str(row["status"]),
        tags=tags,
        verdicts=counts[run_id],
    )
