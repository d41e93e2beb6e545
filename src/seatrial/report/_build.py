"""A stored run gathered into one report: case verdicts, category figures, the gate."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from pydantic import BaseModel, Field

from seatrial.case import Case
from seatrial.record import AttemptRecord, CaseResult, RunInfo, Summary, Verdict
from seatrial.store import Store


class CategorySummary(BaseModel):
    """Figures for one category of cases."""

    category: str
    """The category ("" when cases have none)."""
    cases: int
    """Number of cases."""
    attempts: int
    """Number of attempts."""
    passed: int
    """Attempts with PASS."""
    pass_rate: float
    """passed / attempts."""
    failures_by_type: dict[str, int] = Field(default_factory=dict)
    """failure_type -> attempts (FAIL and ERROR)."""


class GateResult(BaseModel):
    """Whether the run may ship: no P0 case failed and the suite's gate is met."""

    passed: bool
    """True when every gate holds."""
    reasons: list[str] = Field(default_factory=list)
    """Each gate that did not hold, with its figure."""


class RunReport(BaseModel):
    """Everything a report renders, read from the store (never re-evaluated)."""

    info: RunInfo
    """The run's header."""
    summary: Summary
    """Counts over all attempts."""
    categories: list[CategorySummary]
    """Per-category figures, sorted by category."""
    cases: list[CaseResult]
    """Per-case verdicts with their attempts, in suite order."""
    gate: GateResult
    """The release decision."""
    judge: dict[str, Any] | None = None
    """The LLM judge the run used and its gate (model, prompt version and hash, calibrated,
    agreement, the reason its FAILs count or stay advisory); None without a judge."""
    spend_usd: dict[str, float] = Field(default_factory=dict)
    """What the run's model calls through the gateway cost, by purpose (agent, judge,
    generation); empty when none went through it."""


def case_verdict(attempts: list[AttemptRecord]) -> Verdict:
    """A case's verdict over its repeats (seed 002's stability mode: 2 of 3 PASS is PASS).

    PASS when more than half the attempts passed; else WARNING when passes and warnings
    together are more than half; else ERROR when more than half errored; else FAIL.
    """
    counts = Counter(a.verdict for a in attempts)
    half = len(attempts) / 2
    if counts["PASS"] > half:
        return "PASS"
    if counts["PASS"] + counts["WARNING"] > half:
        return "WARNING"
    if counts["ERROR"] > half:
        return "ERROR"
    return "FAIL"


def summarize(attempts: list[AttemptRecord], cases: int) -> Summary:
    """Counts over attempts."""
    counts = Counter(a.verdict for a in attempts)
    total = len(attempts)
    return Summary(
        cases=cases,
        attempts=total,
        passed=counts["PASS"],
        failed=counts["FAIL"],
        warnings=counts["WARNING"],
        errors=counts["ERROR"],
        pass_rate=counts["PASS"] / total if total else 0.0,
    )


def check_gate(info: RunInfo, summary: Summary, cases: list[CaseResult]) -> GateResult:
    """The run fails its gate when a P0 case FAILed or ERRORed, or the pass rate is too low."""
    reasons = []
    for case in cases:
        if case.priority == "P0" and case.verdict in ("FAIL", "ERROR"):
            kinds = sorted({a.failure_type for a in case.attempts if a.failure_type})
            reasons.append(
                f"P0 case {case.case_id} {case.verdict}"
                + (f" ({', '.join(kinds)})" if kinds else "")
            )
    minimum = (info.settings.get("gate") or {}).get("min_pass_rate")
    if minimum is not None and summary.pass_rate < minimum:
        reasons.append(
            f"pass rate {summary.pass_rate:.1%} is below gate.min_pass_rate {minimum:.1%}"
        )
    if summary.attempts == 0:
        reasons.append("no attempt ran")
    return GateResult(passed=not reasons, reasons=reasons)


def _categories(cases: list[CaseResult]) -> list[CategorySummary]:
    grouped: dict[str, list[CaseResult]] = defaultdict(list)
    for case in cases:
        grouped[case.category].append(case)
    result = []
    for category in sorted(grouped):
        attempts = [a for c in grouped[category] for a in c.attempts]
        passed = sum(a.verdict == "PASS" for a in attempts)
        failures = Counter(
            a.failure_type for a in attempts if a.failure_type and a.verdict in ("FAIL", "ERROR")
        )
        result.append(
            CategorySummary(
                category=category,
                cases=len(grouped[category]),
                attempts=len(attempts),
                passed=passed,
                pass_rate=passed / len(attempts) if attempts else 0.0,
                failures_by_type=dict(sorted(failures.items())),
            )
        )
    return result


def build_report(store: Store, run_id: str, with_traces: bool = False) -> RunReport:
    """Gather a stored run into a report."""
    info = store.get_run(run_id)
    run_cases: list[Case] = store.run_cases(run_id)
    by_case: dict[str, list[AttemptRecord]] = defaultdict(list)
    for record in store.attempts(run_id, with_traces=with_traces):
        by_case[record.case_id].append(record)
    cases = []
    for case in run_cases:
        attempts = sorted(by_case.get(case.id, []), key=lambda a: a.attempt)
        if not attempts:
            continue
        cases.append(
            CaseResult(
                case_id=case.id,
                name=case.name,
                category=case.category,
                priority=case.priority,
                verdict=case_verdict(attempts),
                pass_rate=sum(a.verdict == "PASS" for a in attempts) / len(attempts),
                attempts=attempts,
            )
        )
    all_attempts = [a for c in cases for a in c.attempts]
    summary = summarize(all_attempts, len(cases))
    return RunReport(
        info=info,
        summary=summary,
        categories=_categories(cases),
        cases=cases,
        gate=check_gate(info, summary, cases),
        spend_usd=store.spend_by_purpose(run_id),
        judge=info.settings.get("judge") or None,
    )
