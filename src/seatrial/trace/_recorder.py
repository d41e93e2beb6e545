"""Recording spans while an attempt runs.

One :class:`TraceRecorder` per attempt. Adapters, sandbox tools and ``@seatrial.tool``
open spans through it; the span that is open in the current task is the parent of the next.
"""

from __future__ import annotations

import contextvars
import json
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from seatrial.trace import _attrs as A
from seatrial.trace._span import Span, SpanEvent, Trace

_current_recorder: contextvars.ContextVar[TraceRecorder | None] = contextvars.ContextVar(
    "seatrial_recorder", default=None
)
"""The attempt's recorder, for code that is not handed one (``@seatrial.tool`` functions, the
gateway's pipeline). Set only by :meth:`TraceRecorder.activate`: each attempt activates its
recorder around the agent, the gateway's proxy around each request it relays for an attempt;
the value is reset when that block ends. Defined here because ``trace`` imports no other
Seatrial package, and everyone who reads it may import ``trace``."""


def new_id(bits: int = 64) -> str:
    """A random hex id: 64 bits for spans, 128 for traces."""
    return f"{random.getrandbits(bits):0{bits // 4}x}"


def to_attribute(value: Any) -> Any:
    """OTel attributes are scalars: structures become JSON strings."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


class TraceRecorder:
    """Collects the spans of one attempt."""

    def __init__(self, trace_id: str | None = None) -> None:
        self.trace_id = trace_id or new_id(128)
        self.spans: list[Span] = []
        self.turn_index: int | None = None
        # The open span is per recorder, not module-wide: two recorders active in one context
        # (an attempt's and a proxied request's) must not parent each other's spans. Set only
        # by span(), which resets it when its block ends.
        self._stack: contextvars.ContextVar[Span | None] = contextvars.ContextVar(
            f"seatrial_span_{self.trace_id}", default=None
        )

    @staticmethod
    def current() -> TraceRecorder | None:
        """The recorder of the attempt running in this task, if any."""
        return _current_recorder.get()

    @contextmanager
    def activate(self) -> Iterator[TraceRecorder]:
        """Make this the current recorder for code running in this context."""
        token = _current_recorder.set(self)
        try:
            yield self
        finally:
            _current_recorder.reset(token)

    @property
    def current_span(self) -> Span | None:
        """The innermost open span in this context."""
        return self._stack.get()

    def start_span(self, name: str, attributes: dict[str, Any] | None = None) -> Span:
        """Open a span under the current one; close it with :meth:`end_span`."""
        parent = self._stack.get()
        attrs = {k: to_attribute(v) for k, v in (attributes or {}).items()}
        if self.turn_index is not None and A.TURN_INDEX not in attrs:
            attrs[A.TURN_INDEX] = self.turn_index
        span = Span(
            trace_id=self.trace_id,
            span_id=new_id(),
            parent_span_id=parent.span_id if parent else None,
            name=name,
            start_time_unix_nano=time.time_ns(),
            attributes=attrs,
        )
        self.spans.append(span)
        return span

    def end_span(self, span: Span, error: str | None = None, message: str = "") -> None:
        """Close a span, marking it failed when ``error`` (an ``error.type``) is given."""
        span.end_time_unix_nano = time.time_ns()
        if error is not None:
            span.attributes[A.ERROR_TYPE] = error
            span.status = "error"
            span.status_message = message
        elif span.status == "unset":
            span.status = "ok"

    @contextmanager
    def span(self, name: str, attributes: dict[str, Any] | None = None) -> Iterator[Span]:
        """Open a span for the duration of a block; an exception marks it failed."""
        span = self.start_span(name, attributes)
        token = self._stack.set(span)
        try:
            yield span
        except BaseException as exc:
            if span.end_time_unix_nano is None:
                self.end_span(span, error=type(exc).__name__, message=str(exc))
            raise
        finally:
            self._stack.reset(token)
            if span.end_time_unix_nano is None:
                self.end_span(span)

    def event(self, name: str, attributes: dict[str, Any] | None = None) -> None:
        """Add an event to the current span (or to the first span when none is open)."""
        target = self._stack.get() or (self.spans[0] if self.spans else None)
        if target is None:
            target = self.start_span("seatrial.events")
            self.end_span(target)
        target.events.append(
            SpanEvent(
                name=name,
                time_unix_nano=time.time_ns(),
                attributes={k: to_attribute(v) for k, v in (attributes or {}).items()},
            )
        )

    def set_attributes(self, span: Span, attributes: dict[str, Any]) -> None:
        """Set attributes on a span, encoding structures as OTel expects."""
        for key, value in attributes.items():
            span.attributes[key] = to_attribute(value)

    def trace(self) -> Trace:
        """The trace recorded so far, spans in start order."""
        spans = sorted(self.spans, key=lambda s: s.start_time_unix_nano)
        return Trace(trace_id=self.trace_id, spans=spans)
