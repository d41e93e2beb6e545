"""Coverage of one run: which tools and skills its cases exercised, and which none did.

The tools called come from the run's ``execute_tool`` spans, grouped in SQL by tool, case,
attempt and verdict (the store's ``tool_uses``); skills from ``seatrial.skill`` routing
evidence (``skill_uses``). The tools the cases
name (allowed tools, permission grants, tool assertions) come from the run's case definitions;
a named tool no attempt called is listed as not exercised.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import BaseModel, Field

from seatrial.case import Case
from seatrial.store import Store, skill_uses, tool_uses

MATRIX_CASES = 60
"""Most cases for which the cases x tools matrix is drawn."""
MATRIX_TOOLS = 30
"""Most tools and skills for which the matrix is drawn."""
_NAMING_ASSERTIONS = {"tool_called", "tool_sequence", "tool_params", "tool_success"}


class ToolCoverage(BaseModel):
    """One tool (or skill) as the run exercised it."""

    name: str
    """The tool's name (or the skill's)."""
    kind: str
    """``tool`` (an ``execute_tool`` span) or ``skill`` (a ``seatrial.skill`` routing)."""
    cases: int
    """Cases in which at least one attempt called it."""
    attempts: int
    """Attempts that called it."""
    passed: int
    """Of those attempts, the ones whose verdict is PASS."""
    pass_share: float
    """``passed / attempts``."""
    calls: int
    """Calls (or routings) over all attempts."""
    errors: int
    """Calls that ended in an error (status ``error``)."""
    error_rate: float
    """``errors / calls``."""
    named_by: int
    """Cases whose definition names it."""


class NotExercised(BaseModel):
    """A tool the cases name that no attempt of the run called."""

    name: str
    """The tool's name."""
    cases: list[str]
    """The cases naming it."""


class Coverage(BaseModel):
    """Tools and skills x cases x verdicts of one run."""

    suite: str | None
    """The run's suite."""
    suites: list[str] = Field(default_factory=list)
    """Every suite with a stored run."""
    run_id: str | None = None
    """The run read (None when the suite has none)."""
    cases: int = 0
    """Cases in the run."""
    tools: list[ToolCoverage] = Field(default_factory=list)
    """Tools and skills exercised, the most used first."""
    not_exercised: list[NotExercised] = Field(default_factory=list)
    """Tools the cases name that no attempt called."""
    matrix_cases: list[str] = Field(default_factory=list)
    """Rows of the matrix (empty when the suite is too large to draw one)."""
    matrix: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Calls per case and tool (``matrix[case][tool]``); absent cells are zero."""


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def named_tools(cases: list[Case]) -> tuple[dict[str, list[str]], set[str]]:
    """Tool names the case definitions name, as ``{tool: [case ids]}``, and the names that
    assertions match as prefixes (``match: prefix``)."""
    named: dict[str, list[str]] = defaultdict(list)
    prefixes: set[str] = set()
    for item in cases:
        found = list(item.allowed_tools or []) + list(item.permissions)
        for spec in item.assertions:
            kind = spec.type.strip().lower().replace("-", "_")
            if kind in _NAMING_ASSERTIONS:
                params = spec.params
                names = _names(params.get("tool")) + _names(params.get("expected"))
                found += names
                if params.get("match") == "prefix":
                    prefixes.update(names)
        for name in dict.fromkeys(found):
            named[name].append(item.id)
    return dict(named), prefixes


def _exercised(name: str, called: set[str], prefixes: set[str]) -> bool:
    if name in called:
        return True
    return name in prefixes and any(tool.startswith(name) for tool in called)


def coverage(store: Store, run_id: str, cases: list[Case]) -> Coverage:
    """The coverage of one run whose case definitions are ``cases``."""
    rows = [("tool", *use) for use in tool_uses(store, run_id)]
    rows += [("skill", *use, 1, 0) for use in skill_uses(store, run_id)]
    named, prefixes = named_tools(cases)
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    matrix: dict[str, dict[str, int]] = defaultdict(dict)
    for kind, name, case_id, attempt, verdict, calls, errors in rows:
        entry = seen.setdefault(
            (kind, name), {"cases": set(), "attempts": {}, "calls": 0, "errors": 0}
        )
        entry["cases"].add(case_id)
        entry["attempts"][(case_id, attempt)] = verdict == "PASS"
        entry["calls"] += calls
        entry["errors"] += errors
        matrix[case_id][name] = matrix[case_id].get(name, 0) + calls
    tools = []
    for (kind, name), entry in seen.items():
        tried = len(entry["attempts"])
        passed = sum(entry["attempts"].values())
        tools.append(
            ToolCoverage(
                name=name,
                kind=kind,
                cases=len(entry["cases"]),
                attempts=tried,
                passed=passed,
                pass_share=passed / tried,
                calls=entry["calls"],
                errors=entry["errors"],
                error_rate=entry["errors"] / entry["calls"] if entry["calls"] else 0.0,
                named_by=len(named.get(name, [])),
            )
        )
    tools.sort(key=lambda t: (-t.cases, -t.calls, t.name))
    called = {name for kind, name in seen if kind == "tool"}
    missing = [
        NotExercised(name=name, cases=ids)
        for name, ids in sorted(named.items())
        if not _exercised(name, called, prefixes)
    ]
    small = len(cases) <= MATRIX_CASES and len(seen) <= MATRIX_TOOLS
    return Coverage(
        suite=None,
        run_id=run_id,
        cases=len(cases),
        tools=tools,
        not_exercised=missing,
        matrix_cases=[c.id for c in cases] if small else [],
        matrix=dict(matrix) if small else {},
    )
