"""The run summary on the terminal: one screen that says what failed and why."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from seatrial.report._build import CategorySummary, RunReport
from seatrial.report._formats import judge_line, statistics_lines
from seatrial.report._words import counted

_STYLE = {"PASS": "green", "FAIL": "red", "WARNING": "yellow", "ERROR": "magenta"}
_FLAKY_SHOWN = 6
_GATE_STYLE = {"met": "green", "unmet": "bold red", "not_evaluated": "yellow"}


def _rate(category: CategorySummary) -> str:
    low, high = category.interval
    return f"{category.pass_rate:.0%} [{low:.0%}, {high:.0%}]"


def print_summary(report: RunReport, console: Console) -> None:
    """Per category: attempts, pass rate, failures by type; then each failing case and why."""
    info, s = report.info, report.summary
    console.print(
        f"[bold]{info.suite}[/] against [cyan]{info.agent}[/]  run [bold]{info.run_id}[/]"
        + (f"  {escape(report.dataset_text)}" if report.dataset else "")
        + ("  [yellow](interrupted)[/]" if info.status == "interrupted" else "")
    )
    table = Table(show_edge=False, pad_edge=False)
    for column in ("category", "cases", "attempts", "pass rate", "failures by type"):
        table.add_column(
            column, justify="right" if column in ("cases", "attempts", "pass rate") else "left"
        )
    for c in report.categories:
        failures = ", ".join(f"{k} {v}" for k, v in c.failures_by_type.items())
        table.add_row(c.category or "-", str(c.cases), str(c.attempts), _rate(c), failures)
    console.print(table)
    failing = [c for c in report.cases if c.verdict != "PASS"]
    for case in failing:
        style = _STYLE[case.verdict]
        console.print(
            f"[{style}]{case.verdict:<7}[/] [bold]{case.case_id}[/] ({case.priority})"
            f" [{style}]{case.failure_type or ''}[/]"
        )
        console.print(f"         {case.reason}", markup=False, highlight=False)
    stats = report.statistics
    rate = stats.pass_rate_text() if stats else f"{s.pass_rate:.1%}"
    console.print(
        f"{counted(s.attempts, 'attempt')}: [green]{s.passed} passed[/], "
        f"[red]{s.failed} failed[/], [yellow]{counted(s.warnings, 'warning')}[/], "
        f"[magenta]{counted(s.errors, 'error')}[/] "
        f"(pass rate {rate}, 95% interval)"
    )
    for line in statistics_lines(report):
        console.print(line, markup=False, highlight=False)
    if report.flaky:
        shown = list(report.flaky.items())[:_FLAKY_SHOWN]
        more = len(report.flaky) - len(shown)
        console.print(
            f"[magenta]flaky ({len(report.flaky)}):[/] "
            + escape("; ".join(f"{case} ({why})" for case, why in shown))
            + (f" and {more} more (report.json lists all)" if more else ""),
            highlight=False,
        )
    if report.baseline:
        console.print(
            f"against baseline {report.baseline['run_id']}: {report.baseline['headline']}",
            markup=False,
            highlight=False,
        )
    if report.judge:
        judge = judge_line(report.judge, why=False)  # the run's start said why
        console.print(f"judge: {judge}", markup=False, highlight=False)
    if report.spend_usd:
        console.print(f"model calls: {report.spend_text}", markup=False, highlight=False)
    if report.unpriced_models:
        console.print(f"[bold yellow]warning:[/] {escape(report.unpriced_text)}", highlight=False)
    for drift in report.version_drift:
        console.print(
            f"[bold yellow]{escape(drift.line())}[/] (not the pinned version)", highlight=False
        )
    if report.simulator:
        console.print(report.simulator.line(), markup=False, highlight=False)
    gate = report.gate
    if gate.rule:
        console.print(f"gates ({gate.rule}):", highlight=False)
    elif gate.outcomes:
        console.print("gates:")
    for outcome in gate.outcomes:
        style = _GATE_STYLE[outcome.verdict]
        console.print(f"  [{style}]{escape(outcome.line())}[/]", highlight=False)
    if gate.changed:
        console.print(f"[bold red]{escape(gate.changed)}[/]", highlight=False)
    if gate.passed:
        console.print("[bold green]gate met[/]")
    else:
        unmet = sum(o.verdict == "unmet" for o in gate.outcomes)
        console.print(f"[bold red]gate not met[/] ({unmet} unmet)", highlight=False)
