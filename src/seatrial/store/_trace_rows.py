"""Ingested traces to rows: span tuples for ``executemany`` and each trace's summary row.

A trace's summary (``traces``) is built from the spans of one batch and merged with the
stored one when the trace already exists, so a trace sent over many requests never has its
spans read back. Every figure is a sum, a minimum, a maximum or a union for that reason;
tokens are kept twice (model calls, agent spans) so the rule "the agent spans' usage counts
only when the model calls carry no tokens" holds however the spans were split into batches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import Any

from seatrial.store._codec import stored_attributes
from seatrial.store._engine import json_text, without_nul
from seatrial.trace import Span, Trace, attrs

TRACE_COLUMNS = (
    "trace_id",
    "source",
    "service",
    "session_id",
    "user_id",
    "started_at",
    "finished_at",
    "span_count",
    "error",
    "tools",
    "models",
    "model_calls",
    "input_tokens",
    "output_tokens",
    "agent_input_tokens",
    "agent_output_tokens",
    "masked",
    "resource",
    "checks",
    "received_at",
)
"""The ``traces`` columns, in the order of the tuples :meth:`Summary.row` makes."""

TRACE_SPAN_COLUMNS = (
    "trace_id",
    "position",
    "span_id",
    "parent_span_id",
    "name",
    "start_time_unix_nano",
    "end_time_unix_nano",
    "attributes",
    "events",
    "status",
    "status_message",
)
"""The ``trace_spans`` columns, in the order of the tuples :func:`trace_span_row` makes."""

# The rows' JSON columns are plain ``str`` (json_text): they go to the driver as they are.
_NO_EVENTS = json_text([])
_NO_CHECKS = _NO_EVENTS
"""A new trace has had no checks run over it."""
_NOTHING_MASKED = json_text({})
_START = attrgetter("start_time_unix_nano")

MODEL_OPERATIONS = frozenset({attrs.OP_CHAT, "text_completion", "generate_content"})
"""Operations whose spans are model calls (as :meth:`seatrial.trace.Trace.model_calls`)."""

SERVICE_KEY = "service.name"
SESSION_KEYS = (attrs.CONVERSATION_ID, "session.id", "langfuse.session.id")
"""Where a span says which conversation it belongs to, in order of preference."""
USER_KEYS = ("user.id", "enduser.id", "langfuse.user.id")
"""Where a span names the end user, in order of preference."""


def group_spans(batch: Iterable[Trace]) -> dict[str, tuple[list[Span], dict[str, Any]]]:
    """Trace id -> (its spans in start order, its resource), merging repeats of one id."""
    grouped: dict[str, tuple[list[Span], dict[str, Any]]] = {}
    for trace in batch:
        if not trace.spans:
            continue
        found = grouped.get(trace.trace_id)
        if found is None:
            grouped[trace.trace_id] = (list(trace.spans), dict(trace.resource))
        else:
            found[0].extend(trace.spans)
            found[1].update({k: v for k, v in trace.resource.items() if k not in found[1]})
    for spans_of, _ in grouped.values():
        spans_of.sort(key=_START)
    return grouped


def fresh_spans(batch: Sequence[Span], stored: set[str]) -> list[Span]:
    """The spans of ``batch`` whose ids are neither stored nor earlier in the batch."""
    seen = set(stored)
    fresh = []
    for span in batch:
        if span.span_id not in seen:
            seen.add(span.span_id)
            fresh.append(span)
    return fresh


def trace_span_row(span: Span, position: int) -> tuple[Any, ...]:
    """The ``trace_spans`` row of a span (see TRACE_SPAN_COLUMNS)."""
    return (
        span.trace_id,
        position,
        span.span_id,
        span.parent_span_id,
        without_nul(span.name),
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        # stored_attributes puts links in the attributes; most spans have none.
        json_text(span.attributes) if not span.links else str(stored_attributes(span)),
        json_text(span.events) if span.events else _NO_EVENTS,
        span.status,
        without_nul(span.status_message),
    )


@dataclass
class Summary:
    """A trace's summary figures over some of its spans; :meth:`merged` adds two up."""

    service: str = ""
    session_id: str | None = None
    user_id: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    span_count: int = 0
    error: bool = False
    tools: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    agent_input_tokens: int = 0
    agent_output_tokens: int = 0
    masked: dict[str, int] = field(default_factory=dict)
    resource: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of_row(cls, row: Mapping[Any, Any]) -> Summary:
        """The summary stored in a ``traces`` row."""
        return cls(
            service=row["service"],
            session_id=row["session_id"],
            user_id=row["user_id"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            span_count=row["span_count"],
            error=bool(row["error"]),
            tools=list(row["tools"] or []),
            models=list(row["models"] or []),
            model_calls=row["model_calls"],
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
            agent_input_tokens=row["agent_input_tokens"],
            agent_output_tokens=row["agent_output_tokens"],
            masked=dict(row["masked"] or {}),
            resource=dict(row["resource"] or {}),
        )

    def merged(self, later: Summary) -> Summary:
        """This summary with a later batch's added (the earlier ids and resource win)."""
        masked = dict(self.masked)
        for kind, count in later.masked.items():
            masked[kind] = masked.get(kind, 0) + count
        return replace(
            self,
            service=self.service or later.service,
            session_id=self.session_id or later.session_id,
            user_id=self.user_id or later.user_id,
            started_at=_smallest(self.started_at, later.started_at),
            finished_at=_largest(self.finished_at, later.finished_at),
            span_count=self.span_count + later.span_count,
            error=self.error or later.error,
            tools=_union(self.tools, later.tools),
            models=_union(self.models, later.models),
            model_calls=self.model_calls + later.model_calls,
            input_tokens=self.input_tokens + later.input_tokens,
            output_tokens=self.output_tokens + later.output_tokens,
            agent_input_tokens=self.agent_input_tokens + later.agent_input_tokens,
            agent_output_tokens=self.agent_output_tokens + later.agent_output_tokens,
            masked=masked,
            resource={**later.resource, **self.resource},
        )

    def row(self, trace_id: str, source: str, received_at: float) -> tuple[Any, ...]:
        """The new ``traces`` row (see TRACE_COLUMNS); no checks have run yet."""
        return (
            trace_id,
            source,
            self.service,
            self.session_id,
            self.user_id,
            self.started_at if self.started_at is not None else received_at,
            self.finished_at,
            self.span_count,
            self.error,
            json_text(self.tools),
            json_text(self.models),
            self.model_calls,
            self.input_tokens,
            self.output_tokens,
            self.agent_input_tokens,
            self.agent_output_tokens,
            json_text(self.masked) if self.masked else _NOTHING_MASKED,
            json_text(self.resource),
            _NO_CHECKS,
            received_at,
        )

    def changes(self, trace_id: str) -> dict[str, Any]:
        """Parameters of the UPDATE of a stored trace's row (its id under ``b_trace_id``)."""
        values = {item.name: getattr(self, item.name) for item in fields(self)}
        values["b_trace_id"] = trace_id
        return values


def summarize(
    spans_of: Sequence[Span], resource: Mapping[str, Any], masked: Mapping[str, int]
) -> Summary:
    """The summary of some spans of one trace, with its resource and masked counts."""
    summary = Summary(
        service=str(resource.get(SERVICE_KEY) or ""),
        masked=dict(masked),
        resource=dict(resource),
        span_count=len(spans_of),
    )
    session = _first(resource, SESSION_KEYS)
    user = _first(resource, USER_KEYS)
    tools: dict[str, None] = {}
    models: dict[str, None] = {}
    if spans_of:
        # The earliest start and latest end, in seconds (dividing is monotonic: the same
        # as comparing every span's time in seconds).
        summary.started_at = min(map(_START, spans_of)) / 1e9
        ends = [span.end_time_unix_nano for span in spans_of]
        finished = max((end for end in ends if end is not None), default=None)
        summary.finished_at = finished / 1e9 if finished is not None else None
    # Sums in local names, written to the summary once: every span of every batch passes.
    error = False
    model_calls = input_tokens = output_tokens = agent_input = agent_output = 0
    for span in spans_of:
        values = span.attributes
        if span.status == "error" or values.get(attrs.ERROR_TYPE) is not None:
            error = True
        if not session:
            session = _first(values, SESSION_KEYS)
        if not user:
            user = _first(values, USER_KEYS)
        operation = values.get(attrs.OPERATION)
        if operation == attrs.OP_EXECUTE_TOOL:
            name = values.get(attrs.TOOL_NAME) or span.name.removeprefix("execute_tool ")
            tools[str(name)] = None
        elif operation in MODEL_OPERATIONS:
            model_calls += 1
            model = values.get(attrs.RESPONSE_MODEL) or values.get(attrs.REQUEST_MODEL)
            if model:
                models[str(model)] = None
            input_tokens += _int(values.get(attrs.INPUT_TOKENS))
            output_tokens += _int(values.get(attrs.OUTPUT_TOKENS))
        elif operation == attrs.OP_INVOKE_AGENT:
            agent_input += _int(values.get(attrs.INPUT_TOKENS))
            agent_output += _int(values.get(attrs.OUTPUT_TOKENS))
    summary.error = error
    summary.model_calls = model_calls
    summary.input_tokens = input_tokens
    summary.output_tokens = output_tokens
    summary.agent_input_tokens = agent_input
    summary.agent_output_tokens = agent_output
    summary.session_id = session
    summary.user_id = user
    summary.tools = list(tools)
    summary.models = list(models)
    return summary


def _first(values: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = values.get(key)
        if value not in (None, ""):
            return str(value)
    return None


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _smallest(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _largest(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def _union(first: list[str], second: list[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))
