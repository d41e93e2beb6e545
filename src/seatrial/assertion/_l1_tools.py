"""L1 assertions on the tool calls of a trace: which, how often, in what order, how they ended."""

from __future__ import annotations

import json
from collections import Counter
from typing import Literal

from pydantic import Field, model_validator

from seatrial.assertion._common import NameMatch, Names, called_names, name_matches
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.i18n import english
from seatrial.trace import TraceToolCall


def times(count: int) -> str:
    """``once``, ``2 times``, ``0 times``."""
    return "once" if count == 1 else f"{count} times"


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
            raise ValueError("max_times must be at least min_times")
        return self


@assertion("tool_called", level="L1", params=ToolCalledParams, failure_type="tool_not_called")
def tool_called(params: ToolCalledParams, ctx: AssertionContext) -> Check:
    """Each expected tool was called at least ``min_times`` (and at most ``max_times``)."""
    calls = ctx.tool_calls()
    # The parameters read once: a pydantic model's attributes cost several times a local's,
    # and this check runs on most attempts.
    match, min_times, max_times = params.match, params.min_times, params.max_times
    names = [call.name for call in calls]
    too_few: list[str] = []
    too_many: list[str] = []
    seen: list[str] = []
    for wanted in params.expected:
        if match == "exact":
            count = names.count(wanted)
        else:
            count = sum(name_matches(name, wanted, match) for name in names)
        label = _label(wanted, match)
        seen.append(f"{label} {times(count)}")
        if count < min_times:
            too_few.append(f"{label} was called {times(count)}, expected at least {min_times}")
        elif max_times is not None and count > max_times:
            too_many.append(f"{label} was called {times(count)}, at most {max_times} allowed")
    if too_few:
        called = f"tools called: {english(called_names(calls))}"
        return Check.failed("; ".join(too_few + too_many) + f" ({called})")
    if too_many:
        called = f"tools called: {english(called_names(calls))}"
        return Check.failed("; ".join(too_many) + f" ({called})", failure_type="wrong_tool")
    return Check.passed("called " + ", ".join(seen))


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
    found = []
    for wanted in params.expected:
        hits = [call for call in calls if name_matches(call.name, wanted, params.match)]
        if hits:
            found.append(f"{_label(wanted, params.match)} was called {times(len(hits))}")
    if found:
        return Check.failed("; ".join(found))
    return Check.passed("none of " + ", ".join(params.expected) + " was called")


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
    called = f"tools called: {english(called_names(calls))}"
    if params.mode == "exact":
        same = len(names) == len(params.expected) and all(
            name_matches(name, want, params.match)
            for name, want in zip(names, params.expected, strict=True)
        )
        if same:
            return Check.passed(f"called exactly {wanted}")
        return Check.failed(f"expected exactly {wanted} ({called})")
    if params.mode == "in_order":
        position = 0
        for step, want in enumerate(params.expected, start=1):
            while position < len(names) and not name_matches(names[position], want, params.match):
                position += 1
            if position == len(names):
                after = f" after `{params.expected[step - 2]}`" if step > 1 else ""
                return Check.failed(
                    f"expected {wanted}: step {step} `{want}` was not called{after} ({called})"
                )
            position += 1
        return Check.passed(f"called {wanted} in order")
    unused = list(names)
    missing = []
    for want in params.expected:
        index = next((i for i, n in enumerate(unused) if name_matches(n, want, params.match)), None)
        if index is None:
            missing.append(want)
        else:
            unused.pop(index)
    if missing:
        return Check.failed(f"not called: {', '.join(missing)} ({called})")
    return Check.passed(f"called {', '.join(params.expected)}")


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
                f"never called: {', '.join(missing)} "
                f"(tools called: {english(called_names(calls))})",
                failure_type="tool_not_called",
            )
        groups = {name: groups[name] for name in params.expected}
    if not groups:
        return Check.passed("no tool was called")
    problems = []
    for name, group in groups.items():
        if params.mode == "last":
            if not group[-1].success:
                problems.append(
                    f"the last of {len(group)} calls of `{name}` failed ({group[-1].error_type})"
                )
            continue
        failed = [call for call in group if not call.success]
        if failed:
            errors = ", ".join(sorted({str(call.error_type) for call in failed}))
            problems.append(f"`{name}` failed {len(failed)} of {len(group)} calls ({errors})")
    if problems:
        return Check.failed("; ".join(problems))
    which = "the last call of each tool" if params.mode == "last" else "every call"
    return Check.passed(f"{which} succeeded ({', '.join(groups)})")


class NoLoopParams(AssertionParams):
    """Parameters of ``no_loop``."""

    max_repeats: int = Field(default=1, ge=0)
    """How many times an identical failing call may be repeated (1: one retry is fine)."""


@assertion("no_loop", level="L1", params=NoLoopParams, failure_type="loop")
def no_loop(params: NoLoopParams, ctx: AssertionContext) -> Check:
    """No failing call (same tool, same arguments) was repeated more than ``max_repeats`` times."""
    failing: Counter[tuple[str, str]] = Counter()
    errors: dict[tuple[str, str], str | None] = {}
    for call in ctx.tool_calls():
        if call.success:
            continue
        arguments = json.dumps(call.arguments, sort_keys=True, ensure_ascii=False, default=str)
        key = (call.name, arguments)
        failing[key] += 1
        errors[key] = call.error_type
    loops = [
        f"`{name}` failed {times(count)} with the same arguments {_cut(arguments)}"
        f" ({errors[(name, arguments)]})"
        for (name, arguments), count in failing.items()
        if count - 1 > params.max_repeats
    ]
    if loops:
        return Check.failed("; ".join(loops) + f"; {_allowed(params.max_repeats)}")
    return Check.passed(f"no failing call was repeated more than {times(params.max_repeats)}")


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _allowed(max_repeats: int) -> str:
    if max_repeats == 0:
        return "no repeat of a failing call is allowed"
    return f"a failing call may be repeated at most {times(max_repeats)}"
