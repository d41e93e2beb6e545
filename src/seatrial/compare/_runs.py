"""A stored run as comparisons need it: per case, its verdicts and metrics over the repeats.

Read without traces (verdicts, failure types and metrics are columns of the attempts), so
loading a run of thousands of attempts for a comparison stays cheap.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from seatrial.record import AttemptRecord, RunInfo, Verdict
from seatrial.store import Store


def verdict_of_repeats(verdicts: list[Verdict] | tuple[Verdict, ...]) -> Verdict:
    """A case's verdict over its repeats (stability mode: 2 of 3 PASS is PASS).

    PASS when more than half the attempts passed; else WARNING when passes and warnings
    together are more than half; else ERROR when more than half errored; else FAIL.
    """
    counts = Counter(verdicts)
    half = len(verdicts) / 2
    if counts["PASS"] > half:
        return "PASS"
    if counts["PASS"] + counts["WARNING"] > half:
        return "WARNING"
    if counts["ERROR"] > half:
        return "ERROR"
    return "FAIL"


@dataclass(frozen=True)
class CaseOutcome:
    """One case of one run: who it is, and each repeat's verdict and figures."""

    case_id: str
    name: str
    category: str
    priority: str
    tags: tuple[str, ...]
    verdicts: tuple[Verdict, ...]
    """Per attempt, in attempt order."""
    failure_types: tuple[str | None, ...]
    wall_time_ms: tuple[float, ...]
    tokens: tuple[int, ...]
    cost_usd: tuple[float, ...]
    tool_calls: tuple[int, ...]

    @property
    def n(self) -> int:
        """Attempts stored."""
        return len(self.verdicts)

    @property
    def passes(self) -> int:
        """Attempts that passed."""
        return sum(v == "PASS" for v in self.verdicts)

    @property
    def verdict(self) -> Verdict:
        """The case's verdict over its repeats (:func:`verdict_of_repeats`)."""
        return verdict_of_repeats(self.verdicts)

    @property
    def passed(self) -> bool:
        """The case's verdict is PASS."""
        return self.verdict == "PASS"

    @property
    def mixed(self) -> bool:
        """Some repeats passed and some did not: flaky within the run."""
        return 0 < self.passes < self.n


@dataclass(frozen=True)
class RunData:
    """A run's header and its cases in suite order (cases with no stored attempt left out)."""

    info: RunInfo
    cases: tuple[CaseOutcome, ...]

    def case(self, case_id: str) -> CaseOutcome | None:
        """The case with this id, if the run has it."""
        for case in self.cases:
            if case.case_id == case_id:
                return case
        return None

    @property
    def ids(self) -> list[str]:
        """Case ids in suite order."""
        return [case.case_id for case in self.cases]


def outcome_of(
    case_id: str,
    attempts: list[AttemptRecord],
    name: str,
    category: str,
    priority: str,
    tags: tuple[str, ...],
) -> CaseOutcome:
    """A case's outcome from its attempt records (any order)."""
    ordered = sorted(attempts, key=lambda a: a.attempt)
    return CaseOutcome(
        case_id=case_id,
        name=name,
        category=category,
        priority=priority,
        tags=tags,
        verdicts=tuple(a.verdict for a in ordered),
        failure_types=tuple(a.failure_type for a in ordered),
        wall_time_ms=tuple(a.metrics.wall_time_ms for a in ordered),
        tokens=tuple(a.metrics.tokens for a in ordered),
        cost_usd=tuple(a.metrics.cost_usd for a in ordered),
        tool_calls=tuple(a.metrics.tool_calls for a in ordered),
    )


def load_run(store: Store, run_id: str) -> RunData:
    """Read a stored run for comparison (no traces)."""
    info = store.get_run(run_id)
    by_case: dict[str, list[AttemptRecord]] = defaultdict(list)
    for record in store.attempts(run_id):
        by_case[record.case_id].append(record)
    cases = []
    for case in store.run_cases(run_id):
        attempts = by_case.pop(case.id, [])
        if attempts:
            cases.append(
                outcome_of(
                    case.id, attempts, case.name, case.category, case.priority, tuple(case.tags)
                )
            )
    for case_id, attempts in by_case.items():  # attempts of cases the run did not list
        cases.append(outcome_of(case_id, attempts, "", "", "P1", ()))
    return RunData(info=info, cases=tuple(cases))
