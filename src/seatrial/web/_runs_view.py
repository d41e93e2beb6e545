"""What the run page shows, derived from a run's report: matrix, failures, slowest, cases.

A finished run's report is built once and kept (finished runs never change); only whether its
gates' source changed since is looked at again on each request.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

from seatrial.compare import gates_changed
from seatrial.i18n import current_language, render
from seatrial.i18n import gettext as _
from seatrial.record import CaseResult
from seatrial.report import RunReport, build_report
from seatrial.store import Store, previous_run_id

VERDICTS = ("PASS", "FAIL", "WARNING", "ERROR")
"""The columns of the category x verdict matrix."""

TOP = 10
"""How many of the slowest and of the costliest cases are shown."""

CACHED_REPORTS = 32
"""How many finished runs' reports are kept in memory."""


@dataclass
class CaseLine:
    """One case in the run page's case list."""

    case: CaseResult
    passes: int
    attempts: int
    mean_ms: float
    cost_usd: float
    failure_type: str | None = None
    """Of the first attempt that did not pass."""
    reason: str = ""
    """Of the first attempt that did not pass."""
    reply: str = ""
    """The agent's reply in the first attempt that did not pass (untrusted text)."""


@dataclass
class RunView:
    """Everything the run page renders beside the report itself."""

    report: RunReport
    matrix: list[tuple[str, dict[str, int]]]
    failures: list[tuple[str, int]]
    failing: list[CaseLine]
    """The cases that did not pass, by priority (P0 first), then in suite order."""
    cases: list[CaseLine]
    """Every case: those that did not pass first, then the passing ones, each in suite order."""
    slowest: list[CaseLine]
    costliest: list[CaseLine]
    compare_base: str | None
    compare_why: str = ""


def cached_report(store: Store, state: Any, run_id: str) -> RunReport:
    """The run's report; a finished run's comes from the cache on ``state`` after the first.

    The report's text (the gates' figures and reasons) is in the request's language, so each
    language keeps its own copy."""
    cache: OrderedDict[tuple[str, str], RunReport] | None = getattr(
        state, "runs_report_cache", None
    )
    if cache is None:
        cache = OrderedDict()
        state.runs_report_cache = cache
    key = (run_id, current_language())
    report = cache.get(key)
    if report is None:
        report = build_report(store, run_id)
        if report.info.status == "finished":
            cache[key] = report
            while len(cache) > CACHED_REPORTS:
                cache.popitem(last=False)
    else:
        cache.move_to_end(key)
        changed = gates_changed(report.info.settings)
        if changed != report.gate.changed:
            report = report.model_copy(
                update={"gate": report.gate.model_copy(update={"changed": changed})}
            )
    return report


def previous_run(store: Store, report: RunReport) -> str | None:
    """The run of the same suite started just before this one, if any."""
    return previous_run_id(store, report.info)


def run_view(store: Store, report: RunReport) -> RunView:
    """The run page's tables from the report."""
    lines = [_line(case) for case in report.cases]
    failing = [line for line in lines if line.case.verdict != "PASS"]
    passing = [line for line in lines if line.case.verdict == "PASS"]
    matrix: dict[str, Counter[str]] = {}
    failures: Counter[str] = Counter()
    for case in report.cases:
        counts = matrix.setdefault(case.category, Counter())
        for attempt in case.attempts:
            counts[attempt.verdict] += 1
            if attempt.verdict in ("FAIL", "ERROR"):
                failures[attempt.failure_type or "(none)"] += 1
    base, why = report.gate.baseline, _("the run's baseline")
    if base is None:
        base, why = previous_run(store, report), _("the previous run of this suite")

    return RunView(
        report=report,
        matrix=[(name, {v: matrix[name][v] for v in VERDICTS}) for name in sorted(matrix)],
        failures=failures.most_common(),
        failing=sorted(failing, key=lambda line: line.case.priority),
        cases=failing + passing,
        slowest=sorted(lines, key=lambda line: -line.mean_ms)[:TOP],
        costliest=sorted(lines, key=lambda line: -line.cost_usd)[:TOP],
        compare_base=base,
        compare_why=why if base else "",
    )


def _line(case: CaseResult) -> CaseLine:
    n = len(case.attempts)
    first = next((a for a in case.attempts if a.verdict != "PASS"), None)
    return CaseLine(
        case=case,
        passes=sum(a.verdict == "PASS" for a in case.attempts),
        attempts=n,
        mean_ms=sum(a.metrics.wall_time_ms for a in case.attempts) / n if n else 0.0,
        cost_usd=sum(a.metrics.cost_usd for a in case.attempts),
        failure_type=first.failure_type if first else None,
        reason=render(first.message, first.reason) if first else "",
        reply=first.response if first else "",
    )
