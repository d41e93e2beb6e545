"""L1 assertions on recovery from failed tool calls: ``repairs_within``, ``no_identical_retry``.

A **failed call** is a tool call that ended with an error (``error.type`` or an error status),
an injected fault (``seatrial.fault``) included; a call the permission policy refused is not
one (the agent should not retry it). What repairs it depends on the class of the failure:

- a **transient** failure (``http_500``, ``timeout``, an ``empty`` or ``malformed_json``
  result: :data:`TRANSIENT_FAULTS`, as a fault kind or an ``error.type``) is repaired by the
  first later call of the same tool that succeeds, the identical call included: sending it
  again is the right answer, a bounded number of times (``no_identical_retry``'s
  ``transient_retries``, default :data:`TRANSIENT_RETRIES`);
- a **validation** error (an injected ``missing_param`` or ``bad_enum``) is repaired by the
  first later successful call that changed the way the message said: it sets the parameter the
  message named as missing, or gives the refused parameter one of the allowed values (the span
  records both: ``seatrial.fault.parameter``, ``seatrial.fault.allowed``); an identical resend
  is never a repair and always fails ``no_identical_retry``;
- any other error (a tool's own ``ToolError`` ...) is repaired by the first later successful
  call of the tool; an identical retry after it fails ``no_identical_retry`` unless ``ignore``
  names it.

The **model turns** a repair took are the agent's model calls (``chat`` spans not made for a
judge or a simulated user) that started after the failed call and before the repairing one: a
model that sees the error and repairs at once took 1. An agent whose trace holds no model calls
(a Python agent calling tools directly) is counted in tool calls instead: the repairing call's
position among all later calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from pydantic import Field

from seatrial.assertion._common import Names, short, times
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.i18n import Message, phrased, phrased_plural
from seatrial.trace import Trace, TraceToolCall
from seatrial.trace import attrs as A

_NOT_FAILURES = frozenset({"permission_denied"})
_AGENT_PURPOSES = (None, "agent")

TRANSIENT_FAULTS = frozenset({"http_500", "timeout", "empty", "malformed_json"})
"""Failures after which sending the identical call again is a repair."""
VALIDATION_FAULTS = frozenset({"missing_param", "bad_enum"})
"""Injected faults whose repair is a call changed the way the message says."""
TRANSIENT_RETRIES = 2
"""Identical retries in a row after a transient failure that ``no_identical_retry`` allows."""


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
    parameter: str | None
    """The parameter a validation fault's message named (``seatrial.fault.parameter``)."""
    allowed: tuple[Any, ...] | None
    """The values a ``bad_enum`` fault's message allowed (``seatrial.fault.allowed``)."""
    repaired_after: int | None
    """Model turns (tool calls, without model calls) until the same tool succeeded; None when
    it never did."""
    unit: str
    """``model turn`` or ``tool call``: what ``repaired_after`` counts."""
    next_call: TraceToolCall | None
    """The next call of the same tool, if any."""
    identical_retries: int = 0
    """Later calls of the tool in a row that repeated the failed call's arguments exactly, up
    to the first that succeeded."""
    unfixed_success: bool = False
    """A later call of the tool succeeded without the change a validation fault asked for."""
    span_id: str | None = None
    """The failed call's span."""

    @property
    def identical_retry(self) -> bool:
        """The next call of the tool repeated the failed call's arguments exactly."""
        return self.identical_retries > 0

    @property
    def transient(self) -> bool:
        """The failure was transient: an identical retry repairs it."""
        return (self.fault or self.error_type) in TRANSIENT_FAULTS

    def fixes(self, call: TraceToolCall) -> bool:
        """``call`` changed the way the failure asked (any call, after a non-validation one)."""
        if self.fault not in VALIDATION_FAULTS:
            return True
        given = call.arguments if isinstance(call.arguments, dict) else {}
        if self.parameter is None:
            return not _same(call.arguments, self.arguments)
        value = given.get(self.parameter)
        if self.fault == "missing_param":
            return value not in (None, "")
        if self.allowed is not None:
            return any(_same(value, allowed) for allowed in self.allowed)
        refused = self.arguments.get(self.parameter) if isinstance(self.arguments, dict) else None
        return self.parameter in given and not _same(value, refused)

    def wanted(self) -> Message:
        """What a repairing call had to do: ``set `date```."""
        if self.fault not in VALIDATION_FAULTS:
            return phrased("succeeded")
        if self.parameter is None:
            return phrased("changed its arguments and succeeded")
        if self.fault == "missing_param":
            return phrased("set `{parameter}`", parameter=self.parameter)
        if self.allowed is not None:
            return phrased(
                "gave `{parameter}` one of the allowed values {values}",
                parameter=self.parameter,
                values=", ".join(short(v) for v in self.allowed),
            )
        return phrased("changed `{parameter}`", parameter=self.parameter)

    def describe(self) -> Message:
        """``book`` call 1 (injected http_500)."""
        if self.fault:
            return phrased(
                "`{tool}` call {call} (injected {fault})",
                tool=self.tool,
                call=self.call,
                fault=self.fault,
            )
        return phrased(
            "`{tool}` call {call} ({error})", tool=self.tool, call=self.call, error=self.error_type
        )


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
        fault = call.span.attributes.get(A.FAULT)
        parameter = call.span.attributes.get(A.FAULT_PARAMETER)
        failed = Recovery(
            tool=call.name,
            call=numbers[call.name],
            error_type=call.error_type or "error",
            fault=str(fault) if fault is not None else None,
            arguments=call.arguments,
            parameter=str(parameter) if parameter is not None else None,
            allowed=_allowed(call.span.attributes.get(A.FAULT_ALLOWED)),
            repaired_after=None,
            unit=unit,
            next_call=later[0][1] if later else None,
            span_id=call.span.span_id,
        )
        successes = [(i, c) for i, c in later if not _failed(c)]
        repair = next(((i, c) for i, c in successes if failed.fixes(c)), None)
        after: int | None = None
        if repair is not None:
            if turns:
                start = call.span.start_time_unix_nano
                end = repair[1].span.start_time_unix_nano
                after = sum(1 for t in turns if start < t < end)
            else:
                after = repair[0]
        found.append(
            replace(
                failed,
                repaired_after=after,
                identical_retries=_identical_in_a_row(call, [c for _, c in later]),
                unfixed_success=bool(successes) and repair is None,
            )
        )
    return found


def _identical_in_a_row(failed: TraceToolCall, later: list[TraceToolCall]) -> int:
    count = 0
    for call in later:
        if not _same(call.arguments, failed.arguments):
            break
        count += 1
        if not _failed(call):
            break
    return count


def _allowed(value: Any) -> tuple[Any, ...] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return None
    return tuple(parsed) if isinstance(parsed, list) else None


def _in_scope(ctx: AssertionContext, tools: list[str] | None) -> list[Recovery]:
    found = recoveries(ctx.trace)
    return found if tools is None else [r for r in found if r.tool in tools]


def _unfired(
    ctx: AssertionContext, tools: list[str] | None, found: list[Recovery]
) -> Message | None:
    """Why the check cannot be judged: the case planned faults and none fired."""
    planned = [f for f in ctx.case.tool_faults if tools is None or f.tool in tools]
    if not planned or any(r.fault for r in found):
        return None
    counts = {f.tool: sum(c.name == f.tool for c in ctx.tool_calls()) for f in planned}
    shown = [
        phrased(
            "`{tool}` {fault} at call {at} (called {count})",
            tool=f.tool,
            fault=f.fault,
            at=f.at_call,
            count=times(counts[f.tool]),
        )
        for f in planned
    ]
    return phrased(
        "no injected fault fired: {planned}; nothing to judge the recovery on", planned=shown
    )


def _count(number: int, unit: str) -> Message:
    """``2 model turns``, ``1 tool call``: what :attr:`Recovery.repaired_after` counts."""
    if unit == "model turn":
        return phrased_plural("{n} model turn", "{n} model turns", number)
    return phrased_plural("{n} tool call", "{n} tool calls", number)


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
    within ``turns`` model turns; after a validation fault, with the call changed the way its
    message said."""
    found = _in_scope(ctx, params.tools)
    unfired = _unfired(ctx, params.tools, found)
    if unfired is not None:
        return Check.not_evaluated(unfired)
    if not found:
        return Check.passed(phrased("no tool call failed: nothing to repair"))
    problems: list[tuple[Message, str | None]] = []
    repaired: list[Message] = []
    for r in found:
        if r.repaired_after is not None and r.repaired_after <= params.turns:
            after = _count(r.repaired_after, r.unit)
            repaired.append(phrased("{call} after {count}", call=r.describe(), count=after))
            continue
        what: Message
        if r.repaired_after is not None:
            what = phrased("repaired only after {count}", count=_count(r.repaired_after, r.unit))
        elif r.next_call is None:
            what = phrased("`{tool}` was never called again", tool=r.tool)
        elif r.unfixed_success:
            what = phrased("no later call of `{tool}` {wanted}", tool=r.tool, wanted=r.wanted())
        else:
            what = phrased("no later call of `{tool}` succeeded", tool=r.tool)
        said = phrased(
            "{call} was not repaired within {limit}: {what}",
            call=r.describe(),
            limit=_count(params.turns, r.unit),
            what=what,
        )
        problems.append((said, r.span_id))
    if problems:
        # The result points at the first failed call the reason names.
        reason = phrased("{problems}", problems=[said for said, _ in problems])
        return Check.failed(reason, span_id=problems[0][1])
    return Check.passed(phrased("repaired: {calls}", calls=repaired))


class NoIdenticalRetryParams(AssertionParams):
    """Parameters of ``no_identical_retry``."""

    tools: Names | None = None
    """Only failures of these tools; unset: every tool."""
    ignore: list[str] = Field(default_factory=list)
    """More errors (``error.type`` or fault kinds) after which an identical retry is fine, as
    after a transient failure."""
    transient_retries: int = Field(default=TRANSIENT_RETRIES, ge=0)
    """Identical retries in a row allowed after a transient failure (``http_500``,
    ``timeout``, ``empty``, ``malformed_json``, and the ``ignore`` errors); one more fails."""


@assertion("no_identical_retry", level="L1", params=NoIdenticalRetryParams, failure_type="recovery")
def no_identical_retry(params: NoIdenticalRetryParams, ctx: AssertionContext) -> Check:
    """After a failed tool call, the next call of that tool changed its arguments; after a
    transient failure, at most ``transient_retries`` identical retries in a row."""
    found = _in_scope(ctx, params.tools)
    unfired = _unfired(ctx, params.tools, found)
    if unfired is not None:
        return Check.not_evaluated(unfired)
    if not found:
        return Check.passed(phrased("no tool call failed"))
    problems: list[tuple[Message, str | None]] = []
    covered: set[tuple[str, int]] = set()
    for r in found:
        if (r.tool, r.call) in covered:
            continue  # a retry already counted in the run of retries it belongs to
        covered.update((r.tool, r.call + n) for n in range(1, r.identical_retries + 1))
        retryable = r.transient or r.error_type in params.ignore or r.fault in params.ignore
        if retryable and r.identical_retries > params.transient_retries:
            said = phrased(
                "{call} failed and the identical call was sent again {count} in a row (at most "
                "{allowed} after a transient failure): {arguments}",
                call=r.describe(),
                count=_times(r.identical_retries),
                allowed=_times(params.transient_retries),
                arguments=short(r.arguments),
            )
            problems.append((said, r.span_id))
        elif not retryable and r.identical_retry:
            said = phrased(
                "{call} failed and the next call repeated the identical arguments {arguments}",
                call=r.describe(),
                arguments=short(r.arguments),
            )
            problems.append((said, r.span_id))
    if problems:
        # The result points at the first failed call that was sent again.
        reason = phrased("{problems}", problems=[said for said, _ in problems])
        return Check.failed(reason, span_id=problems[0][1])
    if any(r.identical_retry for r in found):
        return Check.passed(
            phrased(
                "identical calls only after transient failures, at most {allowed} in a row "
                "({failed} failed)",
                allowed=_times(params.transient_retries),
                failed=len(found),
            )
        )
    return Check.passed(
        phrased("no failed call was repeated identically ({failed} failed)", failed=len(found))
    )


def _times(number: int) -> Message:
    """``no time``, ``once``, ``twice``, ``3 times``."""
    if number == 0:
        return phrased("no time")
    if number == 2:
        return phrased("twice")
    return times(number)
