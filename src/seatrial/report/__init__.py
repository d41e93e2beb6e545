"""Renderers of a stored run: terminal summary, report.json, junit.xml, summary.md; and the
daily report over a day's runs (Markdown and HTML).

``GateResult`` is :class:`seatrial.compare.GateResult` (the gate verdict's owner), re-exported
because a report carries it.
"""

from seatrial.compare import GateResult
from seatrial.report._alerts import (
    PassRateDrop,
    daily_notification,
    drift_notification,
    gate_failed_notification,
    metric_drop_notification,
    pass_rate_drops,
    run_notifications,
)
from seatrial.report._build import (
    CategorySummary,
    RunReport,
    build_report,
    check_gate,
    summarize,
    verdict_of_attempts,
)
from seatrial.report._daily import (
    DAILY_RUN_LIMIT,
    DailyReport,
    DailyRun,
    NewFailure,
    daily_report,
    day_bounds,
)
from seatrial.report._daily_render import (
    daily_headline,
    daily_html_body,
    render_daily_html,
    render_daily_markdown,
    write_daily_report,
)
from seatrial.report._formats import FORMATS, render, to_json, to_junit, write_reports
from seatrial.report._github import github_comment
from seatrial.report._links import dashboard_link
from seatrial.report._pinned import VersionDrift
from seatrial.report._simulator import SimulatorSummary, simulator_summary
from seatrial.report._summary import to_markdown
from seatrial.report._terminal import print_summary
from seatrial.report._why import assertion_lines, trajectory_lines

__all__ = [
    "DAILY_RUN_LIMIT",
    "FORMATS",
    "CategorySummary",
    "DailyReport",
    "DailyRun",
    "GateResult",
    "NewFailure",
    "PassRateDrop",
    "RunReport",
    "SimulatorSummary",
    "VersionDrift",
    "assertion_lines",
    "build_report",
    "check_gate",
    "daily_headline",
    "daily_html_body",
    "daily_notification",
    "daily_report",
    "dashboard_link",
    "day_bounds",
    "drift_notification",
    "gate_failed_notification",
    "github_comment",
    "metric_drop_notification",
    "pass_rate_drops",
    "print_summary",
    "render",
    "render_daily_html",
    "render_daily_markdown",
    "run_notifications",
    "simulator_summary",
    "summarize",
    "to_json",
    "to_junit",
    "to_markdown",
    "trajectory_lines",
    "verdict_of_attempts",
    "write_daily_report",
    "write_reports",
]
