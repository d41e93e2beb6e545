"""Probe drift: did the agent's behaviour move between two runs of the same suite?

For every case stored in both runs, and for all their attempts pooled, three distributions
are compared: tool sequences and verdicts by total variation distance, reply lengths by the
two-sample Kolmogorov-Smirnov statistic. Each distance lies in [0, 1]; one above its
threshold is an alarm naming the suite, the case and what moved.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from seatrial.compare._distance import ecdf, ks_gap, shares, total_variation
from seatrial.compare._flaky import REPLAY_TAG
from seatrial.errors import InputError, RunNotFound
from seatrial.i18n import N_
from seatrial.i18n import gettext as _
from seatrial.record import AttemptRecord, RunInfo
from seatrial.store import Store

Metric = Literal["tool_sequence", "reply_length", "verdict"]
METRICS: tuple[Metric, ...] = ("tool_sequence", "reply_length", "verdict")
"""The compared distributions, in report order."""


POOLED = "(all cases)"
"""The scope name of the pooled comparison."""

_SHOWN_SHIFTS = 3
METRIC_NAMES = {
    "tool_sequence": N_("tool sequence"),
    "reply_length": N_("reply length"),
    "verdict": N_("verdict"),
}
"""How each metric is named to a reader, in English (``_(name)`` reads it translated)."""


@dataclass(frozen=True)
class DriftThresholds:
    """How far each distribution may move before it raises an alarm."""

    tool_sequence: float = 0.2
    """Largest total variation distance of the tool-sequence distribution."""
    reply_length: float = 0.2
    """Largest Kolmogorov-Smirnov statistic of the reply lengths."""
    verdict: float = 0.2
    """Largest total variation distance of the verdict distribution."""
    min_attempts: int = 3
    """Fewer attempts than this on either side: the distance is shown, never an alarm."""

    def __post_init__(self) -> None:
        for metric in METRICS:
            value = getattr(self, metric)
            if not 0.0 <= value <= 1.0:
                raise InputError(
                    _("drift threshold {metric}={value} is not in [0, 1]").format(
                        metric=metric, value=value
                    )
                )
        if self.min_attempts < 1:
            raise InputError(_("min_attempts={n} must be at least 1").format(n=self.min_attempts))

    @classmethod
    def uniform(cls, max_distance: float, min_attempts: int = 3) -> DriftThresholds:
        """The same threshold for every metric."""
        return cls(max_distance, max_distance, max_distance, min_attempts)

    def limit(self, metric: Metric) -> float:
        """The threshold of one metric."""
        return float(getattr(self, metric))


@dataclass(frozen=True)
class Shift:
    """One entry of a distribution and its share in the baseline and in the run."""

    entry: str
    base: float
    run: float

    def describe(self) -> str:
        """``"read_file x2 100% -> 0%"``."""
        return f"{self.entry} {self.base:.0%} -> {self.run:.0%}"


@dataclass(frozen=True)
class MetricDrift:
    """One metric compared over one scope (a case, or all cases pooled)."""

    metric: Metric
    distance: float
    threshold: float
    base_attempts: int
    run_attempts: int
    shifts: tuple[Shift, ...] = ()
    """The entries that moved most, largest change first."""
    medians: tuple[float, float] | None = None
    """Reply lengths only: the baseline's and the run's median, in characters."""
    alarm: bool = False
    note: str = ""

    def describe(self) -> str:
        """What moved, in words: the most changed entries (and medians for lengths)."""
        parts = [shift.describe() for shift in self.shifts]
        if self.medians is not None:
            parts.append(
                _("median {base} -> {run} chars").format(
                    base=f"{self.medians[0]:g}", run=f"{self.medians[1]:g}"
                )
            )
        return _("; ").join(parts) or _("no change")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        data = asdict(self)
        data["shifts"] = [asdict(shift) for shift in self.shifts]
        data["medians"] = list(self.medians) if self.medians is not None else None
        data["detail"] = self.describe()
        return data


@dataclass(frozen=True)
class ScopeDrift:
    """The three metrics over one case, or over all cases pooled (``case_id == POOLED``)."""

    case_id: str
    metrics: tuple[MetricDrift, ...]

    @property
    def moved(self) -> bool:
        """True when any distance is above zero."""
        return any(m.distance > 0 for m in self.metrics)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"case_id": self.case_id, "metrics": [m.to_dict() for m in self.metrics]}


@dataclass(frozen=True)
class DriftAlarm:
    """A distance above its threshold, naming the probe, the case and what moved."""

    suite: str
    case_id: str
    metric: Metric
    distance: float
    threshold: float
    detail: str
    probe: bool = True
    """Whether the suite is flagged ``probe: true``; the message says "suite" otherwise."""

    def message(self) -> str:
        """``"probe workspace-agent, case read-missing-config: tool sequence moved 1.00
        (threshold 0.20): read_file x2 100% -> 0%; ..."``."""
        scope = (
            _("all cases pooled")
            if self.case_id == POOLED
            else _("case {case_id}").format(case_id=self.case_id)
        )
        kind = _("probe {suite}") if self.probe else _("suite {suite}")
        return _(
            "{where}, {scope}: {metric} moved {distance} (threshold {threshold}): {detail}"
        ).format(
            where=kind.format(suite=self.suite),
            scope=scope,
            metric=_(METRIC_NAMES[self.metric]),
            distance=f"{self.distance:.2f}",
            threshold=f"{self.threshold:.2f}",
            detail=self.detail,
        )


@dataclass(frozen=True)
class DriftReport:
    """A run compared with its baseline: pooled and per-case distances, and the alarms."""

    suite: str
    probe: bool
    """Whether the run's suite was flagged ``probe: true`` (read from the run's settings)."""
    agent: str
    run_id: str
    baseline_run_id: str
    baseline_reason: str
    """How the baseline was chosen: given, or the newest earlier finished run."""
    thresholds: DriftThresholds
    pooled: ScopeDrift | None
    cases: tuple[ScopeDrift, ...]
    only_in_run: tuple[str, ...] = ()
    only_in_baseline: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    alarms: tuple[DriftAlarm, ...] = field(default=())

    @property
    def alarmed(self) -> bool:
        """True when any distance exceeded its threshold."""
        return bool(self.alarms)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "suite": self.suite,
            "probe": self.probe,
            "agent": self.agent,
            "run_id": self.run_id,
            "baseline_run_id": self.baseline_run_id,
            "baseline_reason": self.baseline_reason,
            "thresholds": asdict(self.thresholds),
            "pooled": self.pooled.to_dict() if self.pooled is not None else None,
            "cases": [case.to_dict() for case in self.cases],
            "only_in_run": list(self.only_in_run),
            "only_in_baseline": list(self.only_in_baseline),
            "notes": list(self.notes),
            "alarms": [{**asdict(a), "message": a.message()} for a in self.alarms],
        }


def default_baseline(store: Store, run_id: str) -> tuple[str, str]:
    """The newest finished run of the same suite and agent that started before ``run_id``,
    skipping ``replay`` runs; returns its id and how it was chosen."""
    info = store.get_run(run_id)
    for other in store.list_runs(limit=None, suite=info.suite, agent=info.agent):
        earlier = (other.started_at, other.run_id) < (info.started_at, info.run_id)
        if earlier and other.status == "finished" and REPLAY_TAG not in other.tags:
            return other.run_id, _(
                "newest earlier finished run of suite {suite} and agent {agent}"
            ).format(suite=repr(info.suite), agent=repr(info.agent))
    raise RunNotFound(
        _(
            "run {run_id} has no baseline: no earlier finished run of suite {suite!r} with "
            "agent {agent!r} is stored (replay runs are skipped); give one with --baseline"
        ).format(run_id=run_id, suite=info.suite, agent=info.agent)
    )


def probe_drift(
    store: Store,
    run_id: str,
    baseline_run_id: str | None = None,
    *,
    max_distance: float = 0.2,
    thresholds: DriftThresholds | None = None,
) -> DriftReport:
    """Compare a run's behaviour with its baseline's (the default baseline when None).

    ``thresholds`` wins over ``max_distance``, which sets the same limit for every metric.
    """
    limits = thresholds or DriftThresholds.uniform(max_distance)
    info = store.get_run(run_id)
    if baseline_run_id is None:
        baseline_run_id, reason = default_baseline(store, run_id)
    else:
        reason = _("given")
    if baseline_run_id == run_id:
        raise InputError(
            _("run {run_id} cannot be its own baseline; give an earlier run").format(run_id=run_id)
        )
    base_info = store.get_run(baseline_run_id)
    base = _by_case(store.attempts(baseline_run_id, with_traces=True))
    run = _by_case(store.attempts(run_id, with_traces=True))
    common = [case_id for case_id in run if case_id in base]
    cases = tuple(ScopeDrift(c, _compare(base[c], run[c], limits)) for c in common)
    pooled = None
    if common:
        pooled_base = [a for c in common for a in base[c]]
        pooled_run = [a for c in common for a in run[c]]
        pooled = ScopeDrift(POOLED, _compare(pooled_base, pooled_run, limits))
    probe = info.settings.probe
    alarms = tuple(
        DriftAlarm(
            info.suite, scope.case_id, m.metric, m.distance, m.threshold, m.describe(), probe
        )
        for scope in ([pooled] if pooled else []) + list(cases)
        for m in scope.metrics
        if m.alarm
    )
    return DriftReport(
        suite=info.suite,
        probe=probe,
        agent=info.agent,
        run_id=run_id,
        baseline_run_id=baseline_run_id,
        baseline_reason=reason,
        thresholds=limits,
        pooled=pooled,
        cases=cases,
        only_in_run=tuple(c for c in run if c not in base),
        only_in_baseline=tuple(c for c in base if c not in run),
        notes=tuple(_notes(info, base_info, common, (pooled, *cases), limits)),
        alarms=alarms,
    )


def _notes(
    info: RunInfo,
    base: RunInfo,
    common: list[str],
    scopes: tuple[ScopeDrift | None, ...],
    limits: DriftThresholds,
) -> Iterable[str]:
    if base.suite != info.suite:
        yield _("the baseline ran suite {baseline}, not {run}").format(
            baseline=repr(base.suite), run=repr(info.suite)
        )
    if base.agent != info.agent:
        yield _("the baseline ran agent {baseline}, not {run}").format(
            baseline=repr(base.agent), run=repr(info.agent)
        )
    if not common:
        yield _("no case was stored in both runs: nothing to compare")
    compared = [scope for scope in scopes if scope is not None]
    thin = [scope for scope in compared if any(m.note for m in scope.metrics)]
    if thin:
        yield _(
            "{thin} of {compared} comparisons rest on fewer than {min_attempts} attempts on one "
            "side: shown, but they raise no alarm; run probes with repeats (e.g. 5) for "
            "per-case drift"
        ).format(thin=len(thin), compared=len(compared), min_attempts=limits.min_attempts)


def _by_case(records: list[AttemptRecord]) -> dict[str, list[AttemptRecord]]:
    grouped: dict[str, list[AttemptRecord]] = {}
    for record in records:
        grouped.setdefault(record.case_id, []).append(record)
    return grouped


def tool_sequence(record: AttemptRecord) -> str:
    """An attempt's tool names in order, repeats folded: ``"list_directory,read_file x8"``."""
    names = [call.name for call in record.trace.tool_calls()] if record.trace else []
    parts: list[str] = []
    index = 0
    while index < len(names):
        same = 1
        while index + same < len(names) and names[index + same] == names[index]:
            same += 1
        parts.append(names[index] + (f" x{same}" if same > 1 else ""))
        index += same
    return ",".join(parts) or "(no tool call)"


def _compare(
    base: list[AttemptRecord], run: list[AttemptRecord], limits: DriftThresholds
) -> tuple[MetricDrift, ...]:
    sequences = _categorical(
        "tool_sequence", [tool_sequence(a) for a in base], [tool_sequence(a) for a in run]
    )
    verdicts = _categorical("verdict", [a.verdict for a in base], [a.verdict for a in run])
    lengths = _lengths([len(a.response) for a in base], [len(a.response) for a in run])
    return tuple(_judge(m, limits) for m in (sequences, lengths, verdicts))


def _judge(drift: MetricDrift, limits: DriftThresholds) -> MetricDrift:
    threshold = limits.limit(drift.metric)
    enough = min(drift.base_attempts, drift.run_attempts) >= limits.min_attempts
    # A hair of slack: 1/5 computed as a float sum must not exceed a written 0.2.
    exceeds = drift.distance > threshold + 1e-9
    note = (
        ""
        if enough
        else _("too few attempts to alarm (fewer than {min_attempts})").format(
            min_attempts=limits.min_attempts
        )
    )
    return replace(drift, threshold=threshold, alarm=exceeds and enough, note=note)


def _categorical(metric: Metric, base: list[str], run: list[str]) -> MetricDrift:
    p, q = shares(base), shares(run)
    shifts = sorted(
        (Shift(k, p.get(k, 0.0), q.get(k, 0.0)) for k in p.keys() | q.keys()),
        key=lambda s: (-abs(s.run - s.base), s.entry),
    )
    moved = tuple(s for s in shifts if s.base != s.run)[:_SHOWN_SHIFTS]
    return MetricDrift(metric, total_variation(base, run), 0.0, len(base), len(run), moved)


def _lengths(base: list[int], run: list[int]) -> MetricDrift:
    a, b = sorted(base), sorted(run)
    distance, at = ks_gap(a, b)
    shifts: tuple[Shift, ...] = ()
    if distance > 0:
        entry = _("replies <= {length} chars").format(length=f"{at:g}")
        shifts = (Shift(entry, ecdf(a, at), ecdf(b, at)),)
    medians = (float(statistics.median(a)), float(statistics.median(b)))
    return MetricDrift("reply_length", distance, 0.0, len(a), len(b), shifts, medians)
