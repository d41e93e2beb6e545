"""Renderers of a stored run: terminal summary, report.json, junit.xml, summary.md.

``GateResult`` is :class:`seatrial.compare.GateResult` (the gate verdict's owner), re-exported
because a report carries it.
"""

from seatrial.compare import GateResult
from seatrial.report._build import (
    CategorySummary,
    RunReport,
    build_report,
    check_gate,
    summarize,
    verdict_of_attempts,
)
from seatrial.report._formats import FORMATS, render, to_json, to_junit, to_markdown, write_reports
from seatrial.report._terminal import print_summary

__all__ = [
    "FORMATS",
    "CategorySummary",
    "GateResult",
    "RunReport",
    "build_report",
    "check_gate",
    "print_summary",
    "render",
    "summarize",
    "to_json",
    "to_junit",
    "to_markdown",
    "verdict_of_attempts",
    "write_reports",
]
