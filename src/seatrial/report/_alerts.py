"""What a run, a drift report and a daily report say in a chat alert.

Each builder turns something already decided into a :class:`seatrial.notify.Notification`:
the gate verdict (:func:`seatrial.compare.run_meets_gates`, read from the report), a pass-rate
drop that :func:`seatrial.compare.significant_drop` supports, the drift alarms of
:func:`seatrial.compare.probe_drift`, the daily report. Nothing here judges or sends;
:func:`seatrial.notify.notify` sends.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from seatrial.compare import load_run, newcombe_difference, significant_drop
from seatrial.errors import RunNotFound
from seatrial.notify import Notification
from seatrial.report._build import RunReport
from seatrial.report._daily_render import daily_headline
from seatrial.report._links import dashboard_link
from seatrial.store import Store

if TYPE_CHECKING:
    from seatrial.compare import DriftReport, RunData
    from seatrial.report._daily import DailyReport

_LISTED = 10
"""Most gates, cases or alarms one message lists; the link shows the rest."""
OVERALL = "task success"
"""How the overall pass rate is named in a ``metric_drop`` alert."""


@dataclass(frozen=True)
class PassRateDrop:
    """A pass rate (overall, or one category's) that fell against the baseline."""

    name: str
    """``task success``, or ``category NAME``."""
    base_passes: int
    base_attempts: int
    passes: int
    attempts: int
    significant: bool
    """The Newcombe interval of the change lies wholly below zero at the chosen confidence."""
    change_low: float
    change_high: float

    def line(self) -> str:
        """``task success 96% -> 93% (-3.0 pts, 95% interval -5.9 to -0.4)``."""
        base = self.base_passes / self.base_attempts
        now = self.passes / self.attempts
        return (
            f"**{self.name}** {base:.0%} -> {now:.0%} ({(now - base) * 100:+.1f} pts, interval "
            f"{self.change_low * 100:+.1f} to {self.change_high * 100:+.1f})"
        )


def _counts(run: RunData) -> dict[str, tuple[int, int]]:
    """Passes and attempts, overall (under :data:`OVERALL`) and per category."""
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case in run.cases:
        for key in (OVERALL, f"category {case.category}" if case.category else ""):
            if key:
                found[key][0] += case.passes
                found[key][1] += case.n
    return {key: (passes, n) for key, (passes, n) in found.items()}


def pass_rate_drops(base: RunData, run: RunData, confidence: float = 0.95) -> list[PassRateDrop]:
    """Every pass rate (overall, then per category present in both) that is lower than the
    baseline's, each saying whether the drop is significant at ``confidence``."""
    before, now = _counts(base), _counts(run)
    drops = []
    for name in sorted(now, key=lambda key: (key != OVERALL, key)):
        if name not in before:
            continue
        (base_s, base_n), (cand_s, cand_n) = before[name], now[name]
        if not (base_n and cand_n) or cand_s / cand_n >= base_s / base_n:
            continue
        change = newcombe_difference(base_s, base_n, cand_s, cand_n, confidence)
        significant = significant_drop(base_s, base_n, cand_s, cand_n, 0.0, confidence)
        drops.append(
            PassRateDrop(name, base_s, base_n, cand_s, cand_n, significant, change.low, change.high)
        )
    return drops


def _facts(report: RunReport) -> tuple[tuple[str, str], ...]:
    summary = report.summary
    return (
        ("suite", report.info.suite),
        ("agent", report.info.agent),
        ("run", report.info.run_id),
        ("pass rate", f"{summary.pass_rate:.0%} of {summary.attempts} attempts"),
    )


def _listed(lines: list[str]) -> list[str]:
    shown = [f"- {line}" for line in lines[:_LISTED]]
    if len(lines) > _LISTED:
        shown.append(f"- ... and {len(lines) - _LISTED} more")
    return shown


def gate_failed_notification(report: RunReport, dashboard_url: str | None = None) -> Notification:
    """The ``gate_failed`` alert: suite, agent, run, pass rate, the unmet gates and the
    regressed cases."""
    info = report.info
    lines = [
        f"Run `{info.run_id}` of **{info.suite}** (agent {info.agent}) did not meet its gates."
    ]
    lines += ["", "**Unmet gates**", *_listed(report.gate.reasons)]
    against = report.baseline or {}
    regressed = [str(case) for case in against.get("regressed") or []]
    if regressed:
        lines += ["", f"**Regressed since `{against.get('run_id')}`**", *_listed(regressed)]
    return Notification(
        event="gate_failed",
        title=f"Seatrial: {info.suite} failed its gates",
        text="\n".join(lines),
        link=dashboard_link(dashboard_url, f"/runs/{quote(info.run_id, safe='')}"),
        facts=_facts(report),
    )


def metric_drop_notification(
    report: RunReport, drops: list[PassRateDrop], dashboard_url: str | None = None
) -> Notification | None:
    """The ``metric_drop`` alert over the significant ``drops``; None when none is."""
    significant = [drop for drop in drops if drop.significant]
    if not significant:
        return None
    info = report.info
    baseline = (report.baseline or {}).get("run_id") or report.gate.baseline
    first = significant[0]
    headline = (
        f"{first.name} {first.base_passes / first.base_attempts:.0%} -> "
        f"{first.passes / first.attempts:.0%}"
    )
    lines = [
        f"Run `{info.run_id}` of **{info.suite}** (agent {info.agent}) against baseline "
        f"`{baseline}`: pass rates fell beyond their intervals.",
        "",
        *_listed([drop.line() for drop in significant]),
    ]
    return Notification(
        event="metric_drop",
        title=f"Seatrial: {info.suite} {headline}",
        text="\n".join(lines),
        link=dashboard_link(
            dashboard_url, "/compare", {"base": str(baseline), "cand": info.run_id}
        ),
        facts=_facts(report),
    )


def run_notifications(
    store: Store, report: RunReport, dashboard_url: str | None = None, confidence: float = 0.95
) -> list[Notification]:
    """The alerts a finished run raises: ``gate_failed`` when it did not meet its gates,
    ``metric_drop`` when a pass rate fell significantly against the baseline it stored."""
    found = []
    if not report.gate.passed:
        found.append(gate_failed_notification(report, dashboard_url))
    baseline_id = report.gate.baseline
    if baseline_id is not None:
        try:
            base, run = load_run(store, baseline_id), load_run(store, report.info.run_id)
        except RunNotFound:  # the baseline was collected since: nothing to compare with
            return found
        drop = metric_drop_notification(
            report, pass_rate_drops(base, run, confidence), dashboard_url
        )
        if drop is not None:
            found.append(drop)
    return found


def drift_notification(report: DriftReport, dashboard_url: str | None = None) -> Notification:
    """The ``drift`` alert: the probe, its baseline and each alarm."""
    kind = "probe" if report.probe else "suite"
    lines = [
        f"Run `{report.run_id}` of {kind} **{report.suite}** (agent {report.agent}) moved "
        f"against `{report.baseline_run_id}` ({report.baseline_reason}).",
        "",
        *_listed([alarm.message() for alarm in report.alarms]),
    ]
    return Notification(
        event="drift",
        title=f"Seatrial: drift alarm on {kind} {report.suite}",
        text="\n".join(lines),
        link=dashboard_link(
            dashboard_url,
            "/compare",
            {"base": str(report.baseline_run_id), "cand": report.run_id},
        ),
        facts=(
            (kind, report.suite),
            ("agent", report.agent),
            ("run", report.run_id),
            ("alarms", str(len(report.alarms))),
        ),
    )


def daily_notification(report: DailyReport, dashboard_url: str | None = None) -> Notification:
    """The ``daily_report`` message: the day's headline, each run's pass rate against its
    suite's previous run, and the cases that newly fail."""
    lines = [daily_headline(report)]
    runs = [
        f"{run.info.suite} `{run.info.run_id}`: "
        + ("-" if run.pass_rate is None else f"{run.pass_rate:.0%}")
        + (
            f" ({run.delta * 100:+.1f} pts against `{run.previous_id}`)"
            if run.delta is not None
            else ""
        )
        for run in report.runs
    ]
    if runs:
        lines += ["", "**Runs**", *_listed(runs)]
    failures = [
        f"{run.info.suite}: {failure.case_id} {failure.verdict}"
        + (f" ({', '.join(failure.failure_types)})" if failure.failure_types else "")
        for run in report.runs
        for failure in run.new_failures
    ]
    if failures:
        lines += ["", "**New failures**", *_listed(failures)]
    rate = report.passes / report.attempts if report.attempts else None
    return Notification(
        event="daily_report",
        title=f"Seatrial daily report {report.day.isoformat()}",
        text="\n".join(lines),
        link=dashboard_link(dashboard_url, "/daily", {"date": report.day.isoformat()}),
        facts=(
            ("runs", str(len(report.runs))),
            ("pass rate", "-" if rate is None else f"{rate:.0%}"),
            ("new failures", str(len(failures))),
            ("cost", f"${report.cost_usd:.2f}"),
        ),
    )
