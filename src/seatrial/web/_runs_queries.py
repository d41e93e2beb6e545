"""The runs list's figures from the store's aggregate queries: a filtered page of runs, trend
points, gates.

Nothing here loads whole runs as records: counts and sums come from ``GROUP BY`` queries, the
gate of a listed run from a light read of its attempts' verdicts and metrics (a few columns),
and a finished run's figures are cached in a dict on ``app.state`` (finished runs never change).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from seatrial.compare import (
    CaseHead,
    RunData,
    run_data,
    run_meets_gates,
    stored_baseline_id,
    wilson_interval,
)
from seatrial.errors import InputError
from seatrial.i18n import gettext as _
from seatrial.record import RunInfo
from seatrial.store import (
    RunQuery,
    RunTotals,
    Store,
    attempt_figures,
    case_definitions,
    run_heads,
    run_totals,
    runs_by_id,
    runs_matching,
    wall_time_p95,
)
from seatrial.web._runs_models import RunRow, TrendPoint

TREND_RUNS = 200
"""The trend chart shows at most this many runs: the newest that match the filters."""

_NO_ATTEMPTS = RunTotals(attempts=0, passes=0, tokens=0, cost_usd=0.0)


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

    def query(self) -> RunQuery:
        """The store's query for the filter; InputError when a day is not a date."""
        return RunQuery(
            suite=self.suite or None,
            agent=self.agent or None,
            tag=self.tag or None,
            started_from=_day("since", self.since) if self.since else None,
            started_before=_day("until", self.until) + 86_400 if self.until else None,
        )

    def params(self) -> dict[str, str]:
        """The filters that are set, as query parameters (for paging links)."""
        named = {"suite": self.suite, "agent": self.agent, "tag": self.tag}
        named |= {"since": self.since, "until": self.until}
        return {name: value for name, value in named.items() if value}


def _day(name: str, text: str) -> float:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise InputError(
            _("{name}={text} is not a date; write it as YYYY-MM-DD").format(
                name=name, text=repr(text)
            )
        ) from None
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp()


def _cache(state: Any, name: str) -> dict[str, Any]:
    found: dict[str, Any] | None = getattr(state, name, None)
    if found is None:
        found = {}
        setattr(state, name, found)
    return found


def light_runs(store: Store, infos: Sequence[RunInfo]) -> dict[str, RunData]:
    """Runs as :class:`RunData` read from a few columns (no replies, assertions or traces)."""
    ids = [info.run_id for info in infos]
    if not ids:
        return {}
    figures = attempt_figures(store, ids)
    defined = case_definitions(store, ids)
    return {
        info.run_id: run_data(
            info,
            (CaseHead.from_definition(d) for d in defined[info.run_id]),
            figures[info.run_id],
        )
        for info in infos
    }


def gate_met(store: Store, run: RunData, baselines: dict[str, RunData]) -> bool:
    """Whether the run meets its gates, as ``seatrial report`` decides it."""
    baseline = baselines.get(stored_baseline_id(run.info.settings) or "")
    return run_meets_gates(run, baseline, store=store).passed


def _gates(store: Store, state: Any, infos: Sequence[RunInfo]) -> dict[str, bool]:
    """Gate status of each run; finished runs' are cached in ``state``."""
    cache = _cache(state, "runs_gate_cache")
    missing = [info for info in infos if info.run_id not in cache]
    loaded = light_runs(store, missing)
    wanted = {stored_baseline_id(i.settings) for i in missing} - {None, ""}
    if wanted:
        baselines = light_runs(store, runs_by_id(store, sorted(str(w) for w in wanted)))
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
        raise InputError(_("page={page} is not a page; pages start at 1").format(page=page))
    infos = runs_matching(store, run_filter.query(), size + 1, (page - 1) * size)
    has_next = len(infos) > size
    infos = infos[:size]
    sums = run_totals(store, [info.run_id for info in infos])
    gates = _gates(store, state, infos)
    rows = []
    for info in infos:
        n, passes, _tokens, cost = sums.get(info.run_id, _NO_ATTEMPTS)
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
    heads = run_heads(store, run_filter.query(), TREND_RUNS)
    cache = _cache(state, "runs_trend_cache")
    missing = [head.run_id for head in heads if head.run_id not in cache]
    sums = run_totals(store, missing)
    p95 = wall_time_p95(store, missing)
    points = []
    for run_id, started_at, status in reversed(heads):
        point = cache.get(run_id)
        if point is None:
            n, passes, tokens, cost = sums.get(run_id, _NO_ATTEMPTS)
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
