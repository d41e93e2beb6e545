"""L1 assertions on the trace as a whole: forbidden events, limits, routing, completeness."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field, model_validator

from seatrial.assertion._common import NameMatch, Names, name_matches, times
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.i18n import Message, english, phrased, phrased_plural
from seatrial.i18n import gettext as _
from seatrial.trace import Span, Trace, TraceToolCall
from seatrial.trace import attrs as A

PERMISSION_DENIED_ERROR = "permission_denied"
"""``error.type`` the sandbox gives a tool call it refused."""


def listed(problems: list[Message]) -> Message:
    """Several problems as one reason, in the order found, each once ("; " between them)."""
    unique = {english(problem): problem for problem in problems}
    return phrased("{problems}", problems=list(unique.values()))


def _tool_call(call: TraceToolCall) -> Message:
    turn = call.span.attributes.get(A.TURN_INDEX)
    if call.error_type == PERMISSION_DENIED_ERROR:
        if turn is None:
            return phrased("tool call `{tool}`, denied", tool=call.name)
        return phrased("tool call `{tool}`, turn {turn}, denied", tool=call.name, turn=turn)
    if turn is None:
        return phrased("tool call `{tool}`", tool=call.name)
    return phrased("tool call `{tool}`, turn {turn}", tool=call.name, turn=turn)


def event_occurrences(ctx: AssertionContext) -> list[tuple[str, str, Message]]:
    """Every event kind that occurred, as (kind, span id, description), in trace order.

    A kind is a tool call's name (denied calls included: the agent tried), a span's
    ``seatrial.event.kind``, a span event's name, or a ``seatrial.state_change`` op.
    """
    trace = ctx.trace
    found: list[tuple[str, str, Message]] = []
    for call in ctx.tool_calls():
        found.append((call.name, call.span.span_id, _tool_call(call)))
    for span in trace.spans:
        kind = span.attributes.get(A.EVENT_KIND)
        if kind is not None:
            said = phrased("`{span}` does {kind}", span=span.name, kind=str(kind))
            found.append((str(kind), span.span_id, said))
    for span, event in trace.events():
        said = phrased("event `{event}` in `{span}`", event=event.name, span=span.name)
        found.append((event.name, span.span_id, said))
        op = event.value(A.STATE_OP) if event.name == A.STATE_CHANGE else None
        if op is not None:
            target = str(event.value(A.STATE_TARGET, "?"))
            said = phrased("state change `{op}` of {target}", op=str(op), target=target)
            found.append((str(op), span.span_id, said))
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
    none_occurred = phrased("none of {names} occurred", names=", ".join(expected))
    if not _may_occur(ctx, expected):
        return Check.passed(none_occurred)
    occurrences = event_occurrences(ctx)
    problems: list[Message] = []
    first_span: str | None = None
    for forbidden in params.expected:
        hits: dict[str, Message] = {}
        for kind, span_id, description in occurrences:
            if kind == forbidden:
                # One span can match twice (a write_file call whose kind is write_file).
                hits.setdefault(span_id, description)
        if hits:
            span_id, first = next(iter(hits.items()))
            first_span = first_span or span_id
            problems.append(
                phrased(
                    "`{kind}` occurred {count} (first: {first})",
                    kind=forbidden,
                    count=times(len(hits)),
                    first=first,
                )
            )
    if problems:
        return Check.failed(phrased("forbidden: {problems}", problems=problems), span_id=first_span)
    return Check.passed(none_occurred)


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
                _("set at least one of tool_calls, model_calls, wall_time_ms, tokens, cost_usd")
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


def _first_over(name: str, limit: float, ctx: AssertionContext, trace: Trace) -> str | None:
    """The span that took ``name`` over ``limit``: the first call past it, the model call
    (or costed span) whose tokens or cost crossed it; the agent span for wall time, or for
    tokens and cost recorded only as the agent's totals."""
    agent = trace.agent_span()
    fallback = agent.span_id if agent is not None else None
    if name == "tool_calls":
        calls = ctx.tool_calls()
        return calls[int(limit)].span.span_id if len(calls) > limit else fallback
    if name == "model_calls":
        models = trace.model_calls()
        return models[int(limit)].span.span_id if len(models) > limit else fallback
    total = 0.0
    if name == "tokens":
        for call in trace.model_calls():
            total += call.input_tokens + call.output_tokens
            if total > limit:
                return call.span.span_id
    if name == "cost_usd":
        for span in sorted(trace.spans, key=lambda s: s.start_time_unix_nano):
            if not A.seatrial_call(span.attributes):
                total += float(span.attributes.get(A.COST_USD) or 0.0)
                if total > limit:
                    return span.span_id
    return fallback


@assertion("limits", level="L1", params=LimitsParams, failure_type="limit_exceeded")
def limits(params: LimitsParams, ctx: AssertionContext) -> Check:
    """Tool calls, model calls, wall time, tokens and cost stayed within their limits."""
    trace = ctx.trace
    exceeded: list[Message] = []
    within: list[str] = []
    first_over: str | None = None
    # The model's dict holds its fields in declaration order: one read of it
    # costs less than five attribute reads through pydantic's hook.
    for name, limit in params.__dict__.items():
        if limit is None:
            continue
        # Only the figures that have a limit are computed: this runs on every attempt.
        value = _LIMIT_FIGURES[name](ctx, trace)
        if value > limit:
            exceeded.append(
                phrased(
                    "{name} {value} > limit {limit}",
                    name=name,
                    value=_figure(name, value),
                    limit=_figure(name, limit),
                )
            )
            first_over = first_over or _first_over(name, limit, ctx, trace)
        else:
            within.append(f"{name} {_figure(name, value)} ≤ {_figure(name, limit)}")
    if exceeded:
        return Check.failed(phrased("exceeded: {problems}", problems=exceeded), span_id=first_over)
    return Check.passed(phrased("within limits: {figures}", figures=", ".join(within)))


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


def _first_routing(trace: Trace) -> str | None:
    """The first span that records a routing decision (an event or its own attribute)."""
    for span in trace.spans:
        if span.attributes.get(A.SKILL_NAME) is not None or any(
            event.name == A.SKILL and event.value(A.SKILL_NAME) is not None for event in span.events
        ):
            return span.span_id
    return None


@assertion("skill_routed", level="L1", params=SkillRoutedParams, failure_type="wrong_tool")
def skill_routed(params: SkillRoutedParams, ctx: AssertionContext) -> Check:
    """The request was routed to the expected skill; not evaluated without routing evidence."""
    skills = routed_skills(ctx.trace)
    if not skills:
        return Check.not_evaluated(
            phrased(
                "the trace carries no skill-routing evidence (no `seatrial.skill` event with "
                "`name` or `seatrial.skill.name`, and no `seatrial.skill.name` span attribute); "
                "report routing from the agent to evaluate this"
            )
        )
    if any(name_matches(skill, params.expected, params.match) for skill in skills):
        return Check.passed(phrased("routed to `{skill}`", skill=params.expected))
    return Check.failed(
        phrased(
            "routed to {skills}; expected `{expected}`",
            skills=", ".join(skills),
            expected=params.expected,
        ),
        span_id=_first_routing(ctx.trace),
    )


class TraceCompleteParams(AssertionParams):
    """``trace_complete`` takes no parameters."""


def _named(spans: list[Span]) -> Message:
    names = ", ".join(f"`{span.name}`" for span in spans[:3])
    if len(spans) > 3:
        return phrased("{names} and {more} more", names=names, more=len(spans) - 3)
    return phrased("{names}", names=names)


def _orphans(spans: list[Span]) -> tuple[Message, str] | None:
    """Why spans whose parent is missing make the trace incomplete, and the first of them."""
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
    said = phrased_plural(
        "{spans} has a parent missing from the trace (span id {missing}): the agent's root "
        "span never arrived (a crash or a lost export)",
        "{spans} ({n} spans) have a parent missing from the trace (span id {missing}): the "
        "agent's root span never arrived (a crash or a lost export)",
        len(orphans),
        spans=_named(orphans),
        missing=missing,
    )
    return said, orphans[0].span_id


@assertion("trace_complete", level="L1", params=TraceCompleteParams, failure_type="agent_error")
def trace_complete(params: TraceCompleteParams, ctx: AssertionContext) -> Check:
    """The whole run was recorded: an agent span, every parent present, every span ended.

    Each way a trace can be cut short has its own reason: no ``invoke_agent`` span; spans
    whose parent is missing (the agent's root span never arrived: a crash, a lost export);
    spans that never ended; an ``invoke_agent`` span with error status.
    """
    spans = ctx.trace.spans
    agent = ctx.trace.agent_span()
    problems: list[Message] = []
    # The span the result points at: the first orphan, span left open or failed agent span.
    first: str | None = None
    if agent is None:
        problems.append(
            phrased_plural(
                "the trace has no invoke_agent span ({n} span): the agent's run was not recorded",
                "the trace has no invoke_agent span ({n} spans): the agent's run was not recorded",
                len(spans),
            )
        )
    orphans = _orphans(spans)
    if orphans is not None:
        problems.append(orphans[0])
        first = orphans[1]
    open_spans = [s for s in spans if s.end_time_unix_nano is None]
    if open_spans:
        problems.append(
            phrased("{spans} never ended: the run was cut off", spans=_named(open_spans))
        )
        first = first or open_spans[0].span_id
    for span in spans:
        if span.operation == A.OP_INVOKE_AGENT and span.status == "error":
            if span.status_message:
                said = phrased(
                    "`{span}` ended with error status: {error}",
                    span=span.name,
                    error=span.status_message,
                )
            else:
                said = phrased("`{span}` ended with error status", span=span.name)
            problems.append(said)
            first = first or span.span_id
    if problems or agent is None:
        return Check.failed(phrased("{problems}", problems=problems), span_id=first)
    return Check.passed(
        phrased_plural(
            "`{agent}` ended after {ms} ms; it is the trace's only span",
            "`{agent}` ended after {ms} ms; all {n} spans ended under a recorded parent",
            len(spans),
            agent=agent.name,
            ms=format(agent.duration_ms, ".0f"),
        )
    )
