"""The records of ingested traces: a trace's summary, its checks, a list's filters, and
what one ingested batch did."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class TraceCheck(BaseModel):
    """The verdict of one L1/L2 check run over a stored production trace."""

    model_config = ConfigDict(frozen=True)

    id: str
    """The check's id (the assertion id it was written with)."""
    type: str
    """The assertion type, e.g. ``tool_called``."""
    verdict: Literal["pass", "fail", "not_evaluated"]
    """What the check found; ``not_evaluated`` when the trace lacks the evidence."""
    reason: str = ""
    """Why, in English (:attr:`message` rendered); the text of checks stored before messages."""
    message: dict[str, Any] | None = None
    """The reason as a message id and its parameters (``seatrial.i18n.Message``), so each
    reader reads it in their language (``seatrial.i18n.render``); None for older checks."""
    span_id: str | None = None
    """The span the check points at (the tool call that broke it), when there is one."""


class TraceHead(BaseModel):
    """A stored production trace as the browser lists it: its summary, no spans."""

    model_config = ConfigDict(frozen=True)

    trace_id: str
    """The trace id (32 hex digits for OTLP)."""
    source: str
    """Where the first spans came from: ``otlp`` (the receiver) or the file's format."""
    service: str
    """The resource's ``service.name`` (the agent that sent it); empty when not given."""
    session_id: str | None
    """The conversation or session id the spans carry, if any."""
    user_id: str | None
    """The end user's id the spans carry, if any (masked like every other value)."""
    started_at: float
    """The first span's start, Unix seconds."""
    finished_at: float | None
    """The last span's end, Unix seconds; None while no span has ended."""
    span_count: int
    """Spans stored for the trace."""
    error: bool
    """Whether a span failed (status error or ``error.type``)."""
    tools: list[str]
    """Names of the tools called, each once, in the order first seen."""
    models: list[str]
    """Models called, each once, in the order first seen."""
    input_tokens: int
    """Input tokens of the model calls (of the agent spans when there are no model calls)."""
    output_tokens: int
    """Output tokens, counted the same way."""
    masked: dict[str, int] = Field(default_factory=dict)
    """Values masked before storage, per kind (``phone``: 2)."""
    checks: list[TraceCheck] = Field(default_factory=list)
    """The checks run over the trace, one per check id (the latest verdict)."""
    received_at: float
    """When the first spans were stored, Unix seconds."""


@dataclass(frozen=True)
class TraceQuery:
    """Which stored traces a list shows, newest first; every filter is optional."""

    since: float | None = None
    """Unix seconds; traces started at or after it."""
    until: float | None = None
    """Unix seconds; traces started before it."""
    service: str | None = None
    """Only traces of this service (the agent's ``service.name``)."""
    tool: str | None = None
    """Only traces that called this tool."""
    error: bool | None = None
    """Only failed traces (True), or only traces without an error (False)."""
    failed_check: str | None = None
    """Only traces on which the check with this id failed."""
    limit: int = 50
    """At most this many traces."""
    offset: int = 0
    """Skip this many first."""


@dataclass(frozen=True)
class IngestOutcome:
    """What one batch of ingested traces did to the store."""

    traces: int
    """Production traces written to (new ones and ones that gained spans)."""
    spans: int
    """Spans stored, into production traces and into attempts."""
    joined_attempts: int
    """Attempts whose trace gained spans (their trace id was the attempt's)."""
    duplicate_spans: int
    """Spans skipped because the store already held them (an exporter's retry)."""
    masked: dict[str, int] = field(default_factory=dict)
    """Values masked before storage, per kind, over the whole batch."""


def trace_head_of(row: Mapping[Any, Any]) -> TraceHead:
    """The summary of a stored trace from its ``traces`` row."""
    # As Trace.token_usage: the agent spans' usage counts when the model calls carry none (a
    # SWE-agent trajectory keeps its tokens as totals on the root, not per model turn).
    with_models = bool(row["input_tokens"] or row["output_tokens"])
    return TraceHead(
        trace_id=row["trace_id"],
        source=row["source"],
        service=row["service"],
        session_id=row["session_id"],
        user_id=row["user_id"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        span_count=row["span_count"],
        error=bool(row["error"]),
        tools=list(row["tools"] or []),
        models=list(row["models"] or []),
        input_tokens=row["input_tokens"] if with_models else row["agent_input_tokens"],
        output_tokens=row["output_tokens"] if with_models else row["agent_output_tokens"],
        masked=dict(row["masked"] or {}),
        checks=[TraceCheck.model_validate(item) for item in row["checks"] or []],
        received_at=row["received_at"],
    )
