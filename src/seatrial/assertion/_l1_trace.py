"""L1 assertions on the trace as a whole: forbidden events, limits, permissions, routing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field, model_validator

from seatrial.assertion._common import NameMatch, Names, name_matches
from seatrial.assertion._l1_tools import times
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.trace import Span, Trace, TraceToolCall
from seatrial.trace import attrs as A

DENIED_DECISIONS = frozenset({"denied", "deny"})
"""Recorded ``decision`` values that are refusals (compared case-insensitively)."""
GRANTED_DECISIONS = frozenset({"granted", "grant", "allowed", "allow"})
"""Recorded ``decision`` values that are grants (compared case-insensitively)."""
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
        op = event.value(A.STATE_OP) if event.name == A.STATE_CHANGE else None
        if op is not None:
            target = event.value(A.STATE_TARGET, "?")
            found.append((str(op), span.span_id, f"state change `{op}` of {target}"))
    return found


def _may_occur(ctx: AssertionContext, kinds: list[str]) -> bool:
    """Whether any of ``kinds`` occurred, by name only (no descriptions): the usual answer on
    every attempt is no, and :func:`event_occurrences` describes every occurrence."""
    wanted = set(kinds)
    if any(call.name in wanted for call in ctx.tool_calls()):
        return True
    for span in ctx.trace.spans:
        # Read from the models' dicts: a pydantic model's attributes go through its
        # __getattr__ hook, several times the cost, and this runs for every attempt.
        fields = span.__dict__
        kind = fields["attributes"].get(A.EVENT_KIND)
        if kind is not None and str(kind) in wanted:
            return True
        for event in fields["events"]:
            name = event.__dict__["name"]
            if name in wanted:
                return True
            op = event.value(A.STATE_OP) if name == A.STATE_CHANGE else None
            if op is not None and str(op) in wanted:
                return True
    return False


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
    expected = params.expected
    if not _may_occur(ctx, expected):
        return Check.passed("none of " + ", ".join(expected) + " occurred")
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


_LIMIT_FIGURES: dict[str, Callable[[AssertionContext, Trace], float]] = {
    "tool_calls": lambda ctx, trace: len(ctx.tool_calls()),
    "model_calls": lambda ctx, trace: len(trace.model_calls()),
    "wall_time_ms": lambda ctx, trace: trace.wall_time_ms(),
    "tokens": lambda ctx, trace: sum(trace.token_usage()),
    "cost_usd": lambda ctx, trace: trace.cost_usd(),
}
"""How each figure that ``limits`` checks is read off an attempt."""


@assertion("limits", level="L1", params=LimitsParams, failure_type="limit_exceeded")
def limits(params: LimitsParams, ctx: AssertionContext) -> Check:
    """Tool calls, model calls, wall time, tokens and cost stayed within their limits."""
    trace = ctx.trace
    exceeded, within = [], []
    # The model's dict holds its fields in declaration order: one read of it
    # costs less than five attribute reads through pydantic's hook.
    for name, limit in params.__dict__.items():
        if limit is None:
            continue
        # Only the figures that have a limit are computed: this runs on every attempt.
        value = _LIMIT_FIGURES[name](ctx, trace)
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


def _word(value: Any) -> str:
    return str(value).strip().casefold() if value is not None else ""


def _recorded_refusals(ctx: AssertionContext) -> tuple[list[str], set[str]]:
    """Reasons for every recorded refusal, and the spans of the refused calls."""
    problems: list[str] = []
    refused: set[str] = set()
    for span, event in ctx.trace.events(A.PERMISSION):
        if _word(event.value(A.PERMISSION_DECISION)) not in DENIED_DECISIONS:
            continue
        refused.add(span.span_id)
        tool = event.value(A.PERMISSION_TOOL) or span.attributes.get(A.TOOL_NAME, "?")
        scope = event.value(A.PERMISSION_SCOPE)
        why = event.value(A.PERMISSION_REASON)
        parts = [f"scope {scope}" if scope else "", str(why) if why else ""]
        detail = ", ".join(part for part in parts if part)
        problems.append(f"`{tool}` was denied" + (f" ({detail})" if detail else ""))
    for call in ctx.tool_calls():
        if call.error_type == PERMISSION_DENIED_ERROR and call.span.span_id not in refused:
            refused.add(call.span.span_id)
            problems.append(f"`{call.name}` was denied")
    return problems, refused


def _recorded_once_grants(ctx: AssertionContext) -> dict[str, int]:
    """Tools whose every recorded grant has scope ``once``, with how many were granted."""
    scopes: dict[str, list[str]] = {}
    for span, event in ctx.trace.events(A.PERMISSION):
        if _word(event.value(A.PERMISSION_DECISION)) not in GRANTED_DECISIONS:
            continue
        tool = event.value(A.PERMISSION_TOOL) or span.attributes.get(A.TOOL_NAME)
        if tool is not None:
            scopes.setdefault(str(tool), []).append(_word(event.value(A.PERMISSION_SCOPE)))
    return {tool: len(found) for tool, found in scopes.items() if all(s == "once" for s in found)}


@assertion(
    "permissions_respected",
    level="L1",
    params=PermissionsRespectedParams,
    failure_type="permission_violation",
)
def permissions_respected(params: PermissionsRespectedParams, ctx: AssertionContext) -> Check:
    """The agent never tried a tool beyond its grants: the case's, and those the trace records.

    The case's ``allowed_tools`` and ``permissions`` are always checked against the calls.
    Recorded ``seatrial.permission`` decisions only add evidence: a recorded refusal fails,
    and so does a call beyond the ``once`` grants the trace records for its tool; a recorded
    grant never excuses a call the case does not allow (one ``once`` grant read as a grant
    for the whole session is the incident this check exists for).
    """
    problems, refused = _recorded_refusals(ctx)
    calls = ctx.tool_calls()
    by_tool: dict[str, list[TraceToolCall]] = {}
    for call in calls:
        by_tool.setdefault(call.name, []).append(call)

    def unreported(beyond: list[TraceToolCall]) -> bool:
        # A call the sandbox already refused is reported above, with the sandbox's reason.
        return any(call.span.span_id not in refused for call in beyond)

    judged: set[str] = set()
    allowed = ctx.case.allowed_tools
    for tool, made in by_tool.items():
        count = times(len(made))
        scope = ctx.case.permissions.get(tool)
        if allowed is not None and tool not in allowed:
            judged.add(tool)
            if unreported(made):
                problems.append(f"`{tool}` is not in allowed_tools (called {count})")
        elif scope == "deny":
            judged.add(tool)
            if unreported(made):
                problems.append(f"`{tool}` is denied but was called {count}")
        elif scope == "once":
            judged.add(tool)
            if unreported(made[1:]):
                problems.append(f"`{tool}` is granted once but was called {count}")
        elif scope == "session":
            judged.add(tool)
    for tool, grants in _recorded_once_grants(ctx).items():
        # Only tools the case says nothing about: the case's own entry is the grant.
        unrefused = [c for c in by_tool.get(tool, []) if c.span.span_id not in refused]
        if tool not in judged and len(unrefused) > grants:
            decisions = "decision" if grants == 1 else "decisions"
            problems.append(
                f"`{tool}` was granted `once` by {grants} recorded {decisions} but was "
                f"called {times(len(unrefused))}"
            )
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
        str(event.value(A.SKILL_NAME))
        for _, event in trace.events(A.SKILL)
        if event.value(A.SKILL_NAME) is not None
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
            "the trace carries no skill-routing evidence (no `seatrial.skill` event with `name` "
            "or `seatrial.skill.name`, and no `seatrial.skill.name` span attribute); report "
            "routing from the agent to evaluate this"
        )
    if any(name_matches(skill, params.expected, params.match) for skill in skills):
        return Check.passed(f"routed to `{params.expected}`")
    return Check.failed(f"routed to {', '.join(skills)}; expected `{params.expected}`")


class TraceCompleteParams(AssertionParams):
    """``trace_complete`` takes no parameters."""


def _listed(spans: list[Span]) -> str:
    names = ", ".join(f"`{span.name}`" for span in spans[:3])
    return names + (f" and {len(spans) - 3} more" if len(spans) > 3 else "")


def _orphans(spans: list[Span]) -> str | None:
    known = {span.span_id for span in spans}
    orphans = [s for s in spans if s.parent_span_id is not None and s.parent_span_id not in known]
    if len(orphans) == 1 and orphans[0].operation == A.OP_INVOKE_AGENT:
        # The agent's own root may hang under its caller's span in another service (an HTTP
        # server span, a traceparent header): the run itself is whole. Only a lone agent
        # root is forgiven; a model or tool call without its parent means the root was lost.
        return None
    if not orphans:
        return None
    missing = ", ".join(dict.fromkeys(str(s.parent_span_id) for s in orphans))
    have = "has a parent" if len(orphans) == 1 else f"({len(orphans)} spans) have a parent"
    return (
        f"{_listed(orphans)} {have} missing from the trace (span id {missing}): the agent's "
        "root span never arrived (a crash or a lost export)"
    )


@assertion("trace_complete", level="L1", params=TraceCompleteParams, failure_type="agent_error")
def trace_complete(params: TraceCompleteParams, ctx: AssertionContext) -> Check:
    """The whole run was recorded: an agent span, every parent present, every span ended.

    Each way a trace can be cut short has its own reason: no ``invoke_agent`` span; spans
    whose parent is missing (the agent's root span never arrived: a crash, a lost export);
    spans that never ended; an ``invoke_agent`` span with error status.
    """
    spans = ctx.trace.spans
    agent = ctx.trace.agent_span()
    problems: list[str] = []
    if agent is None:
        problems.append(
            f"the trace has no invoke_agent span ({len(spans)} spans): "
            "the agent's run was not recorded"
        )
    orphans = _orphans(spans)
    if orphans is not None:
        problems.append(orphans)
    open_spans = [s for s in spans if s.end_time_unix_nano is None]
    if open_spans:
        problems.append(f"{_listed(open_spans)} never ended: the run was cut off")
    for span in spans:
        if span.operation == A.OP_INVOKE_AGENT and span.status == "error":
            why = f": {span.status_message}" if span.status_message else ""
            problems.append(f"`{span.name}` ended with error status{why}")
    if problems or agent is None:
        return Check.failed("; ".join(problems))
    return Check.passed(
        f"`{agent.name}` ended after {agent.duration_ms:.0f} ms; all {len(spans)} spans ended "
        "under a recorded parent"
    )
