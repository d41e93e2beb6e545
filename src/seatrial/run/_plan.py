"""A case planned once per run: what every attempt of it needs, worked out before the first.

The runner plans each case of a run once (:func:`plan_cases`) and hands the plan to each of
the case's attempts: its assertions checked and ordered, its case and fixture hashes for the
attempt's snapshot, whether it needs a workspace. Nothing is kept between runs: a plan lives
as long as the run that made it, so no table keyed by an object's address or a case id can
hand one run's plan to another.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from seatrial.agent import SANDBOX_TOOLS
from seatrial.assertion import Planned, plan
from seatrial.case import Case
from seatrial.run._snapshot import case_hash, fixture_hash


def needs_workspace(case: Case) -> bool:
    """A workspace is made when the case has a fixture or names a sandbox tool."""
    if case.fixture:
        return True
    named = set(case.allowed_tools or ()) | set(case.permissions)
    return not named.isdisjoint(SANDBOX_TOOLS)


@dataclass(frozen=True, slots=True)
class CasePlan:
    """One case as a run's attempts use it; made by :meth:`of`."""

    case: Case
    assertions: tuple[Planned, ...]
    """The case's assertions in evaluation order (``seatrial.assertion.plan``)."""
    case_hash: str
    """:func:`case_hash` of the case, stored in each attempt's snapshot."""
    fixture_hash: str | None
    """:func:`fixture_hash` of its fixture folder (hashed once per run, not per attempt)."""
    needs_workspace: bool
    """Whether each attempt gets a workspace (:func:`needs_workspace`)."""

    @classmethod
    def of(cls, case: Case) -> CasePlan:
        """Plan ``case``. Raises :class:`SuiteError` naming an unknown assertion type or
        invalid parameters."""
        return cls(
            case=case,
            assertions=plan(case),
            case_hash=case_hash(case),
            fixture_hash=fixture_hash(case.fixture),
            needs_workspace=needs_workspace(case),
        )


def plan_cases(cases: Iterable[Case]) -> dict[str, CasePlan]:
    """Every case planned once, by case id."""
    return {case.id: CasePlan.of(case) for case in cases}
