"""A stored run as comparisons need it: per case, its verdicts and metrics over the repeats.

Read from the attempts' columns (verdicts, failure types and metrics), never their records or
traces, so loading a run of 100,000 attempts for a comparison or a gate stays cheap: a few
numbers per attempt.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from seatrial.case import Case
from seatrial.record import AttemptRecord, RunInfo, Verdict
from seatrial.store import AttemptFigures, Store, run_figures


def verdict_of_repeats(verdicts: list[Verdict] | tuple[Verdict, ...]) -> Verdict:
    """A case's verdict over its repeats (stability mode: 2 of 3 PASS is PASS).

    PASS when more than half the attempts passed; else WARNING when passes and warnings
    together are more than half; else ERROR when more than half errored; else FAIL.
    """
    return verdict_of_counts(Counter(verdicts))


def verdict_of_counts(counts: Mapping[str, int]) -> Verdict:
    """:func:`verdict_of_repeats` of attempts counted by verdict (as the store counts them)."""
    half = sum(counts.values()) / 2
    passes, warnings, errors = (counts.get(v, 0) for v in ("PASS", "WARNING", "ERROR"))
    if passes > half:
        return "PASS"
    if passes + warnings > half:
        return "WARNING"
    if errors > half:
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


class CaseHead(NamedTuple):
    """Who a case is, as a run lists it: what a :class:`CaseOutcome` carries besides figures."""

    case_id: str
    name: str = ""
    category: str = ""
    priority: str = "P1"
    tags: tuple[str, ...] = ()

    @classmethod
    def of(cls, case: Case) -> CaseHead:
        """The head of a validated case."""
        return cls(case.id, case.name, case.category, case.priority, tuple(case.tags))

    @classmethod
    def from_definition(cls, definition: Mapping[str, Any]) -> CaseHead:
        """The head of a case definition as stored (JSON, not validated)."""
        return cls(
            str(definition["id"]),
            str(definition.get("name") or ""),
            str(definition.get("category") or ""),
            str(definition.get("priority") or "P1"),
            tuple(definition.get("tags") or ()),
        )


def figures_of(record: AttemptRecord) -> AttemptFigures:
    """An attempt record's verdict and figures: what a :class:`RunData` reads of it."""
    metrics = record.metrics
    return AttemptFigures(
        record.run_id,
        record.case_id,
        record.verdict,
        record.failure_type,
        metrics.wall_time_ms,
        metrics.tokens,
        metrics.cost_usd,
        metrics.tool_calls,
    )


def run_data(
    info: RunInfo, listed: Iterable[CaseHead], attempts: Iterable[AttemptFigures]
) -> RunData:
    """The one builder of :class:`RunData` (comparisons, reports and the dashboard).

    Cases come in ``listed`` (suite) order, a listed case with no attempt left out; then the
    cases of attempts the run did not list, in the order their attempts first come, with an
    empty head. ``attempts`` are given in attempt order within each case; only their figures
    are kept (a few numbers per attempt, however many there are).
    """
    by_case: dict[str, _Columns] = {}
    for row in attempts:
        columns = by_case.get(row.case_id)
        if columns is None:
            columns = by_case[row.case_id] = _Columns()
        columns.add(row)
    cases = [by_case.pop(head.case_id).outcome(head) for head in listed if head.case_id in by_case]
    cases += [columns.outcome(CaseHead(case_id)) for case_id, columns in by_case.items()]
    return RunData(info=info, cases=tuple(cases))


class _Columns:
    """One case's figures as they are read, a list per figure."""

    __slots__ = ("cost_usd", "failure_types", "tokens", "tool_calls", "verdicts", "wall_time_ms")

    def __init__(self) -> None:
        self.verdicts: list[Verdict] = []
        self.failure_types: list[str | None] = []
        self.wall_time_ms: list[float] = []
        self.tokens: list[int] = []
        self.cost_usd: list[float] = []
        self.tool_calls: list[int] = []

    def add(self, row: AttemptFigures) -> None:
        # The conversions make a database's numeric types (PostgreSQL sums) plain numbers.
        self.verdicts.append(row.verdict)
        self.failure_types.append(row.failure_type)
        self.wall_time_ms.append(float(row.wall_time_ms))
        self.tokens.append(int(row.tokens))
        self.cost_usd.append(float(row.cost_usd))
        self.tool_calls.append(int(row.tool_calls))

    def outcome(self, head: CaseHead) -> CaseOutcome:
        return CaseOutcome(
            case_id=head.case_id,
            name=head.name,
            category=head.category,
            priority=head.priority,
            tags=head.tags,
            verdicts=tuple(self.verdicts),
            failure_types=tuple(self.failure_types),
            wall_time_ms=tuple(self.wall_time_ms),
            tokens=tuple(self.tokens),
            cost_usd=tuple(self.cost_usd),
            tool_calls=tuple(self.tool_calls),
        )


def load_run(store: Store, run_id: str) -> RunData:
    """Read a stored run for comparison: its attempts' figures, read by the database's
    columns (:func:`seatrial.store.run_figures`), never their records or traces."""
    info = store.get_run(run_id)
    listed = (CaseHead.of(case) for case in store.run_cases(run_id))
    return run_data(info, listed, run_figures(store, run_id))
