"""Building traces and contexts for assertion tests: spans with fixed, readable times."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from seatrial.assertion import AssertionContext, Check, lookup
from seatrial.case import AssertionSpec, Case
from seatrial.trace import Span, SpanEvent, Trace
from seatrial.trace import attrs as A

MS = 1_000_000
START = 1_700_000_000_000 * MS


class TraceBuilder:
    """Lays spans end to end under one ``invoke_agent`` span, like a real recorder would."""

    def __init__(self, agent: str = "demo") -> None:
        self.clock = START
        self.count = 0
        self.root = self._span(
            f"invoke_agent {agent}", {A.OPERATION: A.OP_INVOKE_AGENT, A.AGENT_NAME: agent}, None
        )
        self.spans = [self.root]

    def _span(self, name: str, attributes: dict[str, Any], parent: str | None) -> Span:
        self.count += 1
        return Span(
            trace_id="ab" * 16,
            span_id=f"{self.count:016x}",
            parent_span_id=parent,
            name=name,
            start_time_unix_nano=self.clock,
            attributes=attributes,
        )

    def _close(self, span: Span, duration_ms: float) -> Span:
        self.clock += int(duration_ms * MS)
        span.end_time_unix_nano = self.clock
        self.spans.append(span)
        return span

    def tool(
        self,
        name: str,
        arguments: Any = None,
        result: Any = None,
        *,
        error: str | None = None,
        turn: int | None = None,
        kind: str | None = None,
        duration_ms: float = 10,
    ) -> Span:
        """Record one tool call (``error`` is its error.type)."""
        attributes: dict[str, Any] = {A.OPERATION: A.OP_EXECUTE_TOOL, A.TOOL_NAME: name}
        if arguments is not None:
            attributes[A.TOOL_ARGUMENTS] = json.dumps(arguments, ensure_ascii=False)
        if result is not None:
            attributes[A.TOOL_RESULT] = json.dumps(result, ensure_ascii=False)
        if error is not None:
            attributes[A.ERROR_TYPE] = error
        if turn is not None:
            attributes[A.TURN_INDEX] = turn
        if kind is not None:
            attributes[A.EVENT_KIND] = kind
        span = self._span(f"execute_tool {name}", attributes, self.root.span_id)
        span.status = "error" if error else "ok"
        return self._close(span, duration_ms)

    def chat(
        self,
        model: str = "gpt-4o",
        input_tokens: int = 0,
        output_tokens: int = 0,
        cost_usd: float | None = None,
        duration_ms: float = 100,
    ) -> Span:
        """Record one model call."""
        attributes: dict[str, Any] = {
            A.OPERATION: A.OP_CHAT,
            A.REQUEST_MODEL: model,
            A.INPUT_TOKENS: input_tokens,
            A.OUTPUT_TOKENS: output_tokens,
        }
        if cost_usd is not None:
            attributes[A.COST_USD] = cost_usd
        return self._close(self._span(f"chat {model}", attributes, self.root.span_id), duration_ms)

    def event(self, name: str, attributes: dict[str, Any], span: Span | None = None) -> None:
        """Add a span event (to the root unless another span is given)."""
        target = span or self.root
        target.events.append(SpanEvent(name=name, time_unix_nano=self.clock, attributes=attributes))

    def permission(self, tool: str, decision: str, scope: str = "once", span: Span | None = None):
        """A sandbox permission decision."""
        self.event(
            A.PERMISSION,
            {
                A.PERMISSION_TOOL: tool,
                A.PERMISSION_SCOPE: scope,
                A.PERMISSION_DECISION: decision,
                A.PERMISSION_REASON: f"{scope} grant",
            },
            span,
        )

    def trace(self, *, ended: bool = True, wall_time_ms: float | None = None) -> Trace:
        """The trace; the agent span ends after its children (or after ``wall_time_ms``)."""
        if ended:
            end = self.clock if wall_time_ms is None else START + int(wall_time_ms * MS)
            self.root.end_time_unix_nano = end
        return Trace(trace_id="ab" * 16, spans=list(self.spans))


def make_case(**fields: Any) -> Case:
    """A case with one user message unless ``turns`` or ``input`` is given."""
    if "turns" not in fields:
        fields.setdefault("input", "hello")
    fields.setdefault("id", "case-1")
    return Case(**fields)


def context(
    trace: Trace | None = None,
    *,
    case: Case | None = None,
    response: str | None = None,
    responses: list[str] | None = None,
    final_state: dict[str, Any] | None = None,
    workspace: Path | None = None,
) -> AssertionContext:
    """An assertion context; ``response`` defaults to the last of ``responses``."""
    responses = list(responses or ([] if response is None else [response]))
    return AssertionContext(
        case=case or make_case(),
        trace=trace or TraceBuilder().trace(),
        response=response if response is not None else (responses[-1] if responses else ""),
        responses=responses,
        final_state=final_state,
        workspace=workspace,
    )


def check(type_name: str, ctx: AssertionContext, **params: Any) -> Check:
    """Validate ``params`` as the type's parameters and run its check."""
    kind = lookup(type_name)
    return kind.check(kind.params.model_validate(params), ctx)


def spec(type_name: str, **keys: Any) -> AssertionSpec:
    """An assertion as a case would write it."""
    return AssertionSpec(type=type_name, **keys)
