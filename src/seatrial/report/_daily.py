"""The daily report: the day's runs, their pass rates against each suite's previous run, the
cases that newly fail, the day's failures clustered, and what the day's model calls cost.

Built from the store's named queries and :func:`seatrial.dataset.cluster_failures` (imported
from the lazy :mod:`seatrial.dataset`, which never reaches the gateway from here). Rendered as
Markdown and HTML by :mod:`seatrial.report._daily_render`.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from seatrial.compare import newcombe_difference, verdict_of_repeats
from seatrial.record import RunInfo, Verdict
from seatrial.store import RunQuery, Store, previous_run_id, run_totals, runs_matching

if TYPE_CHECKING:
    from seatrial.dataset import FailureCluster

DAILY_RUN_LIMIT = 500
"""Most runs one daily report reads (newest first); a day with more says so."""

SPEND_PURPOSES = ("agent", "judge", "generation")
"""Ledger purposes, in the order the report lists them."""


@dataclass(frozen=True)
class NewFailure:
    """A case that failed in a run of the day and passed in its suite's previous run."""

    case_id: str
    verdict: Verdict
    """Its verdict over the repeats of the day's run (FAIL or ERROR)."""
    failure_types: tuple[str, ...]
    """The failure types of its failed attempts, most frequent first."""


@dataclass(frozen=True)
class DailyRun:
    """One run of the day with its figures and its suite's previous run."""

    info: RunInfo
    attempts: int
    passes: int
    cost_usd: float
    """What the run's attempts cost (their traces' ``seatrial.cost_usd``)."""
    previous_id: str | None
    """The suite's run started just before this one (any day); None for a suite's first."""
    previous_pass_rate: float | None
    new_failures: tuple[NewFailure, ...]
    previous_attempts: int = 0
    """Attempts of the previous run (0 without one)."""
    previous_passes: int = 0
    """Passed attempts of the previous run."""

    @property
    def pass_rate(self) -> float | None:
        """Share of attempts that passed; None without attempts."""
        return self.passes / self.attempts if self.attempts else None

    @property
    def delta(self) -> float | None:
        """Pass rate minus the previous run's; None when either is missing."""
        if self.pass_rate is None or self.previous_pass_rate is None:
            return None
        return self.pass_rate - self.previous_pass_rate

    @property
    def beyond_noise(self) -> bool | None:
        """Whether the change against the previous run is more than noise: the 95% Newcombe
        interval of the difference lies wholly above or below zero. None without a change."""
        if self.delta is None or not self.previous_attempts:
            return None
        change = newcombe_difference(
            self.previous_passes, self.previous_attempts, self.passes, self.attempts
        )
        return change.low > 0 or change.high < 0


@dataclass(frozen=True)
class DailyReport:
    """Everything ``seatrial report daily`` and the dashboard's /daily page show for one day."""

    day: dt.date
    start: dt.datetime
    """The day's first instant, in the report's time zone."""
    runs: list[DailyRun]
    """The runs started that day, by suite then start time."""
    clusters: list[FailureCluster]
    """The day's failed attempts, clustered; the largest first."""
    spend: dict[str, float] = field(default_factory=dict)
    """US dollars per ledger purpose (agent, judge, generation) over the day's runs."""
    truncated: bool = False
    """More than :data:`DAILY_RUN_LIMIT` runs started that day; the newest were read."""

    @property
    def attempts(self) -> int:
        """Attempts over the day's runs."""
        return sum(run.attempts for run in self.runs)

    @property
    def passes(self) -> int:
        """Passed attempts over the day's runs."""
        return sum(run.passes for run in self.runs)

    @property
    def suites(self) -> list[str]:
        """The suites that ran, in report order."""
        return list(dict.fromkeys(run.info.suite for run in self.runs))

    @property
    def cost_usd(self) -> float:
        """What the day's attempts cost."""
        return sum(run.cost_usd for run in self.runs)


def day_bounds(day: dt.date, tz: dt.tzinfo | None = None) -> tuple[dt.datetime, dt.datetime]:
    """The first instant of ``day`` and of the day after, in ``tz`` (None: the local zone)."""
    zone = tz or dt.datetime.now().astimezone().tzinfo
    start = dt.datetime.combine(day, dt.time(), tzinfo=zone)
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tzinfo=zone)
    return start, end


def daily_report(store: Store, day: dt.date, *, tz: dt.tzinfo | None = None) -> DailyReport:
    """The report over the runs started on ``day`` in ``tz`` (None: the local time zone)."""
    # Imported here: clustering loads scikit-learn, which only this report needs.
    from seatrial.dataset import cluster_failures

    start, end = day_bounds(day, tz)
    where = RunQuery(started_from=start.timestamp(), started_before=end.timestamp())
    infos = runs_matching(store, where, limit=DAILY_RUN_LIMIT + 1)
    truncated = len(infos) > DAILY_RUN_LIMIT
    infos = sorted(infos[:DAILY_RUN_LIMIT], key=lambda i: (i.suite, i.started_at, i.run_id))
    previous = {info.run_id: previous_run_id(store, info) for info in infos}
    ids = [info.run_id for info in infos]
    earlier = [run_id for run_id in previous.values() if run_id is not None]
    totals = run_totals(store, [*ids, *earlier])
    verdicts = store.case_verdict_counts([*ids, *earlier])
    runs = []
    for info in infos:
        before = previous[info.run_id]
        own = totals.get(info.run_id)
        prior = totals.get(before) if before is not None else None
        runs.append(
            DailyRun(
                info=info,
                attempts=own.attempts if own else 0,
                passes=own.passes if own else 0,
                cost_usd=own.cost_usd if own else 0.0,
                previous_id=before,
                previous_pass_rate=prior.passes / prior.attempts if prior else None,
                new_failures=(),
                previous_attempts=prior.attempts if prior else 0,
                previous_passes=prior.passes if prior else 0,
            )
        )
    clusters = cluster_failures(store, *ids) if ids else []
    failure_types = _failure_types(clusters)
    runs = [
        _with_new_failures(run, verdicts, failure_types.get(run.info.run_id, {})) for run in runs
    ]
    return DailyReport(
        day=day,
        start=start,
        runs=runs,
        clusters=clusters,
        spend=_spend(store, ids),
        truncated=truncated,
    )


def _failure_types(clusters: list[FailureCluster]) -> dict[str, dict[str, Counter[str]]]:
    """run -> case -> failure types of its failed attempts."""
    found: dict[str, dict[str, Counter[str]]] = {}
    for cluster in clusters:
        for member in cluster.members:
            by_case = found.setdefault(member.run_id, {})
            by_case.setdefault(member.case_id, Counter())[member.failure_type] += 1
    return found


def _with_new_failures(
    run: DailyRun,
    verdicts: dict[str, dict[str, dict[str, int]]],
    failure_types: dict[str, Counter[str]],
) -> DailyRun:
    if run.previous_id is None:
        return run
    before = {case: _verdict(counts) for case, counts in verdicts[run.previous_id].items()}
    now = {case: _verdict(counts) for case, counts in verdicts[run.info.run_id].items()}
    new = tuple(
        NewFailure(
            case_id=case,
            verdict=verdict,
            failure_types=tuple(t for t, _ in failure_types.get(case, Counter()).most_common()),
        )
        for case, verdict in sorted(now.items())
        if verdict in ("FAIL", "ERROR") and before.get(case) == "PASS"
    )
    return DailyRun(**{**run.__dict__, "new_failures": new})


def _verdict(counts: dict[str, int]) -> Verdict:
    verdicts: list[Verdict] = []
    for verdict, count in counts.items():
        verdicts += [cast(Verdict, verdict)] * count
    return verdict_of_repeats(verdicts)


def _spend(store: Store, run_ids: list[str]) -> dict[str, float]:
    spend = dict.fromkeys(SPEND_PURPOSES, 0.0)
    for run_id in run_ids:
        for purpose, usd in store.spend_by_purpose(run_id).items():
            spend[purpose] = spend.get(purpose, 0.0) + usd
    return spend
