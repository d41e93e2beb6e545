"""Named queries behind ``/metrics``: the latest finished run of each agent and suite, its
attempts summed by the database, and how many runs the store holds.

A scrape reads the ``runs`` table (ranked through its ``(suite, agent, started_at)`` index)
and the attempts of the chosen runs only, grouped in SQL: no attempt is loaded into Python,
so a scrape costs the same on a store of ten runs and one of ten thousand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from sqlalchemy import and_, case, func, select

from seatrial.i18n import gettext as _
from seatrial.store._reads import reading
from seatrial.store._reads_boards import _untagged
from seatrial.store._schema import attempts, run_cases, runs

if TYPE_CHECKING:
    from seatrial.store._store import Store


class LatestRun(NamedTuple):
    """The latest finished run of one agent and suite."""

    run_id: str
    suite: str
    agent: str
    started_at: float
    finished_at: float | None


class AttemptGroup(NamedTuple):
    """The attempts of one run that share a category, verdict and failure type, summed."""

    run_id: str
    category: str
    """The case's category as the run stored it; ``""`` for none."""
    verdict: str
    failure_type: str | None
    attempts: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    wall_time_s: float
    """The attempts' wall times added up, in seconds."""
    within: tuple[int, ...]
    """For each bound asked for, the attempts whose wall time is at most that many seconds."""


class RunCount(NamedTuple):
    """How many stored runs one agent has of one suite with one status."""

    suite: str
    agent: str
    status: str
    runs: int


def latest_runs(store: Store, skip_tag: str | None = None) -> list[LatestRun]:
    """The newest finished run of each (suite, agent), by suite then agent; runs tagged
    ``skip_tag`` are left out. Of two runs started in the same instant, the smaller id (as
    the leaderboard's :func:`newest_run_per_agent`)."""
    rank = func.row_number().over(
        partition_by=(runs.c.suite, runs.c.agent),
        order_by=(runs.c.started_at.desc(), runs.c.run_id),
    )
    ranked = (
        select(
            runs.c.run_id,
            runs.c.suite,
            runs.c.agent,
            runs.c.started_at,
            runs.c.finished_at,
            rank.label("rank"),
        )
        .where(runs.c.status == "finished", *_untagged(skip_tag))
        .subquery()
    )
    query = (
        select(
            ranked.c.run_id,
            ranked.c.suite,
            ranked.c.agent,
            ranked.c.started_at,
            ranked.c.finished_at,
        )
        .where(ranked.c.rank == 1)
        .order_by(ranked.c.suite, ranked.c.agent)
    )
    with reading(store, _("find the latest run of each agent and suite")) as connection:
        return [LatestRun(*row) for row in connection.execute(query)]


def attempt_groups(
    store: Store, run_ids: Sequence[str], bounds_s: Sequence[float]
) -> list[AttemptGroup]:
    """The attempts of ``run_ids`` grouped by run, category, verdict and failure type, with
    counts, token and cost sums, and how many fall within each of ``bounds_s`` (seconds,
    inclusive: a histogram's cumulative buckets). Runs without attempts have no group."""
    if not run_ids:
        return []
    category = func.coalesce(run_cases.c.category, "").label("category")
    within = [
        func.sum(case((attempts.c.wall_time_ms <= bound * 1000.0, 1), else_=0))
        for bound in bounds_s
    ]
    ids = list(run_ids)
    # The runs are named on both sides, so each table is read through its own index on
    # run_id rather than the planner hashing every stored case.
    joined = attempts.outerjoin(
        run_cases,
        and_(
            run_cases.c.run_id == attempts.c.run_id,
            run_cases.c.case_id == attempts.c.case_id,
            run_cases.c.run_id.in_(ids),
        ),
    )
    query = (
        select(
            attempts.c.run_id,
            category,
            attempts.c.verdict,
            attempts.c.failure_type,
            func.count(),
            func.sum(attempts.c.input_tokens),
            func.sum(attempts.c.output_tokens),
            func.sum(attempts.c.cost_usd),
            func.sum(attempts.c.wall_time_ms),
            *within,
        )
        .select_from(joined)
        .where(attempts.c.run_id.in_(ids))
        .group_by(attempts.c.run_id, category, attempts.c.verdict, attempts.c.failure_type)
    )
    with reading(store, _("sum the attempts of the latest runs")) as connection:
        return [
            AttemptGroup(
                run_id=str(row[0]),
                category=str(row[1]),
                verdict=str(row[2]),
                failure_type=row[3],
                attempts=int(row[4]),
                input_tokens=int(row[5] or 0),
                output_tokens=int(row[6] or 0),
                cost_usd=float(row[7] or 0.0),
                wall_time_s=float(row[8] or 0.0) / 1000.0,
                within=tuple(int(count or 0) for count in row[9:]),
            )
            for row in connection.execute(query)
        ]


def run_counts(store: Store, skip_tag: str | None = None) -> list[RunCount]:
    """Stored runs per (suite, agent, status); runs tagged ``skip_tag`` are left out."""
    query = (
        select(runs.c.suite, runs.c.agent, runs.c.status, func.count())
        .where(*_untagged(skip_tag))
        .group_by(runs.c.suite, runs.c.agent, runs.c.status)
        .order_by(runs.c.suite, runs.c.agent, runs.c.status)
    )
    with reading(store, _("count the stored runs")) as connection:
        return [
            RunCount(str(s), str(a), str(st), int(n)) for s, a, st, n in connection.execute(query)
        ]
