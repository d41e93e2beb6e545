"""The runs list's figures from aggregate SQL: a filtered page of runs, trend points, gates.

Nothing here loads whole runs as records: counts and sums come from ``GROUP BY`` queries, the
gate of a listed run from a light read of its attempts' verdicts and metrics (a few columns),
and a finished run's figures are cached in a dict on ``app.state`` (finished runs never change).
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, case, func, select

from seatrial.compare import (
    CaseOutcome,
    RunData,
    builtin_outcomes,
    evaluate_gates,
    flaky_cases,
    stored_gates,
    wilson_interval,
)
from seatrial.errors import InputError
from seatrial.record import RunInfo
from seatrial.store import Store
from seatrial.store._schema import attempts, run_cases, run_tags, runs
from seatrial.web._runs_models import RunRow, TrendPoint

TREND_RUNS = 200
"""The trend chart shows at most this many runs: the newest that match the filters."""


@dataclass(frozen=True)
class RunFilter:
    """What the runs list is narrowed to; every field is optional."""

    suite: str | None = None
    agent: str | None = None
    tag: str | None = None
    since: str | None = None
    """First day shown, ``YYYY-MM-DD`` (UTC)."""
    until: str | None = None
    """Last day shown, ``YYYY-MM-DD`` (UTC), inclusive."""

    def query(self) -> Select[Any]:
        """``SELECT runs.*`` narrowed to the filter, newest first."""
        query = select(runs).order_by(runs.c.started_at.desc(), runs.c.run_id.desc())
        if self.suite:
            query = query.where(runs.c.suite == self.suite)
        if self.agent:
            query = query.where(runs.c.agent == self.agent)
        if self.tag:
            # IN, not a correlated EXISTS: SQLite would scan the tag's index once per run.
            tagged = select(run_tags.c.run_id).where(run_tags.c.tag == self.tag)
            query = query.where(runs.c.run_id.in_(tagged))
        if self.since:
            query = query.where(runs.c.started_at >= _day("since", self.since))
        if self.until:
            query = query.where(runs.c.started_at < _day("until", self.until) + 86_400)
        return query

    def params(self) -> dict[str, str]:
        """The filters that are set, as query parameters (for paging links)."""
        named = {"suite": self.suite, "agent": self.agent, "tag": self.tag}
        named |= {"since": self.since, "until": self.until}
        return {name: value for name, value in named.items() if value}


def _day(name: str, text: str) -> float:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise InputError(f"{name}={text!r} is not a date; write it as YYYY-MM-DD") from None
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp()


def _cache(state: Any, name: str) -> dict[str, Any]:
    found: dict[str, Any] | None = getattr(state, name, None)
    if found is None:
        found = {}
        setattr(state, name, found)
    return found


def _infos(store: Store, query: Select[Any]) -> list[RunInfo]:
    with store.engine.connect() as connection:
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
    return [RunInfo.model_validate({**row, "tags": tags[row["run_id"]]}) for row in rows]


def _sums(store: Store, run_ids: Sequence[str]) -> dict[str, tuple[int, int, int, float]]:
    """run id -> (attempts, passes, tokens, cost), summed by the database."""
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
    with store.engine.connect() as connection:
        return {
            str(r[0]): (int(r[1]), int(r[2] or 0), int(r[3] or 0), float(r[4] or 0.0))
            for r in connection.execute(query)
        }


def light_runs(store: Store, infos: Sequence[RunInfo]) -> dict[str, RunData]:
    """Runs as :class:`RunData` read from a few columns (no replies, assertions or traces)."""
    ids = [info.run_id for info in infos]
    if not ids:
        return {}
    by_case: dict[str, dict[str, list[Any]]] = {run_id: defaultdict(list) for run_id in ids}
    defined: dict[str, list[Any]] = {run_id: [] for run_id in ids}
    with store.engine.connect() as connection:
        for row in connection.execute(
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
            .where(attempts.c.run_id.in_(ids))
            .order_by(attempts.c.run_id, attempts.c.case_id, attempts.c.attempt)
        ):
            by_case[row[0]][row[1]].append(row)
        for run_id, definition in connection.execute(
            select(run_cases.c.run_id, run_cases.c.definition)
            .where(run_cases.c.run_id.in_(ids))
            .order_by(run_cases.c.run_id, run_cases.c.position)
        ):
            defined[run_id].append(definition)
    return {
        info.run_id: _run_data(info, by_case[info.run_id], defined[info.run_id]) for info in infos
    }


def _run_data(info: RunInfo, by_case: dict[str, list[Any]], defined: list[Any]) -> RunData:
    cases = []
    for definition in defined:
        rows = by_case.pop(definition["id"], [])
        if rows:
            cases.append(
                _outcome(
                    definition["id"],
                    rows,
                    str(definition.get("name") or ""),
                    str(definition.get("category") or ""),
                    str(definition.get("priority") or "P1"),
                    tuple(definition.get("tags") or ()),
                )
            )
    for case_id, rows in by_case.items():  # attempts of cases the run did not list
        cases.append(_outcome(case_id, rows, "", "", "P1", ()))
    return RunData(info=info, cases=tuple(cases))


def _outcome(
    case_id: str, rows: list[Any], name: str, category: str, priority: str, tags: tuple[str, ...]
) -> CaseOutcome:
    return CaseOutcome(
        case_id=case_id,
        name=name,
        category=category,
        priority=priority,
        tags=tags,
        verdicts=tuple(r[2] for r in rows),
        failure_types=tuple(r[3] for r in rows),
        wall_time_ms=tuple(float(r[4]) for r in rows),
        tokens=tuple(int(r[5]) for r in rows),
        cost_usd=tuple(float(r[6]) for r in rows),
        tool_calls=tuple(int(r[7]) for r in rows),
    )


def gate_met(store: Store, run: RunData, baselines: dict[str, RunData]) -> bool:
    """Whether the run meets its gates, as ``seatrial report`` decides it."""
    gates = stored_gates(run.info.settings)
    if any(gate.max_regression is not None for gate in gates):
        flaky = flaky_cases(store, run)  # history matters only to regression gates
    else:
        flaky = flaky_cases(None, run)
    baseline_id = (run.info.settings.get("baseline") or {}).get("run_id")
    outcomes = builtin_outcomes(run) + evaluate_gates(
        run, gates, baselines.get(baseline_id or ""), flaky
    )
    return all(outcome.verdict != "unmet" for outcome in outcomes)


def _gates(store: Store, state: Any, infos: Sequence[RunInfo]) -> dict[str, bool]:
    """Gate status of each run; finished runs' are cached in ``state``."""
    cache = _cache(state, "runs_gate_cache")
    missing = [info for info in infos if info.run_id not in cache]
    loaded = light_runs(store, missing)
    wanted = {(i.settings.get("baseline") or {}).get("run_id") for i in missing} - {None, ""}
    if wanted:
        found = _infos(store, select(runs).where(runs.c.run_id.in_(sorted(wanted))))
        baselines = light_runs(store, found)
    else:
        baselines = {}
    found_gates = {info.run_id: cache[info.run_id] for info in infos if info.run_id in cache}
    for info in missing:
        met = gate_met(store, loaded[info.run_id], baselines)
        found_gates[info.run_id] = met
        if info.status == "finished":
            cache[info.run_id] = met
    return found_gates


def runs_page(
    store: Store, state: Any, run_filter: RunFilter, page: int, size: int
) -> tuple[list[RunRow], bool]:
    """One page of the filtered runs (1-based) and whether a next page exists."""
    if page < 1:
        raise InputError(f"page={page} is not a page; pages start at 1")
    infos = _infos(store, run_filter.query().limit(size + 1).offset((page - 1) * size))
    has_next = len(infos) > size
    infos = infos[:size]
    sums = _sums(store, [info.run_id for info in infos])
    gates = _gates(store, state, infos)
    rows = []
    for info in infos:
        n, passes, _, cost = sums.get(info.run_id, (0, 0, 0, 0.0))
        interval = wilson_interval(passes, n)
        rows.append(
            RunRow(
                run_id=info.run_id,
                suite=info.suite,
                agent=info.agent,
                tags=info.tags,
                status=info.status,
                started_at=info.started_at,
                finished_at=info.finished_at,
                attempts=n,
                passed=passes,
                pass_rate=interval.estimate,
                pass_rate_low=interval.low,
                pass_rate_high=interval.high,
                gate_met=gates[info.run_id],
                cost_usd=cost,
            )
        )
    return rows, has_next


def trend(store: Store, state: Any, run_filter: RunFilter) -> list[TrendPoint]:
    """Pass rate, p95 wall time, tokens and cost of the newest filtered runs, oldest first."""
    query = run_filter.query().with_only_columns(runs.c.run_id, runs.c.started_at, runs.c.status)
    with store.engine.connect() as connection:
        heads = connection.execute(query.limit(TREND_RUNS)).all()
    cache = _cache(state, "runs_trend_cache")
    missing = [str(h[0]) for h in heads if h[0] not in cache]
    sums = _sums(store, missing)
    p95 = _p95(store, missing)
    points = []
    for run_id, started_at, status in reversed(heads):
        point = cache.get(run_id)
        if point is None:
            n, passes, tokens, cost = sums.get(run_id, (0, 0, 0, 0.0))
            point = TrendPoint(
                run_id=run_id,
                started_at=started_at,
                attempts=n,
                pass_rate=passes / n if n else None,
                p95_ms=p95.get(run_id),
                tokens=tokens,
                cost_usd=cost,
            )
            if status == "finished":
                cache[run_id] = point
        points.append(point)
    return points


def _p95(store: Store, run_ids: Sequence[str]) -> dict[str, float]:
    """run id -> 95th percentile of its attempts' wall time, linear between closest ranks
    (numpy's default, as :func:`seatrial.compare.percentile`). The database ranks the
    times and returns only the two around the percentile's rank, not every attempt."""
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
    with store.engine.connect() as connection:
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
