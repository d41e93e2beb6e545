"""Named queries over runs for lists and gates: a filtered page of run headers, per-run totals
and p95 wall time summed by the database, and the few attempt columns a run's gate needs.

Each query reads only the runs asked for, with aggregate SQL where it can: the runs list of a
store with 200,000 attempts must answer in well under 300 ms (see docs/performance.md).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import Select, case, func, select

from seatrial.i18n import gettext as _
from seatrial.record import RunInfo, Verdict
from seatrial.store import _codec as codec
from seatrial.store._reads import reading
from seatrial.store._schema import attempts, run_cases, run_tags, runs

if TYPE_CHECKING:
    from seatrial.store._store import Store


@dataclass(frozen=True)
class RunQuery:
    """Which runs a list shows; every field is optional, and the runs come newest first."""

    suite: str | None = None
    agent: str | None = None
    tag: str | None = None
    started_from: float | None = None
    """Unix time; runs started at or after it."""
    started_before: float | None = None
    """Unix time; runs started before it."""

    def _select(self) -> Select[Any]:
        query = select(runs).order_by(runs.c.started_at.desc(), runs.c.run_id.desc())
        if self.suite:
            query = query.where(runs.c.suite == self.suite)
        if self.agent:
            query = query.where(runs.c.agent == self.agent)
        if self.tag:
            # IN, not a correlated EXISTS: SQLite would scan the tag's index once per run.
            tagged = select(run_tags.c.run_id).where(run_tags.c.tag == self.tag)
            query = query.where(runs.c.run_id.in_(tagged))
        if self.started_from is not None:
            query = query.where(runs.c.started_at >= self.started_from)
        if self.started_before is not None:
            query = query.where(runs.c.started_at < self.started_before)
        return query


class RunHead(NamedTuple):
    """A run as a trend chart needs it."""

    run_id: str
    started_at: float
    status: str


class RunTotals(NamedTuple):
    """A run's attempts summed by the database."""

    attempts: int
    passes: int
    """Attempts whose verdict is PASS."""
    tokens: int
    """Input plus output tokens."""
    cost_usd: float


class AttemptFigures(NamedTuple):
    """One attempt's verdict and metrics, without its reply, assertions or trace."""

    run_id: str
    case_id: str
    verdict: Verdict
    failure_type: str | None
    wall_time_ms: float
    tokens: int
    """Input plus output tokens."""
    cost_usd: float
    tool_calls: int


def runs_matching(store: Store, where: RunQuery, limit: int, offset: int = 0) -> list[RunInfo]:
    """Headers (with tags) of the runs ``where`` selects, newest first: ``limit`` of them,
    skipping the first ``offset``."""
    return _infos(store, where._select().limit(limit).offset(offset))


def runs_by_id(store: Store, run_ids: Sequence[str]) -> list[RunInfo]:
    """Headers (with tags) of the runs among ``run_ids`` that exist, in no particular order."""
    if not run_ids:
        return []
    return _infos(store, select(runs).where(runs.c.run_id.in_(list(run_ids))))


def _infos(store: Store, query: Select[Any]) -> list[RunInfo]:
    with reading(store, _("list runs")) as connection:
        rows = connection.execute(query).mappings().all()
        ids = [row["run_id"] for row in rows]
        tags: dict[str, list[str]] = defaultdict(list)
        if ids:
            for run_id, tag in connection.execute(
                select(run_tags.c.run_id, run_tags.c.tag)
                .where(run_tags.c.run_id.in_(ids))
                .order_by(run_tags.c.run_id, run_tags.c.position)
            ):
                tags[run_id].append(tag)
    return [codec.run_info(row, tags[row["run_id"]]) for row in rows]


def run_heads(store: Store, where: RunQuery, limit: int) -> list[RunHead]:
    """Id, start time and status of the newest ``limit`` runs ``where`` selects, newest first."""
    query = where._select().with_only_columns(runs.c.run_id, runs.c.started_at, runs.c.status)
    with reading(store, _("list runs")) as connection:
        return [RunHead(*row) for row in connection.execute(query.limit(limit))]


def run_totals(store: Store, run_ids: Sequence[str]) -> dict[str, RunTotals]:
    """Totals of each run among ``run_ids`` that has attempts (a run without any is absent)."""
    if not run_ids:
        return {}
    query = (
        select(
            attempts.c.run_id,
            func.count(),
            func.sum(case((attempts.c.verdict == "PASS", 1), else_=0)),
            func.sum(attempts.c.input_tokens + attempts.c.output_tokens),
            func.sum(attempts.c.cost_usd),
        )
        .where(attempts.c.run_id.in_(list(run_ids)))
        .group_by(attempts.c.run_id)
    )
    with reading(store, _("sum the attempts of runs")) as connection:
        return {
            str(r[0]): RunTotals(int(r[1]), int(r[2] or 0), int(r[3] or 0), float(r[4] or 0.0))
            for r in connection.execute(query)
        }


def wall_time_p95(store: Store, run_ids: Sequence[str]) -> dict[str, float]:
    """run id -> 95th percentile of its attempts' wall time, linear between closest ranks
    (numpy's default, as :func:`seatrial.compare.percentile`); runs without attempts are
    absent. The database ranks the times and returns only the two around the percentile's
    rank, not every attempt."""
    if not run_ids:
        return {}
    ranked = (
        select(
            attempts.c.run_id,
            attempts.c.wall_time_ms,
            (
                func.row_number().over(
                    partition_by=attempts.c.run_id, order_by=attempts.c.wall_time_ms
                )
                - 1
            ).label("rank"),
            func.count().over(partition_by=attempts.c.run_id).label("n"),
        )
        .where(attempts.c.run_id.in_(list(run_ids)))
        .subquery()
    )
    low = (ranked.c.n - 1) * 95 // 100
    query = (
        select(ranked.c.run_id, ranked.c.rank, ranked.c.n, ranked.c.wall_time_ms)
        .where(ranked.c.rank >= low, ranked.c.rank <= low + 1)
        .order_by(ranked.c.run_id, ranked.c.rank)
    )
    around: dict[str, list[tuple[int, int, float]]] = defaultdict(list)
    with reading(store, _("rank the wall times of runs")) as connection:
        for run_id, rank, n, ms in connection.execute(query):
            around[run_id].append((int(rank), int(n), float(ms)))
    found = {}
    for run_id, rows in around.items():
        position = (rows[0][1] - 1) * 95 / 100
        first = math.floor(position)
        values = {rank: ms for rank, _, ms in rows}
        below = values[first]
        above = values.get(first + 1, below)
        found[run_id] = below + (position - first) * (above - below)
    return found


def attempt_figures(store: Store, run_ids: Sequence[str]) -> dict[str, list[AttemptFigures]]:
    """Each run's attempts as :class:`AttemptFigures`, by case id then attempt number.

    Every run of ``run_ids`` is a key, with an empty list when it has no attempts.
    """
    found: dict[str, list[AttemptFigures]] = {run_id: [] for run_id in run_ids}
    if not found:
        return found
    query = (
        select(
            attempts.c.run_id,
            attempts.c.case_id,
            attempts.c.verdict,
            attempts.c.failure_type,
            attempts.c.wall_time_ms,
            attempts.c.input_tokens + attempts.c.output_tokens,
            attempts.c.cost_usd,
            attempts.c.tool_calls,
        )
        .where(attempts.c.run_id.in_(list(found)))
        .order_by(attempts.c.run_id, attempts.c.case_id, attempts.c.attempt)
    )
    with reading(store, _("read the attempts of runs")) as connection:
        for row in connection.execute(query):
            found[row[0]].append(AttemptFigures._make(row))
    return found


def case_definitions(store: Store, run_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Each run's case definitions as stored (JSON objects, not validated), in suite order.

    Every run of ``run_ids`` is a key. Cheaper than :meth:`Store.run_cases` when only a few
    fields (id, name, category, priority, tags) are wanted.
    """
    found: dict[str, list[dict[str, Any]]] = {run_id: [] for run_id in run_ids}
    if not found:
        return found
    query = (
        select(run_cases.c.run_id, run_cases.c.definition)
        .where(run_cases.c.run_id.in_(list(found)))
        .order_by(run_cases.c.run_id, run_cases.c.position)
    )
    with reading(store, _("read the cases of runs")) as connection:
        for run_id, definition in connection.execute(query):
            found[run_id].append(definition)
    return found


def previous_run_id(store: Store, info: RunInfo) -> str | None:
    """The run of the same suite started just before ``info``'s (ties: the greater id)."""
    query = (
        select(runs.c.run_id)
        .where(runs.c.suite == info.suite, runs.c.run_id != info.run_id)
        .where(runs.c.started_at <= info.started_at)
        .order_by(runs.c.started_at.desc(), runs.c.run_id.desc())
        .limit(1)
    )
    with reading(
        store, _("find the run before {run_id}").format(run_id=repr(info.run_id))
    ) as connection:
        found = connection.execute(query).scalar()
    return None if found is None else str(found)
