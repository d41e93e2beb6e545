"""A stored run gathered into one report: case verdicts, category figures, the gate."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from seatrial.case import Case
from seatrial.compare import (
    CaseHead,
    GateResult,
    Interval,
    RunData,
    RunStatistics,
    compare,
    flaky_cases,
    gates_changed,
    headline,
    load_run,
    run_data,
    run_meets_gates,
    run_statistics,
    stored_baseline,
    verdict_of_counts,
    verdict_of_repeats,
    wilson_interval,
)
from seatrial.record import AttemptRecord, CaseResult, RunInfo, Summary, Verdict
from seatrial.report._pinned import VersionDrift, pinned_models, version_drift
from seatrial.report._simulator import SimulatorSummary, simulator_summary
from seatrial.store import CaseCount, Store, case_counts, first_failures, run_figures


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
    interval: tuple[float, float] = (0.0, 1.0)
    """The pass rate's Wilson 95% interval (low, high)."""
    failures_by_type: dict[str, int] = Field(default_factory=dict)
    """failure_type -> attempts (FAIL and ERROR)."""


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
    unpriced_models: list[str] = Field(default_factory=list)
    """Models of the run with no price (not in prices.json, no ``price:``): their calls are
    booked at $0, so :attr:`spend_usd` is a lower bound when this is not empty."""
    """What the run's model calls through the gateway cost, by purpose (agent, judge,
    generation); empty when none went through it."""
    statistics: RunStatistics | None = None
    """Pass rate with its interval, pass@k and pass^k over repeats, latency percentiles."""
    flaky: dict[str, str] = Field(default_factory=dict)
    """Flaky cases (repeats disagree, or verdicts changed over recent runs) and why."""
    baseline: dict[str, Any] | None = None
    """With a baseline: its run id, the regressed and fixed cases, and a one-line headline."""
    dataset: dict[str, Any] | None = None
    """The golden set the run ran (``name``, ``version``, the version's ``hash``, and
    whether its history ``verified`` when the run started); None when it named none."""
    version_drift: list[VersionDrift] = Field(default_factory=list)
    """Models whose answers reported another model id than the pinned one (``models:``)."""
    simulator: SimulatorSummary | None = None
    """Simulated users: their failures apart from the agent's, and their error rate; None
    when no case had one."""

    @property
    def spend_text(self) -> str:
        """``$0.0123 (agent $0.0100, judge $0.0023)``; with unpriced models ``at least`` and
        what it leaves out. Empty when no model call was booked."""
        if not self.spend_usd:
            return ""
        parts = ", ".join(f"{purpose} ${usd:.4f}" for purpose, usd in self.spend_usd.items())
        total = f"${sum(self.spend_usd.values()):.4f} ({parts})"
        if not self.unpriced_models:
            return total
        return f"at least {total}, without the unpriced {', '.join(self.unpriced_models)}"

    @property
    def unpriced_text(self) -> str:
        """The warning about models without a price; empty when every model had one."""
        if not self.unpriced_models:
            return ""
        return (
            f"no price for {', '.join(self.unpriced_models)}: their calls are booked at $0, so "
            "the cost is a lower bound; give each a `price:` under models: in seatrial.yaml "
            "(input_per_mtok: 0, output_per_mtok: 0 for a free local model)"
        )

    @property
    def dataset_text(self) -> str:
        """``dataset NAME v3`` for a run of a golden set, else empty."""
        if not self.dataset:
            return ""
        text = f"dataset {self.dataset.get('name')} v{self.dataset.get('version')}"
        if self.dataset.get("verified") is False:
            text += " (its history was changed in the database: seatrial datasets verify)"
        return text


def verdict_of_attempts(attempts: list[AttemptRecord]) -> Verdict:
    """A case's verdict over its repeats (see :func:`seatrial.compare.verdict_of_repeats`)."""
    return verdict_of_repeats([a.verdict for a in attempts])


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


def check_gate(
    store: Store | None, run: RunData, flaky: dict[str, str], project_dir: Path | None = None
) -> GateResult:
    """The run's verdict (:func:`seatrial.compare.run_meets_gates`) against the baseline it
    stored, with a warning when the gates' source on disk changed after the run started."""
    gate = run_meets_gates(run, stored_baseline(store, run), flaky=flaky)
    # The one disk read of report building, done here on purpose: the verdict above uses the
    # stored gates; this only warns that the file someone would now read says otherwise.
    changed = gates_changed(run.info.settings, project_dir)
    return gate.model_copy(update={"changed": changed}) if changed else gate


def _bounds(interval: Interval) -> tuple[float, float]:
    return interval.low, interval.high


class _Tally:
    """One case's attempts as the database counted them."""

    __slots__ = ("failures", "verdicts")

    def __init__(self) -> None:
        self.verdicts: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        """failure_type -> attempts, of FAIL and ERROR attempts with one."""

    def add(self, row: CaseCount) -> None:
        self.verdicts[row.verdict] += row.attempts
        if row.failure_type and row.verdict in ("FAIL", "ERROR"):
            self.failures[row.failure_type] += row.attempts

    @property
    def attempts(self) -> int:
        return sum(self.verdicts.values())


def _categories(cases: list[CaseResult], tallies: dict[str, _Tally]) -> list[CategorySummary]:
    grouped: dict[str, list[CaseResult]] = defaultdict(list)
    for case in cases:
        grouped[case.category].append(case)
    result = []
    for category in sorted(grouped):
        attempts = passed = 0
        failures: Counter[str] = Counter()
        for case in grouped[category]:
            tally = tallies[case.case_id]
            attempts += tally.attempts
            passed += tally.verdicts["PASS"]
            failures.update(tally.failures)
        result.append(
            CategorySummary(
                category=category,
                cases=len(grouped[category]),
                attempts=attempts,
                passed=passed,
                pass_rate=passed / attempts if attempts else 0.0,
                interval=_bounds(wilson_interval(passed, attempts)),
                failures_by_type=dict(sorted((+failures).items())),
            )
        )
    return result


def build_report(
    store: Store,
    run_id: str,
    with_traces: bool = False,
    project_dir: Path | None = None,
    *,
    with_attempts: bool = True,
) -> RunReport:
    """Gather a stored run into a report; ``project_dir`` resolves a relative gates source.

    The figures are counted by the database (:func:`seatrial.store.case_counts`) and the
    gate reads the attempts' figures (:func:`seatrial.compare.load_run`'s columns), never
    their records. ``with_attempts=False`` leaves each case's ``attempts`` empty: such a
    report holds a few numbers per attempt at any run size, and
    ``write_reports(report, directory, store)`` streams the attempts into its files.
    ``with_traces`` reads each loaded attempt's trace as well.
    """
    info = store.get_run(run_id)
    run_cases: list[Case] = store.run_cases(run_id)
    counts = case_counts(store, run_id)
    tallies: dict[str, _Tally] = defaultdict(_Tally)
    for row in counts:
        tallies[row.case_id].add(row)
    first = first_failures(store, run_id)
    loaded: dict[str, list[AttemptRecord]] = defaultdict(list)
    if with_attempts or with_traces:
        for record in store.attempts(run_id, with_traces=with_traces):
            loaded[record.case_id].append(record)
    cases = []
    for case in run_cases:
        tally = tallies.get(case.id)
        if tally is None:
            continue
        failed = first.get(case.id)
        cases.append(
            CaseResult(
                case_id=case.id,
                name=case.name,
                category=case.category,
                priority=case.priority,
                verdict=verdict_of_counts(tally.verdicts),
                pass_rate=tally.verdicts["PASS"] / tally.attempts,
                attempt_count=tally.attempts,
                failure_type=failed.failure_type if failed else None,
                reason=failed.reason if failed else "",
                message=failed.message if failed else None,
                attempts=sorted(loaded.pop(case.id, []), key=lambda a: a.attempt),
            )
        )
    summary = _summary(tallies.values(), len(cases))
    # Only the attempts of listed cases: the report shows no other, so its gate sees no other.
    listed = run_figures(store, run_id, listed_only=True)
    run = run_data(info, (CaseHead.of(case) for case in run_cases), listed)
    flaky = flaky_cases(store, run)
    gate = check_gate(store, run, flaky, project_dir)
    simulated = {case.id for case in run_cases if case.user_simulator is not None}
    return RunReport(
        info=info,
        summary=summary,
        categories=_categories(cases, tallies),
        cases=cases,
        gate=gate,
        spend_usd=store.spend_by_purpose(run_id),
        unpriced_models=store.unpriced_models(run_id),
        judge=info.settings.judge.model_dump(mode="json") or None
        if info.settings.judge is not None
        else None,
        dataset=info.settings.dataset.model_dump(mode="json") or None
        if info.settings.dataset is not None
        else None,
        statistics=run_statistics(run),
        flaky=flaky,
        baseline=_against_baseline(store, gate.baseline, run, flaky),
        version_drift=version_drift(pinned_models(info.settings), store.served_models(run_id)),
        simulator=simulator_summary(counts, simulated),
    )


def _summary(tallies: Iterable[_Tally], cases: int) -> Summary:
    counts: Counter[str] = Counter()
    for tally in tallies:
        counts.update(tally.verdicts)
    total = counts.total()
    return Summary(
        cases=cases,
        attempts=total,
        passed=counts["PASS"],
        failed=counts["FAIL"],
        warnings=counts["WARNING"],
        errors=counts["ERROR"],
        pass_rate=counts["PASS"] / total if total else 0.0,
    )


def _against_baseline(
    store: Store, baseline_id: str | None, run: RunData, flaky: dict[str, str]
) -> dict[str, Any] | None:
    if baseline_id is None:
        return None
    comparison = compare(load_run(store, baseline_id), run, flaky)
    return {
        "run_id": baseline_id,
        "regressed": [c.case_id for c in comparison.of("regressed")],
        "fixed": [c.case_id for c in comparison.of("fixed")],
        "headline": headline(comparison),
    }
