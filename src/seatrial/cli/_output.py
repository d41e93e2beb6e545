"""What more than one command prints or sends: a run's notices as it starts, a drift
comparison, and the drift alert with each channel's delivery."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from seatrial.cli._app import console, err_console
from seatrial.i18n import gettext as _
from seatrial.i18n import ngettext, pgettext

if TYPE_CHECKING:
    from seatrial._execute import NoticeLevel
    from seatrial.compare import DriftReport, MetricDrift
    from seatrial.config import Config
    from seatrial.notify import Delivery


def print_notice(level: NoticeLevel, text: str) -> None:
    """What a run says as it starts: choices on stdout, warnings and alarms on stderr."""
    if level == "info":
        console.print(escape(text), highlight=False)
    elif level == "warning":
        err_console.print(f"[yellow]{escape(text)}[/]", highlight=False)
    else:
        err_console.print(f"[bold red]{escape(text)}[/]", highlight=False)


def _cell(metric: MetricDrift) -> str:
    figure = f"{metric.distance:.2f}"
    if metric.alarm:
        return _("[bold red]{figure} ALARM[/]").format(figure=figure)
    if metric.note:
        return _("{figure} [dim](few attempts)[/]").format(figure=figure)
    return figure if metric.distance else f"[dim]{figure}[/]"


def print_drift(report: DriftReport) -> None:
    """The comparison as a table (pooled, then every case that moved), notes and alarms."""
    from seatrial.compare import METRIC_NAMES, METRICS, POOLED

    suite = escape(report.suite)
    where = (
        _("probe {suite}").format(suite=suite)
        if report.probe
        else _("suite {suite} (not flagged probe: true)").format(suite=suite)
    )
    console.print(
        _(
            "drift of run [bold]{run_id}[/] ({where}, agent {agent})\n  against {baseline} "
            "({reason})"
        ).format(
            run_id=report.run_id,
            where=where,
            agent=escape(report.agent),
            baseline=report.baseline_run_id,
            reason=escape(report.baseline_reason),
        ),
        highlight=False,
    )
    limits = report.thresholds
    console.print(
        "  "
        + _("thresholds: {limits} (an alarm needs {min_attempts}+ attempts on each side)").format(
            limits=pgettext("list separator", ", ").join(
                f"{_(METRIC_NAMES[m])} {limits.limit(m):.2f}" for m in METRICS
            ),
            min_attempts=limits.min_attempts,
        ),
        highlight=False,
    )
    moved = [case for case in report.cases if case.moved]
    scopes = ([report.pooled] if report.pooled is not None else []) + moved
    if scopes:
        table = Table(show_edge=False, pad_edge=False)
        table.add_column(_("case"))
        table.add_column(_("attempts"), justify="right")
        for metric in METRICS:
            table.add_column(_(METRIC_NAMES[metric]), justify="right")
        for scope in scopes:
            first = scope.metrics[0]
            table.add_row(
                _("all cases pooled") if scope.case_id == POOLED else escape(scope.case_id),
                f"{first.base_attempts} -> {first.run_attempts}",
                *(_cell(m) for m in scope.metrics),
            )
        console.print(table)
    unchanged = len(report.cases) - len(moved)
    console.print(
        ngettext(
            "{count} case compared, {unchanged} unchanged",
            "{count} cases compared, {unchanged} unchanged",
            len(report.cases),
        ).format(count=len(report.cases), unchanged=unchanged),
        highlight=False,
    )
    if report.only_in_run:
        shown = ", ".join(report.only_in_run)
        console.print(
            _("only in the run (not compared): {cases}").format(cases=shown),
            markup=False,
            highlight=False,
        )
    if report.only_in_baseline:
        shown = ", ".join(report.only_in_baseline)
        console.print(
            _("only in the baseline: {cases}").format(cases=shown), markup=False, highlight=False
        )
    for note in report.notes:
        console.print(_("note: {note}").format(note=note), markup=False, highlight=False)
    for alarm in report.alarms:
        err_console.print(
            _("[bold red]drift alarm:[/] {alarm}").format(alarm=escape(alarm.message())),
            highlight=False,
        )
    if not report.alarms:
        console.print(_("[green]no drift alarm[/]"))


def print_delivery(event: str, delivery: Delivery) -> None:
    """One channel's outcome: sent on stdout, not sent (with why) on stderr."""
    if delivery.sent:
        said = _("alert {event}: {line}").format(event=event, line=escape(delivery.line()))
        console.print(said, highlight=False)
    else:
        said = _("alert {event}: {line}").format(event=event, line=escape(delivery.line()))
        err_console.print(f"[yellow]{said}[/]", highlight=False)


def send_drift_alert(report: DriftReport, config: Config) -> None:
    """Send a probe's drift alarm to the channels that receive ``drift``; a failed delivery
    is printed, never raised."""
    import asyncio

    from seatrial.notify import notify
    from seatrial.report import drift_notification

    if not (report.alarmed and config.alerts.channels):
        return
    notification = drift_notification(report, config.dashboard_address())
    for delivery in asyncio.run(notify(config.alerts, notification)):
        print_delivery(notification.event, delivery)
