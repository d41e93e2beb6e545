"""The run summary on the terminal: one screen that says what failed and why."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from seatrial.report._build import RunReport
from seatrial.report._formats import judge_line

_STYLE = {"PASS": "green", "FAIL": "red", "WARNING": "yellow", "ERROR": "magenta"}


def print_summary(report: RunReport, console: Console) -> None:
    """Per category: attempts, pass rate, failures by type; then each failing case and why."""
    info, s = report.info, report.summary
    console.print(
        f"[bold]{info.suite}[/] against [cyan]{info.agent}[/]  run [bold]{info.run_id}[/]"
        + ("  [yellow](interrupted)[/]" if info.status == "interrupted" else "")
    )
    table = Table(show_edge=False, pad_edge=False)
    for column in ("category", "cases", "attempts", "pass rate", "failures by type"):
        table.add_column(
            column, justify="right" if column in ("cases", "attempts", "pass rate") else "left"
        )
    for c in report.categories:
        failures = ", ".join(f"{k} {v}" for k, v in c.failures_by_type.items())
        table.add_row(
            c.category or "-", str(c.cases), str(c.attempts), f"{c.pass_rate:.0%}", failures
        )
    console.print(table)
    failing = [c for c in report.cases if c.verdict != "PASS"]
    for case in failing:
        first = next((a for a in case.attempts if a.verdict != "PASS"), case.attempts[0])
        style = _STYLE[case.verdict]
        console.print(
            f"[{style}]{case.verdict:<7}[/] [bold]{case.case_id}[/] ({case.priority})"
            f" [{style}]{first.failure_type or ''}[/]"
        )
        console.print(f"         {first.reason}", markup=False, highlight=False)
    console.print(
        f"{s.attempts} attempts: [green]{s.passed} passed[/], [red]{s.failed} failed[/], "
        f"[yellow]{s.warnings} warnings[/], [magenta]{s.errors} errors[/] "
        f"({s.pass_rate:.1%} pass rate)"
    )
    if report.judge:
        console.print(f"judge: {judge_line(report.judge)}", markup=False, highlight=False)
    if report.spend_usd:
        parts = ", ".join(f"{purpose} ${usd:.4f}" for purpose, usd in report.spend_usd.items())
        console.print(f"model calls: ${sum(report.spend_usd.values()):.4f} ({parts})")
    if report.gate.passed:
        console.print("[bold green]gate met[/]")
    else:
        console.print(
            "[bold red]gate not met:[/] " + "; ".join(report.gate.reasons), highlight=False
        )
