"""L1 assertions on the tool calls of a trace: which, how often, in what order, how they ended."""

from __future__ import annotations

import json
from collections import Counter
from typing import Literal

from pydantic import Field, model_validator

from seatrial.assertion import _common
from seatrial.assertion._common import (
    NameMatch,
    Names,
    each,
    enumerated,
    name_matches,
    with_called,
)
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.i18n import Message, phrased
from seatrial.i18n import gettext as _
from seatrial.trace import TraceToolCall


def _label(name: str, match: NameMatch) -> str:
    return f"`{name}*`" if match == "prefix" else f"`{name}`"


class ToolCalledParams(AssertionParams):
    """Parameters of ``tool_called``."""

    expected: Names = Field(min_length=1)
    """The tool that must be called, or a list of tools that must all be called."""
    match: NameMatch = "exact"
    """``exact`` compares whole names; ``prefix`` accepts any tool whose name starts so."""
    min_times: int = Field(default=1, ge=0)
    """Fewest calls of each expected tool."""
    max_times: int | None = Field(default=None, ge=0)
    """Most calls of each expected tool; unset means no upper bound."""

    @model_validator(mode="after")
    def _bounds(self) -> ToolCalledParams:
        if self.max_times is not None and self.max_times < self.min_times:
            raise ValueError(_("max_times must be at least min_times"))
        return self


@assertion("tool_called", level="L1", params=ToolCalledParams, failure_type="tool_not_called")
def tool_called(params: ToolCalledParams, ctx: AssertionContext) -> Check:
    """Each expected tool was called at least ``min_times`` (and at most ``max_times``)."""
    calls = ctx.tool_calls()
    # The parameters read once: a pydantic model's attributes cost several times a local's,
    # and this check runs on most attempts.
    match, min_times, max_times = params.match, params.min_times, params.max_times
    names = [call.name for call in calls]
    too_few: list[Message] = []
    too_many: list[Message] = []
    seen: list[Message] = []
    over: list[TraceToolCall] = []  # each tool's first call over the limit
    for wanted in params.expected:
        if match == "exact":
            count = names.count(wanted)
        else:
            count = sum(name_matches(name, wanted, match) for name in names)
        label = _label(wanted, match)
        said = _common.times(count)
        seen.append(phrased("{tool} {times}", tool=label, times=said))
        if count < min_times:
            too_few.append(
                phrased(
                    "{tool} was called {times}, expected at least {min}",
                    tool=label,
                    times=said,
                    min=min_times,
                )
            )
        elif max_times is not None and count > max_times:
            too_many.append(
                phrased(
                    "{tool} was called {times}, at most {max} allowed",
                    tool=label,
                    times=said,
                    max=max_times,
                )
            )
            over.append(
                [call for call in calls if name_matches(call.name, wanted, match)][max_times]
            )
    # The result points at the earliest call over a limit, if any.
    span_id = _earliest(calls, over).span.span_id if over else None
    if too_few:
        return Check.failed(with_called(each(too_few + too_many), calls), span_id=span_id)
    if too_many:
        return Check.failed(
            with_called(each(too_many), calls), failure_type="wrong_tool", span_id=span_id
        )
    return Check.passed(phrased("called {tools}", tools=enumerated(seen)))


class ToolNotCalledParams(AssertionParams):
    """Parameters of ``tool_not_called``."""

    expected: Names = Field(min_length=1)
    """The tool, or tools, that must never be called."""
    match: NameMatch = "exact"
    """``exact`` compares whole names; ``prefix`` forbids every tool whose name starts so."""


@assertion(
    "tool_not_called", level="L1", params=ToolNotCalledParams, failure_type="forbidden_action"
)
def tool_not_called(params: ToolNotCalledParams, ctx: AssertionContext) -> Check:
    """None of the expected tools was called (an attempt that was denied still counts)."""
    calls = ctx.tool_calls()
    found: list[Message] = []
    forbidden: list[TraceToolCall] = []
    for wanted in params.expected:
        hits = [call for call in calls if name_matches(call.name, wanted, params.match)]
        if hits:
            label = _label(wanted, params.match)
            found.append(
                phrased("{tool} was called {times}", tool=label, times=_common.times(len(hits)))
            )
            forbidden.append(hits[0])
    if found:  # pointing at the earliest forbidden call
        return Check.failed(each(found), span_id=_earliest(calls, forbidden).span.span_id)
    return Check.passed(phrased("none of {tools} was called", tools=", ".join(params.expected)))


class ToolSequenceParams(AssertionParams):
    """Parameters of ``tool_sequence``."""

    expected: list[str] = Field(min_length=1)
    """Tool names in the order they should be called."""
    mode: Literal["exact", "in_order", "any_order"] = "in_order"
    """``exact``: these calls and no others, in this order; ``in_order``: these calls in this
    order, others allowed in between; ``any_order``: each listed call happened, in any order."""
    match: NameMatch = "exact"
    """``exact`` compares whole names; ``prefix`` accepts names that start so."""


@assertion("tool_sequence", level="L1", params=ToolSequenceParams, failure_type="wrong_tool")
def tool_sequence(params: ToolSequenceParams, ctx: AssertionContext) -> Check:
    """The tools were called in the expected order (``exact``, ``in_order`` or ``any_order``)."""
    calls = ctx.tool_calls()
    names = [call.name for call in calls]
    wanted = " → ".join(params.expected)
    if params.mode == "exact":
        stray = _first_stray(calls, params.expected, params.match)
        if stray is None and len(names) == len(params.expected):
            return Check.passed(phrased("called exactly {sequence}", sequence=wanted))
        return Check.failed(
            with_called(phrased("expected exactly {sequence}", sequence=wanted), calls),
            span_id=None if stray is None else stray.span.span_id,
        )
    if params.mode == "in_order":
        position = 0
        for step, want in enumerate(params.expected, start=1):
            while position < len(names) and not name_matches(names[position], want, params.match):
                position += 1
            if position == len(names):
                return Check.failed(with_called(_step_missing(wanted, step, params), calls))
            position += 1
        return Check.passed(phrased("called {sequence} in order", sequence=wanted))
    unused = list(names)
    missing = []
    for want in params.expected:
        index = next((i for i, n in enumerate(unused) if name_matches(n, want, params.match)), None)
        if index is None:
            missing.append(want)
        else:
            unused.pop(index)
    if missing:
        return Check.failed(
            with_called(phrased("not called: {tools}", tools=", ".join(missing)), calls)
        )
    return Check.passed(phrased("called {tools}", tools=", ".join(params.expected)))


def _first_stray(
    calls: list[TraceToolCall], expected: list[str], match: NameMatch
) -> TraceToolCall | None:
    """The first call that breaks an exact sequence: one in the wrong place, or one too many."""
    for index, call in enumerate(calls):
        if index >= len(expected) or not name_matches(call.name, expected[index], match):
            return call
    return None


def _step_missing(wanted: str, step: int, params: ToolSequenceParams) -> Message:
    tool = params.expected[step - 1]
    if step == 1:
        return phrased(
            "expected {sequence}: step {step} `{tool}` was not called",
            sequence=wanted,
            step=step,
            tool=tool,
        )
    return phrased(
        "expected {sequence}: step {step} `{tool}` was not called after `{previous}`",
        sequence=wanted,
        step=step,
        tool=tool,
        previous=params.expected[step - 2],
    )


class ToolSuccessParams(AssertionParams):
    """Parameters of ``tool_success``."""

    expected: Names | None = None
    """The tool, or tools, whose calls must succeed; unset means every tool called."""
    mode: Literal["all", "last"] = "all"
    """``all``: every call succeeded; ``last``: the last call of each tool succeeded (the agent
    repaired a failed call)."""


@assertion("tool_success", level="L1", params=ToolSuccessParams, failure_type="wrong_params")
def tool_success(params: ToolSuccessParams, ctx: AssertionContext) -> Check:
    """Every call (or the last call of each tool) ended without an error."""
    calls = ctx.tool_calls()
    groups: dict[str, list[TraceToolCall]] = {}
    for call in calls:
        groups.setdefault(call.name, []).append(call)
    if params.expected is not None:
        missing = [name for name in params.expected if name not in groups]
        if missing:
            return Check.failed(
                with_called(phrased("never called: {tools}", tools=", ".join(missing)), calls),
                failure_type="tool_not_called",
            )
        groups = {name: groups[name] for name in params.expected}
    if not groups:
        return Check.passed(phrased("no tool was called"))
    problems: list[Message] = []
    broken: list[TraceToolCall] = []
    for name, group in groups.items():
        if params.mode == "last" or len(group) == 1:
            last = group[-1]
            if not last.success:
                problems.append(_last_failed(name, len(group), last.error_type))
                broken.append(last)
            continue
        failed = [call for call in group if not call.success]
        if failed:
            errors = ", ".join(sorted({str(call.error_type) for call in failed}))
            problems.append(
                phrased(
                    "`{tool}` failed {failed} of {total} calls ({errors})",
                    tool=name,
                    failed=len(failed),
                    total=len(group),
                    errors=errors,
                )
            )
            broken.append(failed[0])
    if problems:  # pointing at the earliest failed call the reason names
        return Check.failed(each(problems), span_id=_earliest(calls, broken).span.span_id)
    tools = ", ".join(groups)
    if params.mode == "last":
        return Check.passed(phrased("the last call of each tool succeeded ({tools})", tools=tools))
    return Check.passed(phrased("every call succeeded ({tools})", tools=tools))


def _earliest(calls: list[TraceToolCall], some: list[TraceToolCall]) -> TraceToolCall:
    """The first of ``some`` (calls of ``calls``) in the order they were made."""
    return next(call for call in calls if any(call is one for one in some))


def _last_failed(tool: str, count: int, error: str | None) -> Message:
    if count == 1:
        return phrased("the only call of `{tool}` failed ({error})", tool=tool, error=str(error))
    return phrased(
        "the last of {count} calls of `{tool}` failed ({error})",
        count=count,
        tool=tool,
        error=str(error),
    )


class NoLoopParams(AssertionParams):
    """Parameters of ``no_loop``."""

    max_repeats: int = Field(default=1, ge=0)
    """How many times an identical failing call may be repeated (1: one retry is fine)."""


@assertion("no_loop", level="L1", params=NoLoopParams, failure_type="loop")
def no_loop(params: NoLoopParams, ctx: AssertionContext) -> Check:
    """No failing call (same tool, same arguments) was repeated more than ``max_repeats`` times."""
    failing: Counter[tuple[str, str]] = Counter()
    errors: dict[tuple[str, str], str | None] = {}
    firsts: dict[tuple[str, str], TraceToolCall] = {}
    for call in ctx.tool_calls():
        if call.success:
            continue
        arguments = json.dumps(call.arguments, sort_keys=True, ensure_ascii=False, default=str)
        key = (call.name, arguments)
        failing[key] += 1
        errors[key] = call.error_type
        firsts.setdefault(key, call)
    looped = [key for key, count in failing.items() if count - 1 > params.max_repeats]
    if looped:
        loops = [
            phrased(
                "`{tool}` failed {times} with the same arguments {arguments} ({error})",
                tool=name,
                times=_common.times(failing[(name, arguments)]),
                arguments=_cut(arguments),
                error=str(errors[(name, arguments)]),
            )
            for name, arguments in looped
        ]
        # Pointing at the failed call the first loop kept retrying.
        return Check.failed(
            each([*loops, _allowed(params.max_repeats)]), span_id=firsts[looped[0]].span.span_id
        )
    return Check.passed(
        phrased(
            "no failing call was repeated more than {times}",
            times=_common.times(params.max_repeats),
        )
    )


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _allowed(max_repeats: int) -> Message:
    if max_repeats == 0:
        return phrased("no repeat of a failing call is allowed")
    return phrased(
        "a failing call may be repeated at most {times}", times=_common.times(max_repeats)
    )
