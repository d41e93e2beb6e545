"""The trace model: a tree of spans stored flat, aligned with OTel GenAI conventions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

from seatrial.trace import _attrs as A

TRACE_FORMAT_VERSION = 1


class SpanEvent(BaseModel):
    """A point-in-time event on a span (``seatrial.permission``, ``seatrial.state_change``)."""

    name: str
    """Event name, e.g. ``seatrial.permission``."""
    time_unix_nano: int
    """When it happened, nanoseconds since the epoch."""
    attributes: dict[str, Any] = Field(default_factory=dict)
    """Event attributes, namespaced (``seatrial.permission.decision``) or plain (``decision``)."""

    def value(self, key: str, default: Any = None) -> Any:
        """The attribute ``key`` (a namespaced name) in either spelling; see ``event_value``."""
        return A.event_value(self.attributes, key, default)


class SpanLink(BaseModel):
    """A link from a span to another span, of this trace or another (OTLP's ``Span.Link``):
    the batch job a request started, the request a queued task came from."""

    trace_id: str
    """Hex trace id of the linked span."""
    span_id: str
    """Hex span id of the linked span."""
    trace_state: str = ""
    """The linked context's W3C ``tracestate``."""
    attributes: dict[str, Any] = Field(default_factory=dict)
    """Attributes of the link."""


class Span(BaseModel):
    """One span: the agent's run, a model call, a tool call."""

    trace_id: str
    """Hex trace id shared by every span of one attempt."""
    span_id: str
    """Hex span id, unique within the trace."""
    parent_span_id: str | None = None
    """The parent's span id; None for the root."""
    name: str
    """Span name as the conventions spell it: ``chat gpt-4o``, ``execute_tool read_file``."""
    start_time_unix_nano: int
    """Start, nanoseconds since the epoch."""
    end_time_unix_nano: int | None = None
    """End, nanoseconds since the epoch; None when the span was cut off."""
    attributes: dict[str, Any] = Field(default_factory=dict)
    """Span attributes, OTel GenAI names plus ``seatrial.*``."""
    events: list[SpanEvent] = Field(default_factory=list)
    """Span events in time order."""
    status: Literal["unset", "ok", "error"] = "unset"
    """OTel status code."""
    status_message: str = ""
    """Description for an error status."""
    links: list[SpanLink] = Field(default_factory=list, exclude_if=lambda links: not links)
    """Links to other spans, as an OTLP export carried them (left out of a dump when none)."""

    @property
    def operation(self) -> str | None:
        """``gen_ai.operation.name`` of the span."""
        value = self.attributes.get(A.OPERATION)
        return str(value) if value is not None else None

    @property
    def duration_ms(self) -> float:
        """Duration in milliseconds (0 for a span that never ended)."""
        if self.end_time_unix_nano is None:
            return 0.0
        return (self.end_time_unix_nano - self.start_time_unix_nano) / 1e6


def decode_attribute(value: Any) -> Any:
    """Tool arguments and results are JSON strings in OTel; give back the structure."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


@dataclass(frozen=True)
class TraceToolCall:
    """A tool call read off an ``execute_tool`` span."""

    name: str
    success: bool
    error_type: str | None
    span: Span

    # Decoded from the span's JSON on first use (most checks read the names only, and the
    # metrics of every attempt count the calls), kept in the instance's dict: what
    # functools.cached_property does, without the lock it takes on every read (Python 3.11).
    @property
    def arguments(self) -> Any:
        """The call's arguments (``gen_ai.tool.call.arguments``), decoded."""
        return self._decoded("arguments", A.TOOL_ARGUMENTS)

    @property
    def result(self) -> Any:
        """The call's result (``gen_ai.tool.call.result``), decoded."""
        return self._decoded("result", A.TOOL_RESULT)

    def _decoded(self, name: str, key: str) -> Any:
        kept = self.__dict__
        if name not in kept:
            kept[name] = decode_attribute(self.span.attributes.get(key))
        return kept[name]

    @property
    def turn(self) -> int | None:
        """Index of the user turn during which the call ran, when recorded."""
        value = self.span.attributes.get(A.TURN_INDEX)
        return int(value) if value is not None else None


def _made_from_message(span: Span) -> bool:
    return span.attributes.get(A.TOOL_CALL_SOURCE) == A.TOOL_CALL_FROM_MESSAGE


def _exported_call_ids(spans: list[Span]) -> set[str]:
    """Call ids of the ``execute_tool`` spans the agent exported (not read from messages)."""
    return {
        str(span.attributes[A.TOOL_CALL_ID])
        for span in spans
        if span.operation == A.OP_EXECUTE_TOOL
        and span.attributes.get(A.TOOL_CALL_ID)
        and not _made_from_message(span)
    }


@dataclass(frozen=True)
class ModelCall:
    """A model call read off a ``chat`` span."""

    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    span: Span


class Trace(BaseModel):
    """Every span of one attempt, flat, in start order."""

    format_version: int = TRACE_FORMAT_VERSION
    """Version of this record's format."""
    trace_id: str
    """The trace id all spans share."""
    spans: list[Span] = Field(default_factory=list)
    """The spans, sorted by start time."""
    resource: dict[str, Any] = Field(default_factory=dict)
    """Attributes of the process that sent the spans (OTLP's resource: ``service.name``, ...);
    empty for traces Seatrial recorded itself."""
    _views: _TraceViews | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        # The view cache is not part of a trace's value: compare what is stored.
        if not isinstance(other, Trace):
            return NotImplemented
        mine = (self.format_version, self.trace_id, self.spans, self.resource)
        return mine == (other.format_version, other.trace_id, other.spans, other.resource)

    __hash__ = None  # type: ignore[assignment]

    def _read(self) -> _TraceViews:
        # Every assertion and the metrics read the same views; work them out once, in one
        # pass. A trace whose span list is replaced or grows afterwards is read again.
        # Straight from pydantic's private-attribute slot: ``self._views`` goes through
        # BaseModel.__getattr__, which cost more than the cache saved.
        private = self.__pydantic_private__
        views: _TraceViews | None = private["_views"]  # type: ignore[index]
        spans = self.spans
        if views is None or views.spans is not spans or views.count != len(spans):
            views = private["_views"] = _TraceViews(spans)  # type: ignore[index]
        return views

    def agent_span(self) -> Span | None:
        """The outermost ``invoke_agent`` span, if any."""
        return self._read().agent

    def tool_calls(self) -> list[TraceToolCall]:
        """Tool calls in the order they started."""
        return list(self._read().tool_calls)

    def model_calls(self) -> list[ModelCall]:
        """The agent's model calls (``chat`` and other inference spans) in the order they
        started; calls the gateway made for Seatrial (a simulated user's) are left out."""
        return list(self._read().model_calls)

    def events(self, name: str | None = None) -> list[tuple[Span, SpanEvent]]:
        """Span events (optionally only those called ``name``) with their spans, in time order."""
        found = [
            (span, event)
            for span in self.spans
            for event in span.events
            if name is None or event.name == name
        ]
        found.sort(key=lambda pair: pair[1].time_unix_nano)
        return found

    def wall_time_ms(self) -> float:
        """The agent span's duration; without one, first start to last end."""
        agent = self._read().agent
        if agent is not None and agent.end_time_unix_nano is not None:
            return agent.duration_ms
        if not self.spans:
            return 0.0
        start = min(s.start_time_unix_nano for s in self.spans)
        end = max(s.end_time_unix_nano or s.start_time_unix_nano for s in self.spans)
        return (end - start) / 1e6

    def token_usage(self) -> tuple[int, int]:
        """Input and output tokens over all model calls.

        A trace whose model-call spans carry no token counts (an HTTP agent that reports only
        its ``usage``; a SWE-agent trajectory, which keeps only totals) falls back to the usage
        recorded on its ``invoke_agent`` spans.
        """
        views = self._read()
        input_tokens = output_tokens = 0
        for call in views.model_calls:
            input_tokens += call.input_tokens
            output_tokens += call.output_tokens
        if input_tokens or output_tokens:
            return input_tokens, output_tokens
        agents = views.agent_spans
        return (
            sum(int(s.attributes.get(A.INPUT_TOKENS) or 0) for s in agents),
            sum(int(s.attributes.get(A.OUTPUT_TOKENS) or 0) for s in agents),
        )

    def cost_usd(self) -> float:
        """The agent's cost: over every span that carries ``seatrial.cost_usd``, but model
        calls made for Seatrial (a simulated user's, on their own ledger line)."""
        costs = []
        for span in self.spans:
            attrs = span.attributes
            if not A.seatrial_call(attrs):
                costs.append(float(attrs.get(A.COST_USD) or 0.0))
        return sum(costs)


_MODEL_OPERATIONS = frozenset((A.OP_CHAT, "text_completion", "generate_content"))
"""The ``gen_ai.operation.name`` values of model-call spans."""


class _TraceViews:
    """What the checks and the metrics read off a trace (its agent spans, tool calls and
    model calls), worked out in one pass over its spans: each attempt's metrics and its
    assertions read them, and separate passes cost more than the reading."""

    __slots__ = ("agent", "agent_spans", "count", "model_calls", "spans", "tool_calls")

    def __init__(self, spans: list[Span]) -> None:
        self.spans = spans
        self.count = len(spans)
        self.agent_spans: list[Span] = []
        tool_spans: list[tuple[Span, dict[str, Any]]] = []
        self.model_calls: list[ModelCall] = []
        from_message = False
        for span in spans:
            # Fields read from the span's dict: a pydantic model's attributes go through its
            # __getattr__ hook, several times the cost, for every span of every attempt.
            fields = span.__dict__
            attrs = fields["attributes"]
            operation = attrs.get(A.OPERATION)
            if operation == A.OP_INVOKE_AGENT:
                self.agent_spans.append(span)
                continue
            if operation is not None and type(operation) is not str:
                operation = str(operation)  # as Span.operation reads it
            if operation == A.OP_EXECUTE_TOOL:
                tool_spans.append((span, fields))
                from_message = from_message or _from_message(attrs)
            elif operation in _MODEL_OPERATIONS and not A.seatrial_call(attrs):
                self.model_calls.append(_model_call(span, attrs))
        if from_message:
            # The agent's own span of a call read from messages may arrive in another batch.
            exported = _exported_call_ids([span for span, _ in tool_spans])
            tool_spans = [
                (span, fields)
                for span, fields in tool_spans
                if not (
                    _from_message(fields["attributes"])
                    and str(fields["attributes"].get(A.TOOL_CALL_ID)) in exported
                )
            ]
        self.tool_calls = [_tool_call(span, fields) for span, fields in tool_spans]
        self.agent = _outermost(self.agent_spans)


def _from_message(attributes: dict[str, Any]) -> bool:
    return attributes.get(A.TOOL_CALL_SOURCE) == A.TOOL_CALL_FROM_MESSAGE


def _outermost(agents: list[Span]) -> Span | None:
    """The first agent span whose parent is not an agent span."""
    if not agents:
        return None
    if len(agents) == 1:  # the usual trace: its one agent span, unless it is its own parent
        only = agents[0].__dict__
        return agents[0] if only["parent_span_id"] != only["span_id"] else None
    ids = {s.span_id for s in agents}
    return next((s for s in agents if s.parent_span_id not in ids), None)


def _tool_call(span: Span, fields: dict[str, Any]) -> TraceToolCall:
    attrs = fields["attributes"]
    error = attrs.get(A.ERROR_TYPE)
    # The frozen dataclass's fields filled in directly: its __init__ costs an
    # object.__setattr__ a field, for every tool call of every attempt read.
    call = _new_object(TraceToolCall)
    call.__dict__.update(
        name=str(attrs.get(A.TOOL_NAME, fields["name"].removeprefix("execute_tool "))),
        success=error is None and fields["status"] != "error",
        error_type=str(error) if error is not None else None,
        span=span,
    )
    return call


_new_object = object.__new__


def _model_call(span: Span, attrs: dict[str, Any]) -> ModelCall:
    call = _new_object(ModelCall)  # as _tool_call makes a TraceToolCall
    call.__dict__.update(
        model=str(attrs.get(A.RESPONSE_MODEL) or attrs.get(A.REQUEST_MODEL) or ""),
        input_tokens=int(attrs.get(A.INPUT_TOKENS) or 0),
        output_tokens=int(attrs.get(A.OUTPUT_TOKENS) or 0),
        cost_usd=float(attrs.get(A.COST_USD) or 0.0),
        span=span,
    )
    return call
