"""The run summary on the terminal: one screen that says what failed and why."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from seatrial.i18n import N_, render
from seatrial.i18n import gettext as _
from seatrial.record import failure_type_word, verdict_word
from seatrial.report._build import CategorySummary, RunReport
from seatrial.report._summary import (
    INTERVAL_LEVEL,
    judge_line,
    statistics_lines,
    summary_counts,
)

_STYLE = {"PASS": "green", "FAIL": "red", "WARNING": "yellow", "ERROR": "magenta"}
_FLAKY_SHOWN = 6
_GATE_STYLE = {"met": "green", "unmet": "bold red", "not_evaluated": "yellow"}
_COLUMNS = (
    (N_("category"), "left"),
    (N_("cases"), "right"),
    (N_("attempts"), "right"),
    (N_("pass rate"), "right"),
    (N_("failures by type"), "left"),
)
"""The table's columns and how each is justified."""
_VERDICT_CELLS = 7
"""Terminal cells the verdict word takes before the case id, so that the ids line up."""


def _rate(category: CategorySummary) -> str:
    low, high = category.interval
    return f"{category.pass_rate:.0%} [{low:.0%}, {high:.0%}]"


def _padded(text: str, cells: int) -> str:
    """``text`` followed by spaces up to ``cells`` terminal cells (a Chinese character takes
    two)."""
    return text + " " * max(cells - cell_len(text), 0)


def print_summary(report: RunReport, console: Console) -> None:
    """Per category: attempts, pass rate, failures by type; then each failing case and why.

    In the reader's language (:mod:`seatrial.i18n`); ids, priorities and figures as stored.
    """
    info, s = report.info, report.summary
    console.print(
        _("[bold]{suite}[/] against [cyan]{agent}[/]  run [bold]{run_id}[/]").format(
            suite=info.suite, agent=info.agent, run_id=info.run_id
        )
        + (f"  {escape(report.dataset_text)}" if report.dataset else "")
        + (_("  [yellow](interrupted)[/]") if info.status == "interrupted" else "")
    )
    table = Table(show_edge=False, pad_edge=False)
    for column, justify in _COLUMNS:
        table.add_column(_(column), justify="right" if justify == "right" else "left")
    for c in report.categories:
        failures = ", ".join(f"{failure_type_word(k)} {v}" for k, v in c.failures_by_type.items())
        table.add_row(c.category or "-", str(c.cases), str(c.attempts), _rate(c), failures)
    console.print(table)
    failing = [c for c in report.cases if c.verdict != "PASS"]
    for case in failing:
        style = _STYLE[case.verdict]
        failure = failure_type_word(case.failure_type) if case.failure_type else ""
        console.print(
            f"[{style}]{_padded(verdict_word(case.verdict), _VERDICT_CELLS)}[/]"
            f" [bold]{case.case_id}[/] ({case.priority}) [{style}]{failure}[/]"
        )
        console.print(
            f"         {render(case.message, case.reason)}", markup=False, highlight=False
        )
    stats = report.statistics
    rate = stats.pass_rate_text() if stats else f"{s.pass_rate:.1%}"
    console.print(
        _(
            "{attempts}: [green]{passed} passed[/], [red]{failed} failed[/], "
            "[yellow]{warnings}[/], [magenta]{errors}[/] (pass rate {rate}, {level} interval)"
        ).format(
            passed=s.passed,
            failed=s.failed,
            rate=rate,
            level=INTERVAL_LEVEL,
            **summary_counts(s),
        )
    )
    for line in statistics_lines(report):
        console.print(line, markup=False, highlight=False)
    if report.flaky:
        shown = list(report.flaky.items())[:_FLAKY_SHOWN]
        more = len(report.flaky) - len(shown)
        console.print(
            _("[magenta]flaky ({count}):[/] ").format(count=len(report.flaky))
            + escape("; ".join(f"{case} ({why})" for case, why in shown))
            + (_(" and {more} more (report.json lists all)").format(more=more) if more else ""),
            highlight=False,
        )
    if report.baseline:
        console.print(
            _("against baseline {run_id}: {headline}").format(
                run_id=report.baseline["run_id"], headline=report.baseline["headline"]
            ),
            markup=False,
            highlight=False,
        )
    if report.judge:
        console.print(
            # The run's start said why an advisory judge is advisory: not again here.
            _("judge: {line}").format(line=judge_line(report.judge, why=False)),
            markup=False,
            highlight=False,
        )
    if report.spend_usd:
        console.print(
            _("model calls: {spend}").format(spend=report.spend_text),
            markup=False,
            highlight=False,
        )
    if report.unpriced_models:
        console.print(
            _("[bold yellow]warning:[/] {text}").format(text=escape(report.unpriced_text)),
            highlight=False,
        )
    for drift in report.version_drift:
        console.print(
            _("[bold yellow]{drift}[/] (not the pinned version)").format(
                drift=escape(drift.line())
            ),
            highlight=False,
        )
    if report.simulator:
        console.print(report.simulator.line(), markup=False, highlight=False)
    gate = report.gate
    if gate.rule:
        console.print(_("gates ({rule}):").format(rule=gate.rule), highlight=False)
    elif gate.outcomes:
        console.print(_("gates:"))
    for outcome in gate.outcomes:
        style = _GATE_STYLE[outcome.verdict]
        console.print(f"  [{style}]{escape(outcome.line())}[/]", highlight=False)
    if gate.changed:
        console.print(f"[bold red]{escape(gate.changed)}[/]", highlight=False)
    if gate.passed:
        console.print(_("[bold green]gate met[/]"))
    else:
        unmet = sum(o.verdict == "unmet" for o in gate.outcomes)
        console.print(
            _("[bold red]gate not met[/] ({unmet} unmet)").format(unmet=unmet), highlight=False
        )
