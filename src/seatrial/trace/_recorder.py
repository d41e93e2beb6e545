"""Recording spans while an attempt runs.

One :class:`TraceRecorder` per attempt. Adapters, sandbox tools and ``@seatrial.tool``
open spans through it; the span that is open in the current task is the parent of the next.
"""

from __future__ import annotations

import contextvars
import json
import json.encoder
import os
import random
import time
from typing import Any

from seatrial.trace import _attrs as A
from seatrial.trace._span import TRACE_FORMAT_VERSION, Span, SpanEvent, Trace
from seatrial.trace._trusted import trusted_model

_IDS = random.Random()
"""Ids (trace, span, session, attempt) come from a generator of their own, seeded by the
operating system (again in every forked worker): an in-process agent or a library that seeds
the ``random`` module would otherwise make them repeat."""
os.register_at_fork(after_in_child=_IDS.seed)

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
    return f"{_IDS.getrandbits(bits):0{bits // 4}x}"


ATTRIBUTE_JSON = json.JSONEncoder(ensure_ascii=False, default=str, sort_keys=True)
"""How structured attribute values become JSON text (one encoder: ``json.dumps`` with options
builds a new one per call, which costs more than encoding a small value)."""

_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
"""The C encoder's constructor the json module builds its encoders with; None where the
interpreter has none (not CPython)."""

_ATTRIBUTE_JSON_FAST: Any = (
    None
    if _MAKE_ENCODER is None
    else _MAKE_ENCODER(
        None, str, json.encoder.encode_basestring, None, ": ", ", ", True, False, True
    )
)
"""The C encoder ``ATTRIBUTE_JSON.encode`` builds on every call, built once: the same settings
(``": "`` and ``", "``, keys sorted, NaN allowed) but no table of the containers being
encoded, so it holds no state and threads may share it. A circular value, which that table
would catch, runs it out of recursion instead: :func:`attribute_json` then asks
``ATTRIBUTE_JSON`` (whose error names the circular reference)."""


def attribute_json(value: Any) -> str:
    """``ATTRIBUTE_JSON.encode(value)``, without building an encoder for each value (tool
    arguments and results, structured attributes: several per attempt)."""
    if _ATTRIBUTE_JSON_FAST is None:
        return ATTRIBUTE_JSON.encode(value)
    try:
        return "".join(_ATTRIBUTE_JSON_FAST(value, 0))
    except RecursionError:
        return ATTRIBUTE_JSON.encode(value)


_SCALAR_TYPES = (str, int, float, bool)
"""A named tuple of types: ``isinstance(v, str | int | ...)`` written inline builds the union
on every call, which costs ten times the check (and this runs for every span attribute)."""


_PLAIN_TYPES = frozenset((str, int, float, bool, type(None)))
"""The types :func:`to_attribute` gives back as they are, looked up by exact type before the
function is called at all (most attribute values are plain strings and numbers)."""


def to_attribute(value: Any) -> Any:
    """OTel attributes are scalars: structures become JSON strings."""
    if value is None or isinstance(value, _SCALAR_TYPES):
        return value
    return attribute_json(value)


def _attributes(given: dict[str, Any]) -> dict[str, Any]:
    """``given`` with each value as :func:`to_attribute` makes it, in a new dict."""
    plain = _PLAIN_TYPES
    return {k: v if type(v) in plain else to_attribute(v) for k, v in given.items()}


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

    def activate(self) -> _Activation:
        """Make this the current recorder for code running in this context (a ``with`` block)."""
        return _Activation(self)

    @property
    def current_span(self) -> Span | None:
        """The innermost open span in this context."""
        return self._stack.get()

    def start_span(self, name: str, attributes: dict[str, Any] | None = None) -> Span:
        """Open a span under the current one; close it with :meth:`end_span`."""
        parent = self._stack.get()
        attrs = _attributes(attributes) if attributes else {}
        if self.turn_index is not None and A.TURN_INDEX not in attrs:
            attrs[A.TURN_INDEX] = self.turn_index
        # Every field given, in order: trusted_model takes the dict as it is, with no defaults
        # to merge in (three spans or more per attempt).
        span = trusted_model(
            Span,
            {
                "trace_id": self.trace_id,
                "span_id": f"{_IDS.getrandbits(64):016x}",
                "parent_span_id": parent.span_id if parent else None,
                "name": str(name),
                "start_time_unix_nano": time.time_ns(),
                "end_time_unix_nano": None,
                "attributes": attrs,
                "events": [],
                "status": "unset",
                "status_message": "",
                "links": [],
            },
        )
        self.spans.append(span)
        return span

    def end_span(self, span: Span, error: str | None = None, message: str = "") -> None:
        """Close a span, marking it failed when ``error`` (an ``error.type``) is given.

        ``span`` is one :meth:`start_span` opened: its fields are written into its dict, as
        pydantic's ``__setattr__`` would write them (every field of such a span is set
        already), without that method's cost on every span of every attempt.
        """
        fields = span.__dict__
        fields["end_time_unix_nano"] = time.time_ns()
        if error is not None:
            fields["attributes"][A.ERROR_TYPE] = error
            fields["status"] = "error"
            fields["status_message"] = message
        elif fields["status"] == "unset":
            fields["status"] = "ok"

    def span(self, name: str, attributes: dict[str, Any] | None = None) -> _SpanBlock:
        """Open a span for the duration of a ``with`` block; an exception marks it failed."""
        return _SpanBlock(self, name, attributes)

    def event(self, name: str, attributes: dict[str, Any] | None = None) -> None:
        """Add an event to the current span (or to the first span when none is open)."""
        target = self._stack.get() or (self.spans[0] if self.spans else None)
        if target is None:
            target = self.start_span("seatrial.events")
            self.end_span(target)
        target.events.append(
            trusted_model(
                SpanEvent,
                {
                    "name": str(name),
                    "time_unix_nano": time.time_ns(),
                    "attributes": _attributes(attributes) if attributes else {},
                },
            )
        )

    def set_attributes(self, span: Span, attributes: dict[str, Any]) -> None:
        """Set attributes on a span, encoding structures as OTel expects."""
        span.attributes.update(_attributes(attributes))

    def trace(self) -> Trace:
        """The trace recorded so far, spans in start order."""
        spans = sorted(self.spans, key=_start_time)
        return trusted_model(
            Trace,
            {
                "format_version": TRACE_FORMAT_VERSION,
                "trace_id": self.trace_id,
                "spans": spans,
                "resource": {},
            },
        )


def _start_time(span: Span) -> int:
    return span.start_time_unix_nano


class _Activation:
    """The block during which a recorder is the current one (:meth:`TraceRecorder.activate`).

    A class rather than a generator-based context manager: it is entered for every attempt and
    every relayed request, and a generator costs several times more to enter and leave.
    """

    __slots__ = ("_recorder", "_token")

    def __init__(self, recorder: TraceRecorder) -> None:
        self._recorder = recorder

    def __enter__(self) -> TraceRecorder:
        self._token = _current_recorder.set(self._recorder)
        return self._recorder

    def __exit__(self, *exc: object) -> None:
        _current_recorder.reset(self._token)


class _SpanBlock:
    """The block a span is open for (:meth:`TraceRecorder.span`); a class for the same reason."""

    __slots__ = ("_attributes", "_name", "_recorder", "_span", "_token")

    def __init__(
        self, recorder: TraceRecorder, name: str, attributes: dict[str, Any] | None
    ) -> None:
        self._recorder, self._name, self._attributes = recorder, name, attributes

    def __enter__(self) -> Span:
        span = self._span = self._recorder.start_span(self._name, self._attributes)
        self._token = self._recorder._stack.set(span)
        return span

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        span = self._span
        self._recorder._stack.reset(self._token)
        if span.end_time_unix_nano is None:
            if kind is None:
                self._recorder.end_span(span)
            else:
                self._recorder.end_span(span, error=kind.__name__, message=str(exc))
