"""A stored run as comparisons need it: per case, its verdicts and metrics over the repeats.

Read without traces (verdicts, failure types and metrics are columns of the attempts), so
loading a run of thousands of attempts for a comparison stays cheap.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from seatrial.case import Case
from seatrial.record import AttemptRecord, RunInfo, Verdict
from seatrial.store import AttemptFigures, Store


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
    empty head. ``attempts`` are given in attempt order within each case.
    """
    by_case: dict[str, list[AttemptFigures]] = defaultdict(list)
    for row in attempts:
        by_case[row.case_id].append(row)
    cases = [
        _outcome(head, by_case.pop(head.case_id)) for head in listed if head.case_id in by_case
    ]
    cases += [_outcome(CaseHead(case_id), rows) for case_id, rows in by_case.items()]
    return RunData(info=info, cases=tuple(cases))


def _outcome(head: CaseHead, rows: list[AttemptFigures]) -> CaseOutcome:
    # The conversions make a database's numeric types (PostgreSQL sums) plain Python numbers.
    return CaseOutcome(
        case_id=head.case_id,
        name=head.name,
        category=head.category,
        priority=head.priority,
        tags=head.tags,
        verdicts=tuple(r.verdict for r in rows),
        failure_types=tuple(r.failure_type for r in rows),
        wall_time_ms=tuple(float(r.wall_time_ms) for r in rows),
        tokens=tuple(int(r.tokens) for r in rows),
        cost_usd=tuple(float(r.cost_usd) for r in rows),
        tool_calls=tuple(int(r.tool_calls) for r in rows),
    )


def load_run(store: Store, run_id: str) -> RunData:
    """Read a stored run for comparison (no traces)."""
    records = store.attempts(run_id)
    first_seen: dict[str, int] = {}
    for record in records:
        first_seen.setdefault(record.case_id, len(first_seen))
    records.sort(key=lambda r: (first_seen[r.case_id], r.attempt))
    listed = (CaseHead.of(case) for case in store.run_cases(run_id))
    return run_data(store.get_run(run_id), listed, (figures_of(r) for r in records))
