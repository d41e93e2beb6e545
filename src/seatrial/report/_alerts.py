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
from seatrial.i18n import N_, ngettext, render
from seatrial.i18n import gettext as _
from seatrial.notify import Notification
from seatrial.record import failure_type_word, verdict_word
from seatrial.report._build import RunReport
from seatrial.report._daily_render import (
    change_words,
    daily_headline,
    daily_title,
    noise_words,
)
from seatrial.report._links import dashboard_link
from seatrial.store import Store

if TYPE_CHECKING:
    from seatrial.compare import DriftReport, RunData
    from seatrial.report._daily import DailyReport, DailyRun

_LISTED = 10
"""Most gates, cases or alarms one message lists; the link shows the rest."""
_REASON_CHARS = 160
"""Where a failing case's reason is cut in a message."""
OVERALL = "task success"
"""How the overall pass rate is named in a ``metric_drop`` alert (:attr:`PassRateDrop.name`;
shown in the reader's language)."""
_CATEGORY = "category "
"""What :attr:`PassRateDrop.name` starts with for one category's pass rate."""
_OVERALL_WORD = N_("task success")


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

    def label(self) -> str:
        """The name in the reader's language: ``task success``, ``category read_only``
        (``任务成功率``, ``分类 read_only``)."""
        if self.name == OVERALL:
            return _(_OVERALL_WORD)
        if self.name.startswith(_CATEGORY):
            return _("category {name}").format(name=self.name.removeprefix(_CATEGORY))
        return self.name

    def line(self) -> str:
        """``**task success** 96% -> 93% (-3.0 pts, interval -5.9 to -0.4: more than noise)``,
        the interval being the change's at the chosen confidence, then what it means."""
        base = self.base_passes / self.base_attempts
        now = self.passes / self.attempts
        meaning = noise_words(self.significant)
        return _(
            "**{name}** {base} -> {now} ({change} pts, interval {low} to {high}: {meaning})"
        ).format(
            name=self.label(),
            base=f"{base:.0%}",
            now=f"{now:.0%}",
            change=f"{(now - base) * 100:+.1f}",
            low=f"{self.change_low * 100:+.1f}",
            high=f"{self.change_high * 100:+.1f}",
            meaning=meaning,
        )


def _counts(run: RunData) -> dict[str, tuple[int, int]]:
    """Passes and attempts, overall (under :data:`OVERALL`) and per category."""
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case in run.cases:
        for key in (OVERALL, f"{_CATEGORY}{case.category}" if case.category else ""):
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
    attempts = ngettext("{count} attempt", "{count} attempts", summary.attempts).format(
        count=summary.attempts
    )
    return (
        (_("suite"), report.info.suite),
        (_("agent"), report.info.agent),
        (_("run"), report.info.run_id),
        (
            _("pass rate"),
            _("{rate} of {attempts}").format(rate=f"{summary.pass_rate:.0%}", attempts=attempts),
        ),
    )


def _listed(lines: list[str]) -> list[str]:
    shown = [f"- {line}" for line in lines[:_LISTED]]
    if len(lines) > _LISTED:
        shown.append("- " + _("... and {count} more").format(count=len(lines) - _LISTED))
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
        failure = (
            _(" ({text})").format(text=failure_type_word(case.failure_type))
            if case.failure_type
            else ""
        )
        reason = _quoted(render(case.message, case.reason))
        verdict = verdict_word(case.verdict)
        line = f"{case.case_id} {verdict}{failure}"
        lines.append(_("{name}: {text}").format(name=line, text=reason) if reason else line)
    return lines


def _drop_headline(drop: PassRateDrop) -> str:
    return (
        f"{drop.label()} {drop.base_passes / drop.base_attempts:.0%} -> "
        f"{drop.passes / drop.attempts:.0%}"
    )


def _drop_lines(
    report: RunReport, significant: list[PassRateDrop], dashboard_url: str | None
) -> tuple[str, str | None, list[str]]:
    """The baseline's id, the comparison's link and the lines of the dropped rates."""
    baseline = str((report.baseline or {}).get("run_id") or report.gate.baseline)
    link = dashboard_link(dashboard_url, "/compare", {"base": baseline, "cand": report.info.run_id})
    return baseline, link, _listed([drop.line() for drop in significant])


def _sentence(rule: str) -> str:
    """The gate's rule as a sentence: capitalised, with its full stop (a Chinese rule, already
    a sentence of its language, only gains its full stop)."""
    return _("{rule}.").format(rule=rule[0].upper() + rule[1:])


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
        _("Run `{run_id}` of **{suite}** (agent {agent}) did not meet its gates.").format(
            run_id=info.run_id, suite=info.suite, agent=info.agent
        )
    ]
    if report.gate.rule:
        lines += ["", _sentence(report.gate.rule)]
    lines += ["", _("**Unmet gates**"), *_listed(report.gate.reasons)]
    against = report.baseline or {}
    regressed = [str(case) for case in against.get("regressed") or []]
    if regressed:
        since = _("**Regressed since `{run_id}`**").format(run_id=against.get("run_id"))
        lines += ["", since, *_listed(regressed)]
    else:
        failing = _failing_cases(report)
        if failing:
            heading = _("**Failing cases ({count})**").format(count=len(failing))
            lines += ["", heading, *_listed(failing)]
    title = _("Seatrial: {suite} failed its gates").format(suite=info.suite)
    if significant:
        baseline, link, dropped = _drop_lines(report, significant, dashboard_url)
        compared = _(" ([compare]({link}))").format(link=link) if link else ""
        fell = _("**Pass rates fell against `{run_id}`**").format(run_id=baseline)
        lines += ["", fell + compared, *dropped]
        title += _("; {drop}").format(drop=_drop_headline(significant[0]))
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
        _(
            "Run `{run_id}` of **{suite}** (agent {agent}) against baseline `{baseline}`: "
            "pass rates fell beyond their intervals."
        ).format(run_id=info.run_id, suite=info.suite, agent=info.agent, baseline=baseline),
        "",
        *dropped,
    ]
    return Notification(
        event="metric_drop",
        title=_("Seatrial: {suite} {drop}").format(
            suite=info.suite, drop=_drop_headline(significant[0])
        ),
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
    kind = _("probe") if report.probe else _("suite")
    moved = (
        _("Run `{run_id}` of probe **{suite}** (agent {agent}) moved against `{baseline}` ({why}).")
        if report.probe
        else _(
            "Run `{run_id}` of suite **{suite}** (agent {agent}) moved against `{baseline}` "
            "({why})."
        )
    )
    lines = [
        moved.format(
            run_id=report.run_id,
            suite=report.suite,
            agent=report.agent,
            baseline=report.baseline_run_id,
            why=report.baseline_reason,
        ),
        "",
        *_listed([alarm.message() for alarm in report.alarms]),
    ]
    title = (
        _("Seatrial: drift alarm on probe {suite}")
        if report.probe
        else _("Seatrial: drift alarm on suite {suite}")
    )
    return Notification(
        event="drift",
        title=title.format(suite=report.suite),
        text="\n".join(lines),
        link=dashboard_link(
            dashboard_url,
            "/compare",
            {"base": str(report.baseline_run_id), "cand": report.run_id},
        ),
        facts=(
            (kind, report.suite),
            (_("agent"), report.agent),
            (_("run"), report.run_id),
            (_("alarms"), str(len(report.alarms))),
        ),
    )


def _daily_run_line(run: DailyRun) -> str:
    rate = "-" if run.pass_rate is None else f"{run.pass_rate:.0%}"
    line = _("{name}: {text}").format(name=f"{run.info.suite} `{run.info.run_id}`", text=rate)
    if run.delta is None:
        return line
    words = change_words(run)
    against = (
        _(" ({change} pts against `{run_id}`, {meaning})")
        if words
        else _(" ({change} pts against `{run_id}`)")
    )
    return line + against.format(
        change=f"{run.delta * 100:+.1f}", run_id=run.previous_id, meaning=words
    )


def daily_notification(report: DailyReport, dashboard_url: str | None = None) -> Notification:
    """The ``daily_report`` message: the day's headline, each run's pass rate against its
    suite's previous run (and whether the change is more than noise), and the cases that
    newly fail."""
    lines = [daily_headline(report)]
    runs = [_daily_run_line(run) for run in report.runs]
    if runs:
        lines += ["", _("**Runs**"), *_listed(runs)]
    failures = [
        _("{name}: {text}").format(
            name=run.info.suite, text=f"{failure.case_id} {verdict_word(failure.verdict)}"
        )
        + (
            _(" ({text})").format(
                text=", ".join(failure_type_word(t) for t in failure.failure_types)
            )
            if failure.failure_types
            else ""
        )
        for run in report.runs
        for failure in run.new_failures
    ]
    if failures:
        lines += ["", _("**New failures**"), *_listed(failures)]
    rate = report.passes / report.attempts if report.attempts else None
    return Notification(
        event="daily_report",
        title=daily_title(report),
        text="\n".join(lines),
        link=dashboard_link(dashboard_url, "/daily", {"date": report.day.isoformat()}),
        facts=(
            (_("runs"), str(len(report.runs))),
            (_("pass rate"), "-" if rate is None else f"{rate:.0%}"),
            (_("new failures"), str(len(failures))),
            (_("cost"), f"${report.cost_usd:.2f}"),
        ),
    )
