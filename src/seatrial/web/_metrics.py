"""``GET /metrics``: the latest run of each agent and suite, in Prometheus's text format.

A scrape reads the store through its named queries (``seatrial.store.latest_runs``,
``attempt_groups``, ``run_counts``): two small queries over ``runs`` and one ``GROUP BY`` over
the latest runs' attempts. Whether a run met its gates is worked out once per run, as the runs
list does (:func:`seatrial.web._runs_queries._gates`, cached on ``app.state``: a finished run
never changes), so repeated scrapes cost only the aggregate queries.

"Latest" is the newest finished run (by start time) of each (agent, suite); runs still running
or interrupted, and replays (``seatrial rerun``, tag ``replay``), are left out. Its figures are
gauges: they change, up or down, when a newer run finishes. The latency histogram is the run's
own too: read it as is (``histogram_quantile`` over its buckets), never through ``rate()``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Request, Response
from prometheus_client import Metric, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from seatrial.compare import REPLAY_TAG
from seatrial.store import (
    AttemptGroup,
    LatestRun,
    Store,
    attempt_groups,
    latest_runs,
    run_counts,
    runs_by_id,
)
from seatrial.web._deps import store_of
from seatrial.web._runs_queries import _gates

router = APIRouter()

LATENCY_BUCKETS_S = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
"""Upper bounds (seconds) of the attempt latency histogram's buckets; +Inf is added."""

RUN = ["agent", "suite"]
"""The labels of every figure of a latest run."""


class StoreCollector(Collector):
    """Reads the store at each scrape; ``state`` keeps the gate verdicts already worked out."""

    def __init__(self, store: Store, state: Any) -> None:
        self._store = store
        self._state = state

    def collect(self) -> Iterator[Metric]:
        """The latest runs' figures and the stored run counts."""
        latest = latest_runs(self._store, skip_tag=REPLAY_TAG)
        groups = attempt_groups(self._store, [r.run_id for r in latest], LATENCY_BUCKETS_S)
        yield from _run_heads(latest, self._gates(latest))
        yield from _attempt_figures(latest, groups)
        counts = GaugeMetricFamily(
            "seatrial_runs",
            "Runs in the store (replays left out), by agent, suite and status.",
            labels=[*RUN, "status"],
        )
        for row in run_counts(self._store, skip_tag=REPLAY_TAG):
            counts.add_metric([row.agent, row.suite, row.status], row.runs)
        yield counts

    def _gates(self, latest: list[LatestRun]) -> dict[str, bool]:
        infos = runs_by_id(self._store, [r.run_id for r in latest])
        return _gates(self._store, self._state, infos)


def _run_heads(latest: list[LatestRun], gates: dict[str, bool]) -> Iterator[Metric]:
    info = GaugeMetricFamily(
        "seatrial_run_info",
        "The latest finished run of each agent and suite (always 1; its id in run_id).",
        labels=[*RUN, "run_id"],
    )
    started = GaugeMetricFamily(
        "seatrial_run_start_time_seconds",
        "When the latest run started, Unix time.",
        labels=RUN,
    )
    met = GaugeMetricFamily(
        "seatrial_run_gates_met",
        "1 when the latest run met its gates (as seatrial report decides), else 0.",
        labels=RUN,
    )
    for run in latest:
        info.add_metric([run.agent, run.suite, run.run_id], 1)
        started.add_metric([run.agent, run.suite], run.started_at)
        if run.run_id in gates:
            met.add_metric([run.agent, run.suite], 1 if gates[run.run_id] else 0)
    yield from (info, started, met)


def _attempt_figures(latest: list[LatestRun], groups: list[AttemptGroup]) -> Iterator[Metric]:
    by_run: dict[str, list[AttemptGroup]] = defaultdict(list)
    for group in groups:
        by_run[group.run_id].append(group)
    families = _Families()
    for run in latest:
        families.add(run, by_run.get(run.run_id, []))
    yield from families.all()


class _Families:
    """The per-attempt figures of the latest runs, one family per metric."""

    def __init__(self) -> None:
        self.pass_ratio = GaugeMetricFamily(
            "seatrial_run_pass_ratio",
            "Share of the latest run's attempts that passed (0 to 1).",
            labels=RUN,
        )
        self.category_pass_ratio = GaugeMetricFamily(
            "seatrial_run_category_pass_ratio",
            "Share of the latest run's attempts that passed, by case category (0 to 1).",
            labels=[*RUN, "category"],
        )
        self.attempts = GaugeMetricFamily(
            "seatrial_run_attempts",
            "Attempts of the latest run, by case category and verdict.",
            labels=[*RUN, "category", "verdict"],
        )
        self.failures = GaugeMetricFamily(
            "seatrial_run_failures",
            "Attempts of the latest run that failed or erred, by failure type.",
            labels=[*RUN, "failure_type"],
        )
        self.duration = HistogramMetricFamily(
            "seatrial_run_attempt_duration_seconds",
            "Wall time of the latest run's attempts, by case category.",
            labels=[*RUN, "category"],
        )
        self.tokens = GaugeMetricFamily(
            "seatrial_run_tokens",
            "Tokens the latest run's attempts used, by type (input or output).",
            labels=[*RUN, "type"],
        )
        self.cost = GaugeMetricFamily(
            "seatrial_run_cost_usd",
            "What the latest run's attempts cost, in US dollars.",
            labels=RUN,
        )

    def add(self, run: LatestRun, groups: list[AttemptGroup]) -> None:
        """Add one run's figures (a run without attempts has none but its zero sums)."""
        labels = [run.agent, run.suite]
        categories = sorted({g.category for g in groups})
        for category in categories:
            mine = [g for g in groups if g.category == category]
            self.category_pass_ratio.add_metric([*labels, category], _pass_ratio(mine))
            verdicts: dict[str, int] = defaultdict(int)
            for group in mine:
                verdicts[group.verdict] += group.attempts
            for verdict, count in sorted(verdicts.items()):
                self.attempts.add_metric([*labels, category, verdict], count)
            within = [sum(g.within[i] for g in mine) for i in range(len(LATENCY_BUCKETS_S))]
            total = sum(g.attempts for g in mine)
            buckets = [(_bound(b), n) for b, n in zip(LATENCY_BUCKETS_S, within, strict=True)]
            self.duration.add_metric(
                [*labels, category],
                [*buckets, ("+Inf", total)],
                sum(g.wall_time_s for g in mine),
            )
        if groups:
            self.pass_ratio.add_metric(labels, _pass_ratio(groups))
        failures: dict[str, int] = defaultdict(int)
        for group in groups:
            if group.failure_type is not None and group.verdict != "PASS":
                failures[group.failure_type] += group.attempts
        for failure_type, count in sorted(failures.items()):
            self.failures.add_metric([*labels, failure_type], count)
        self.tokens.add_metric([*labels, "input"], sum(g.input_tokens for g in groups))
        self.tokens.add_metric([*labels, "output"], sum(g.output_tokens for g in groups))
        self.cost.add_metric(labels, sum(g.cost_usd for g in groups))

    def all(self) -> Iterator[Metric]:
        """Every family, in a fixed order."""
        yield self.pass_ratio
        yield self.category_pass_ratio
        yield self.attempts
        yield self.failures
        yield self.duration
        yield self.tokens
        yield self.cost


def _pass_ratio(groups: list[AttemptGroup]) -> float:
    total = sum(g.attempts for g in groups)
    return sum(g.attempts for g in groups if g.verdict == "PASS") / total


def _bound(seconds: float) -> str:
    """A bucket's ``le`` as the client writes it (``0.5``, ``10.0``)."""
    return repr(float(seconds))


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """The latest runs' figures in Prometheus's text format (format 0.0.4)."""
    collector = StoreCollector(store_of(request), request.app.state)
    return Response(generate_latest(collector), media_type=CONTENT_TYPE_PLAIN_0_0_4)
