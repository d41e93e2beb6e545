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
from seatrial.i18n import counted
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
_REASON_CHARS = 160
"""Where a failing case's reason is cut in a message."""
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
        ("pass rate", f"{summary.pass_rate:.0%} of {counted(summary.attempts, 'attempt')}"),
    )


def _listed(lines: list[str]) -> list[str]:
    shown = [f"- {line}" for line in lines[:_LISTED]]
    if len(lines) > _LISTED:
        shown.append(f"- ... and {len(lines) - _LISTED} more")
    return shown


def _quoted(text: str) -> str:
    """Text the agent may have written (a failure reason) as an inert inline quote: one line,
    cut, in backticks; ``<`` and ``>`` shown as ``‹ ›`` so no platform reads a mention
    (Feishu ``<at>``, Slack ``<!channel>``, WeCom ``<@id>``) or a tag in it."""
    text = " ".join(text.split()).replace("`", "'").replace("<", "‹").replace(">", "›")
    if len(text) > _REASON_CHARS:
        text = text[: _REASON_CHARS - 3] + "..."
    return f"`{text}`" if text else ""


def _failing_cases(report: RunReport) -> list[str]:
    """Each case that did not pass, as a line: its id, verdict, failure type and the reason of
    its first attempt that did not pass, in suite order."""
    lines = []
    for case in report.cases:
        if case.verdict == "PASS":
            continue
        failure = f" ({case.failure_type})" if case.failure_type else ""
        reason = _quoted(case.reason)
        lines.append(f"{case.case_id} {case.verdict}{failure}" + (f": {reason}" if reason else ""))
    return lines


def _drop_headline(drop: PassRateDrop) -> str:
    return (
        f"{drop.name} {drop.base_passes / drop.base_attempts:.0%} -> "
        f"{drop.passes / drop.attempts:.0%}"
    )


def _drop_lines(
    report: RunReport, significant: list[PassRateDrop], dashboard_url: str | None
) -> tuple[str, str | None, list[str]]:
    """The baseline's id, the comparison's link and the lines of the dropped rates."""
    baseline = str((report.baseline or {}).get("run_id") or report.gate.baseline)
    link = dashboard_link(dashboard_url, "/compare", {"base": baseline, "cand": report.info.run_id})
    return baseline, link, _listed([drop.line() for drop in significant])


def gate_failed_notification(
    report: RunReport,
    dashboard_url: str | None = None,
    drops: list[PassRateDrop] | None = None,
) -> Notification:
    """The ``gate_failed`` alert: suite, agent, run, pass rate, the unmet gates, the regressed
    cases (else, without a baseline or a regression, the failing cases with their reasons);
    with the significant ``drops`` too, one message that also carries ``metric_drop``."""
    info = report.info
    significant = [drop for drop in drops or [] if drop.significant]
    lines = [
        f"Run `{info.run_id}` of **{info.suite}** (agent {info.agent}) did not meet its gates."
    ]
    if report.gate.rule:
        lines += ["", report.gate.rule[0].upper() + report.gate.rule[1:] + "."]
    lines += ["", "**Unmet gates**", *_listed(report.gate.reasons)]
    against = report.baseline or {}
    regressed = [str(case) for case in against.get("regressed") or []]
    if regressed:
        lines += ["", f"**Regressed since `{against.get('run_id')}`**", *_listed(regressed)]
    else:
        failing = _failing_cases(report)
        if failing:
            lines += ["", f"**Failing cases ({len(failing)})**", *_listed(failing)]
    title = f"Seatrial: {info.suite} failed its gates"
    if significant:
        baseline, link, dropped = _drop_lines(report, significant, dashboard_url)
        compared = f" ([compare]({link}))" if link else ""
        lines += ["", f"**Pass rates fell against `{baseline}`**{compared}", *dropped]
        title += f"; {_drop_headline(significant[0])}"
    return Notification(
        event="gate_failed",
        title=title,
        text="\n".join(lines),
        link=dashboard_link(dashboard_url, f"/runs/{quote(info.run_id, safe='')}"),
        facts=_facts(report),
        also=("metric_drop",) if significant else (),
    )


def metric_drop_notification(
    report: RunReport, drops: list[PassRateDrop], dashboard_url: str | None = None
) -> Notification | None:
    """The ``metric_drop`` alert over the significant ``drops``; None when none is."""
    significant = [drop for drop in drops if drop.significant]
    if not significant:
        return None
    info = report.info
    baseline, link, dropped = _drop_lines(report, significant, dashboard_url)
    lines = [
        f"Run `{info.run_id}` of **{info.suite}** (agent {info.agent}) against baseline "
        f"`{baseline}`: pass rates fell beyond their intervals.",
        "",
        *dropped,
    ]
    return Notification(
        event="metric_drop",
        title=f"Seatrial: {info.suite} {_drop_headline(significant[0])}",
        text="\n".join(lines),
        link=link,
        facts=_facts(report),
    )


def _drops(store: Store, report: RunReport, confidence: float) -> list[PassRateDrop]:
    """The pass rates that fell significantly against the baseline the run stored; none when
    it stored none, or the baseline was collected since."""
    baseline_id = report.gate.baseline
    if baseline_id is None:
        return []
    try:
        base, run = load_run(store, baseline_id), load_run(store, report.info.run_id)
    except RunNotFound:
        return []
    return pass_rate_drops(base, run, confidence)


def run_notifications(
    store: Store, report: RunReport, dashboard_url: str | None = None, confidence: float = 0.95
) -> list[Notification]:
    """The alert a finished run raises, at most one: ``gate_failed`` when it did not meet its
    gates (carrying ``metric_drop`` too when a pass rate also fell significantly against the
    baseline it stored), else ``metric_drop`` when a pass rate fell."""
    drops = _drops(store, report, confidence)
    if not report.gate.passed:
        return [gate_failed_notification(report, dashboard_url, drops)]
    drop = metric_drop_notification(report, drops, dashboard_url)
    return [drop] if drop is not None else []


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
