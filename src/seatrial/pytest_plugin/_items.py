"""A suite file as a pytest collector, and each of its cases as one item.

Items carry markers from their case, so ``-m`` selects by them: ``seatrial`` on every item,
the priority (``P0``, ``P1``, ``P2``), ``category_<category>`` and ``tag_<tag>`` (characters
that cannot appear in a marker name become ``_``). The suite runs once for all selected items
(:mod:`seatrial.pytest_plugin._session`); an item only reads its case's verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import ExceptionInfo, TerminalRepr, TracebackStyle

    from seatrial.case import Case
    from seatrial.pytest_plugin._session import SeatrialSession

PRIORITIES = ("P0", "P1", "P2")
"""The priority markers."""

VERDICT_PROPERTY = "seatrial_verdict"
"""The ``user_properties`` key holding a case's verdict (junit.xml shows it too)."""

RUN_PROPERTY = "seatrial_run"
"""The ``user_properties`` key holding the stored run's id."""

SESSION_KEY: pytest.StashKey[SeatrialSession] = pytest.StashKey()
"""Where the pytest config keeps the Seatrial session of a ``--seatrial`` run."""


class CaseFailed(AssertionError):
    """A Seatrial case did not pass (FAIL or ERROR over its repeats); the message says why:
    the failed assertions with their messages and the failing trajectory."""


def marker_name(prefix: str, text: str) -> str:
    """``category_read_only`` for ``("category", "read-only")``; empty when nothing is left."""
    slug = re.sub(r"\W+", "_", text).strip("_")
    return f"{prefix}_{slug}" if slug else ""


def _described(case: Case) -> dict[str, str]:
    """Each marker of ``case`` with the ini line that registers it."""
    found = {
        "seatrial": "seatrial: a case of a Seatrial suite (pytest --seatrial SUITE)",
        case.priority: f"{case.priority}: Seatrial cases of priority {case.priority}",
    }
    for prefix, text in [("category", case.category), *(("tag", tag) for tag in case.tags)]:
        name = marker_name(prefix, text)
        if name:
            found.setdefault(name, f"{name}: Seatrial cases of {prefix} {text}")
    return found


def markers_of(case: Case) -> list[str]:
    """The markers an item of ``case`` carries, in a stable order."""
    return list(_described(case))


def marker_lines(cases: Iterable[Case]) -> list[str]:
    """The ``markers`` ini lines that register every marker ``cases`` give their items, and
    the three priorities, so that ``-m P2 --strict-markers`` is no error in any suite."""
    lines = {p: f"{p}: Seatrial cases of priority {p}" for p in PRIORITIES}
    for case in cases:
        for name, line in _described(case).items():
            lines.setdefault(name, line)
    return list(lines.values())


class SuiteFile(pytest.File):
    """A suite file named by ``--seatrial``: one item per case, in suite order."""

    def collect(self) -> Iterator[CaseItem]:
        """One :class:`CaseItem` per case of the suite loaded when pytest started."""
        state: SeatrialSession = self.config.stash[SESSION_KEY]
        for case in state.suite_at(self.path).cases:
            yield CaseItem.from_parent(self, name=case.id, case=case)


class CaseItem(pytest.Item):
    """One case of a suite; passes or fails with the case's verdict over its repeats."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        for name in markers_of(case):
            self.add_marker(name)

    def runtest(self) -> None:
        """Read the case's verdict from the suite's run: PASS and WARNING pass, FAIL and ERROR
        raise :class:`CaseFailed` with the reasons and the trajectory."""
        state: SeatrialSession = self.config.stash[SESSION_KEY]
        result, run_id = state.result_of(self.path, self.case.id)
        self.user_properties += [(VERDICT_PROPERTY, result.verdict), (RUN_PROPERTY, run_id)]
        from seatrial.pytest_plugin._failure import failure_text, warning_text

        if result.verdict == "WARNING":
            self.add_report_section("call", "seatrial", warning_text(result))
        elif result.verdict != "PASS":
            raise CaseFailed(failure_text(result, run_id))

    def repr_failure(
        self, excinfo: ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        """The reasons and the trajectory, without a Python traceback (none of it is the
        test's code)."""
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        """The suite file, and the case id as the item's name in reports."""
        return self.path, None, f"seatrial case {self.name}"
