"""L1 assertions on recovery from failed tool calls: ``repairs_within``, ``no_identical_retry``.

A **failed call** is a tool call that ended with an error (``error.type`` or an error status),
an injected fault (``seatrial.fault``) included; a call the permission policy refused is not
one (the agent should not retry it). A failed call is **repaired** by the first later call of
the same tool that succeeds. The **model turns** it took are the agent's model calls (``chat``
spans not made for a judge or a simulated user) that started after the failed call and before
the repairing one: a model that sees the error and repairs at once took 1. An agent whose
trace holds no model calls (a Python agent calling tools directly) is counted in tool calls
instead: the repairing call's position among all later calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from seatrial.assertion._common import Names, short
from seatrial.assertion._l1_tools import times
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.trace import Trace, TraceToolCall
from seatrial.trace import attrs as A

_NOT_FAILURES = frozenset({"permission_denied"})
_AGENT_PURPOSES = (None, "agent")


@dataclass(frozen=True)
class Recovery:
    """What followed one failed tool call."""

    tool: str
    call: int
    """1-based number of the failed call among the calls of its tool."""
    error_type: str
    """The error (for an injected fault, the fault's kind)."""
    fault: str | None
    """The injected fault, when the failure was one."""
    arguments: Any
    """The failed call's arguments."""
    repaired_after: int | None
    """Model turns (tool calls, without model calls) until the same tool succeeded; None when
    it never did."""
    unit: str
    """``model turn`` or ``tool call``: what ``repaired_after`` counts."""
    next_call: TraceToolCall | None
    """The next call of the same tool, if any."""

    @property
    def identical_retry(self) -> bool:
        """The next call of the tool repeated the failed call's arguments exactly."""
        return self.next_call is not None and _same(self.next_call.arguments, self.arguments)

    def describe(self) -> str:
        """``book`` call 1 (injected http_500)."""
        why = f"injected {self.fault}" if self.fault else self.error_type
        return f"`{self.tool}` call {self.call} ({why})"


def _same(left: Any, right: Any) -> bool:
    def canonical(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)

    return canonical(left) == canonical(right)


def _failed(call: TraceToolCall) -> bool:
    if call.span.attributes.get(A.FAULT) is not None:
        return True
    return not call.success and call.error_type not in _NOT_FAILURES


def recoveries(trace: Trace) -> list[Recovery]:
    """Every failed tool call of ``trace`` and what followed it, in trace order."""
    calls = trace.tool_calls()
    turns = [
        m.span.start_time_unix_nano
        for m in trace.model_calls()
        if m.span.attributes.get(A.GATEWAY_PURPOSE) in _AGENT_PURPOSES
    ]
    unit = "model turn" if turns else "tool call"
    numbers: dict[str, int] = {}
    found: list[Recovery] = []
    for index, call in enumerate(calls):
        numbers[call.name] = numbers.get(call.name, 0) + 1
        if not _failed(call):
            continue
        later = [(i, c) for i, c in enumerate(calls[index + 1 :], start=1) if c.name == call.name]
        repair = next(((i, c) for i, c in later if not _failed(c)), None)
        after: int | None = None
        if repair is not None:
            if turns:
                start = call.span.start_time_unix_nano
                end = repair[1].span.start_time_unix_nano
                after = sum(1 for t in turns if start < t < end)
            else:
                after = repair[0]
        fault = call.span.attributes.get(A.FAULT)
        found.append(
            Recovery(
                tool=call.name,
                call=numbers[call.name],
                error_type=call.error_type or "error",
                fault=str(fault) if fault is not None else None,
                arguments=call.arguments,
                repaired_after=after,
                unit=unit,
                next_call=later[0][1] if later else None,
            )
        )
    return found


def _in_scope(ctx: AssertionContext, tools: list[str] | None) -> list[Recovery]:
    found = recoveries(ctx.trace)
    return found if tools is None else [r for r in found if r.tool in tools]


def _unfired(ctx: AssertionContext, tools: list[str] | None, found: list[Recovery]) -> str | None:
    """Why the check cannot be judged: the case planned faults and none fired."""
    planned = [f for f in ctx.case.tool_faults if tools is None or f.tool in tools]
    if not planned or any(r.fault for r in found):
        return None
    counts = {f.tool: sum(c.name == f.tool for c in ctx.tool_calls()) for f in planned}
    shown = "; ".join(
        f"`{f.tool}` {f.fault} at call {f.at_call} (called {times(counts[f.tool])})"
        for f in planned
    )
    return f"no injected fault fired: {shown}; nothing to judge the recovery on"


def _count(number: int, unit: str) -> str:
    return f"{number} {unit}" + ("" if number == 1 else "s")


class RepairsWithinParams(AssertionParams):
    """Parameters of ``repairs_within``."""

    turns: int = Field(default=2, ge=1)
    """Most model turns (tool calls, for an agent without model calls) between a failed call
    and the same tool's next successful call."""
    tools: Names | None = None
    """Only failures of these tools; unset: every tool."""


@assertion("repairs_within", level="L1", params=RepairsWithinParams, failure_type="recovery")
def repairs_within(params: RepairsWithinParams, ctx: AssertionContext) -> Check:
    """After each failed tool call (an injected fault included), the same tool succeeded
    within ``turns`` model turns."""
    found = _in_scope(ctx, params.tools)
    unfired = _unfired(ctx, params.tools, found)
    if unfired is not None:
        return Check.not_evaluated(unfired)
    if not found:
        return Check.passed("no tool call failed: nothing to repair")
    problems, repaired = [], []
    for r in found:
        if r.repaired_after is not None and r.repaired_after <= params.turns:
            repaired.append(f"{r.describe()} after {_count(r.repaired_after, r.unit)}")
            continue
        if r.repaired_after is not None:
            what = f"repaired only after {_count(r.repaired_after, r.unit)}"
        elif r.next_call is None:
            what = f"`{r.tool}` was never called again"
        else:
            what = f"no later call of `{r.tool}` succeeded"
        problems.append(
            f"{r.describe()} was not repaired within {_count(params.turns, r.unit)}: {what}"
        )
    if problems:
        return Check.failed("; ".join(problems))
    return Check.passed("repaired: " + "; ".join(repaired))


class NoIdenticalRetryParams(AssertionParams):
    """Parameters of ``no_identical_retry``."""

    tools: Names | None = None
    """Only failures of these tools; unset: every tool."""
    ignore: list[str] = Field(default_factory=list)
    """Errors (``error.type`` or fault kinds, e.g. ``[http_500, timeout]``) after which an
    identical retry is fine."""


@assertion("no_identical_retry", level="L1", params=NoIdenticalRetryParams, failure_type="recovery")
def no_identical_retry(params: NoIdenticalRetryParams, ctx: AssertionContext) -> Check:
    """After a failed tool call, the next call of that tool changed its arguments."""
    scope = _in_scope(ctx, params.tools)
    unfired = _unfired(ctx, params.tools, scope)
    found = [r for r in scope if r.error_type not in params.ignore]
    if unfired is not None:
        return Check.not_evaluated(unfired)
    retries = [r for r in found if r.identical_retry]
    if retries:
        return Check.failed(
            "; ".join(
                f"{r.describe()} failed and the next call repeated the identical arguments "
                f"{short(r.arguments)}"
                for r in retries
            )
        )
    if not found:
        return Check.passed("no tool call failed")
    return Check.passed(f"no failed call was repeated identically ({len(found)} failed)")
