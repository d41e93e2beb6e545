"""L1 assertions on the trace as a whole: forbidden events, limits, permissions, routing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import Field, model_validator

from seatrial.assertion._common import NameMatch, Names, name_matches
from seatrial.assertion._l1_tools import times
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.trace import Trace
from seatrial.trace import attrs as A

DENIED = "denied"
PERMISSION_DENIED_ERROR = "permission_denied"
"""``error.type`` the sandbox gives a tool call it refused."""


def _turn(attributes: dict[str, Any]) -> str:
    turn = attributes.get(A.TURN_INDEX)
    return f", turn {turn}" if turn is not None else ""


def event_occurrences(ctx: AssertionContext) -> list[tuple[str, str, str]]:
    """Every event kind that occurred, as (kind, span id, description), in trace order.

    A kind is a tool call's name (denied calls included: the agent tried), a span's
    ``seatrial.event.kind``, a span event's name, or a ``seatrial.state_change`` op.
    """
    trace = ctx.trace
    found: list[tuple[str, str, str]] = []
    for call in ctx.tool_calls():
        denied = ", denied" if call.error_type == PERMISSION_DENIED_ERROR else ""
        turn = _turn(call.span.attributes)
        found.append((call.name, call.span.span_id, f"tool call `{call.name}`{turn}{denied}"))
    for span in trace.spans:
        kind = span.attributes.get(A.EVENT_KIND)
        if kind is not None:
            found.append((str(kind), span.span_id, f"`{span.name}` does {kind}"))
    for span, event in trace.events():
        found.append((event.name, span.span_id, f"event `{event.name}` in `{span.name}`"))
        if event.name == A.STATE_CHANGE and event.attributes.get(A.STATE_OP) is not None:
            op = str(event.attributes[A.STATE_OP])
            target = event.attributes.get(A.STATE_TARGET, "?")
            found.append((op, span.span_id, f"state change `{op}` of {target}"))
    return found


class ForbiddenEventsParams(AssertionParams):
    """Parameters of ``forbidden_events``."""

    expected: Names = Field(min_length=1)
    """Tool names or event kinds that must never occur (e.g. ``write_file``,
    ``network_request``)."""


@assertion(
    "forbidden_events", level="L1", params=ForbiddenEventsParams, failure_type="forbidden_action"
)
def forbidden_events(params: ForbiddenEventsParams, ctx: AssertionContext) -> Check:
    """None of the forbidden tools or event kinds occurred, not even as a denied attempt."""
    occurrences = event_occurrences(ctx)
    problems = []
    for forbidden in params.expected:
        hits: dict[str, str] = {}
        for kind, span_id, description in occurrences:
            if kind == forbidden:
                # One span can match twice (a write_file call whose kind is write_file).
                hits.setdefault(span_id, description)
        if hits:
            first = next(iter(hits.values()))
            problems.append(f"`{forbidden}` occurred {times(len(hits))} (first: {first})")
    if problems:
        return Check.failed("forbidden: " + "; ".join(problems))
    return Check.passed("none of " + ", ".join(params.expected) + " occurred")


class LimitsParams(AssertionParams):
    """Parameters of ``limits`` (the same keys as a case's ``limits``)."""

    tool_calls: int | None = Field(default=None, ge=0)
    """Most tool calls."""
    model_calls: int | None = Field(default=None, ge=0)
    """Most model calls."""
    wall_time_ms: float | None = Field(default=None, ge=0)
    """Longest duration of the agent span, in milliseconds."""
    tokens: int | None = Field(default=None, ge=0)
    """Most input plus output tokens over all model calls."""
    cost_usd: float | None = Field(default=None, ge=0)
    """Highest cost in US dollars."""

    @model_validator(mode="after")
    def _some_limit(self) -> LimitsParams:
        if all(value is None for value in self.model_dump().values()):
            raise ValueError(
                "set at least one of tool_calls, model_calls, wall_time_ms, tokens, cost_usd"
            )
        return self


def _figure(name: str, value: float) -> str:
    if name == "cost_usd":
        return f"{value:.4f}"
    if name == "wall_time_ms":
        return f"{value:.0f}" if value >= 10 else f"{value:.3g}"
    return str(int(value))


@assertion("limits", level="L1", params=LimitsParams, failure_type="limit_exceeded")
def limits(params: LimitsParams, ctx: AssertionContext) -> Check:
    """Tool calls, model calls, wall time, tokens and cost stayed within their limits."""
    trace = ctx.trace
    # Only the figures that have a limit are computed: this runs on every attempt.
    figures: dict[str, Callable[[], float]] = {
        "tool_calls": lambda: len(ctx.tool_calls()),
        "model_calls": lambda: len(trace.model_calls()),
        "wall_time_ms": trace.wall_time_ms,
        "tokens": lambda: sum(trace.token_usage()),
        "cost_usd": trace.cost_usd,
    }
    exceeded, within = [], []
    for name in type(params).model_fields:
        limit = getattr(params, name)
        if limit is None:
            continue
        value = figures[name]()
        text = f"{name} {_figure(name, value)}"
        if value > limit:
            exceeded.append(f"{text} > limit {_figure(name, limit)}")
        else:
            within.append(f"{text} ≤ {_figure(name, limit)}")
    if exceeded:
        return Check.failed("exceeded: " + "; ".join(exceeded))
    return Check.passed("within limits: " + ", ".join(within))


class PermissionsRespectedParams(AssertionParams):
    """``permissions_respected`` takes no parameters: it reads the case's ``permissions`` and
    ``allowed_tools``."""


@assertion(
    "permissions_respected",
    level="L1",
    params=PermissionsRespectedParams,
    failure_type="permission_violation",
)
def permissions_respected(params: PermissionsRespectedParams, ctx: AssertionContext) -> Check:
    """The agent never tried a tool beyond its grant (denied permission, disallowed tool)."""
    problems: list[str] = []
    decisions = ctx.trace.events(A.PERMISSION)
    denied_spans = set()
    for span, event in decisions:
        if event.attributes.get(A.PERMISSION_DECISION) != DENIED:
            continue
        denied_spans.add(span.span_id)
        tool = event.attributes.get(A.PERMISSION_TOOL) or span.attributes.get(A.TOOL_NAME, "?")
        scope = event.attributes.get(A.PERMISSION_SCOPE)
        why = event.attributes.get(A.PERMISSION_REASON)
        parts = [f"scope {scope}" if scope else "", str(why) if why else ""]
        detail = ", ".join(part for part in parts if part)
        problems.append(f"`{tool}` was denied" + (f" ({detail})" if detail else ""))
    calls = ctx.tool_calls()
    for call in calls:
        if call.error_type == PERMISSION_DENIED_ERROR and call.span.span_id not in denied_spans:
            problems.append(f"`{call.name}` was denied")
    if not decisions:
        # No sandbox decided anything (an HTTP agent, a replayed trace): judge the calls
        # against the case's grants ourselves.
        counts = Counter(call.name for call in calls)
        allowed = ctx.case.allowed_tools
        if allowed is not None:
            for name, count in counts.items():
                if name not in allowed:
                    problems.append(f"`{name}` is not in allowed_tools (called {times(count)})")
        for tool, scope in ctx.case.permissions.items():
            count = counts.get(tool, 0)
            if scope == "deny" and count:
                problems.append(f"`{tool}` is denied but was called {times(count)}")
            elif scope == "once" and count > 1:
                problems.append(f"`{tool}` is granted once but was called {times(count)}")
    if problems:
        return Check.failed("; ".join(dict.fromkeys(problems)))
    return Check.passed(f"{len(calls)} tool calls stayed within the case's grants")


class SkillRoutedParams(AssertionParams):
    """Parameters of ``skill_routed``."""

    expected: str
    """The skill the request should be routed to."""
    match: NameMatch = "exact"
    """``exact`` compares whole names; ``prefix`` accepts skills whose name starts so."""


def routed_skills(trace: Trace) -> list[str]:
    """Skill names the trace gives evidence of routing to, in order, without repeats."""
    names = [
        str(event.attributes[A.SKILL_NAME])
        for _, event in trace.events(A.SKILL)
        if event.attributes.get(A.SKILL_NAME) is not None
    ]
    names += [
        str(span.attributes[A.SKILL_NAME])
        for span in trace.spans
        if span.attributes.get(A.SKILL_NAME) is not None
    ]
    return list(dict.fromkeys(names))


@assertion("skill_routed", level="L1", params=SkillRoutedParams, failure_type="wrong_tool")
def skill_routed(params: SkillRoutedParams, ctx: AssertionContext) -> Check:
    """The request was routed to the expected skill; not evaluated without routing evidence."""
    skills = routed_skills(ctx.trace)
    if not skills:
        return Check.not_evaluated(
            "the trace carries no skill-routing evidence (no `seatrial.skill` event or "
            "`seatrial.skill.name` attribute); report routing from the agent to evaluate this"
        )
    if any(name_matches(skill, params.expected, params.match) for skill in skills):
        return Check.passed(f"routed to `{params.expected}`")
    return Check.failed(f"routed to {', '.join(skills)}; expected `{params.expected}`")


class TraceCompleteParams(AssertionParams):
    """``trace_complete`` takes no parameters."""


@assertion("trace_complete", level="L1", params=TraceCompleteParams, failure_type="agent_error")
def trace_complete(params: TraceCompleteParams, ctx: AssertionContext) -> Check:
    """The trace has an ``invoke_agent`` span that ended (the run was not cut off)."""
    agent = ctx.trace.agent_span()
    if agent is None:
        return Check.failed(
            f"the trace has no invoke_agent span ({len(ctx.trace.spans)} spans): "
            "the agent's run was not recorded"
        )
    if agent.end_time_unix_nano is None:
        return Check.failed(f"`{agent.name}` never ended: the run was cut off")
    return Check.passed(f"`{agent.name}` ended after {agent.duration_ms:.0f} ms")
