"""A trace as a timeline (an attempt's, a production trace's): rows of spans with waterfall
bars, marks and a summary.

Pure functions over a :class:`~seatrial.trace.Trace`; the attempt and trace pages render what
they build. Nothing here marks text safe: arguments, results and messages are shown escaped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from seatrial.i18n import N_, ngettext, render
from seatrial.i18n import gettext as _
from seatrial.trace import Span, SpanEvent, Trace, decode_attribute
from seatrial.trace import attrs as A

_MODEL_OPERATIONS = (A.OP_CHAT, "text_completion", "generate_content")
_MIN_WIDTH = 0.4
"""Narrowest bar (percent of the attempt), so instant spans stay visible."""
_DECISIONS = {"granted": N_("granted"), "denied": N_("denied")}
"""A permission decision as a person reads it (the identifier is kept for any other)."""
SUMMARY_STEPS = 30

"""Steps named in the one-line summary before it says how many more there are."""


@dataclass(frozen=True)
class Mark:
    """A span event worth seeing on the timeline: a permission decision, a state change."""

    kind: str
    """``permission``, ``state_change`` or ``turn``."""
    text: str
    """One line a person reads: ``write_file once: denied``."""
    offset_ms: float
    """When, from the attempt's start."""
    denied: bool = False
    """A permission that was refused (shown in red)."""
    attributes: dict[str, Any] = field(default_factory=dict)
    """The event's attributes, for the JSON API."""


@dataclass(frozen=True)
class SpanRow:
    """One span as a row of the timeline."""

    span: Span
    depth: int
    """Ancestors in the span tree (0 for the root)."""
    kind: str
    """``agent``, ``chat``, ``tool``, ``error`` or ``other``: the bar's class."""
    label: str
    offset_ms: float
    duration_ms: float
    left: float
    """Bar start, percent of the attempt's time."""
    width: float
    """Bar width, percent of the attempt's time."""
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    arguments: str | None
    """Tool arguments, pretty JSON."""
    result: str | None
    """Tool result, pretty JSON."""
    error_type: str | None
    error: str
    """The status message of a failed span."""
    marks: list[Mark]


@dataclass(frozen=True)
class Timeline:
    """Every span of an attempt in start order, with the attempt's length and a summary."""

    rows: list[SpanRow]
    total_ms: float
    summary: str
    """``Step1 read_file 7.8ms -> Step2 chat planner 0.05ms ...``"""


def ms(value: float) -> str:
    """Milliseconds, as few digits as make sense: ``300ms``, ``7.8ms``, ``0.05ms``."""
    if value >= 10:
        return f"{value:.0f}ms"
    if value >= 1:
        return f"{value:.1f}ms"
    return f"{value:.2f}ms"


def pretty_json(value: Any) -> str | None:
    """A value as a person reads it: text as is, anything else as indented JSON with Chinese
    (any non-ASCII) written as it is; None for none."""
    if value is None:
        return None
    value = decode_attribute(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def _int(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def _kind(span: Span) -> str:
    if span.status == "error" or span.attributes.get(A.ERROR_TYPE) is not None:
        return "error"
    if span.operation == A.OP_INVOKE_AGENT:
        return "agent"
    if span.operation in _MODEL_OPERATIONS:
        return "chat"
    if span.operation == A.OP_EXECUTE_TOOL:
        return "tool"
    return "other"


def _label(span: Span) -> str:
    if span.operation == A.OP_EXECUTE_TOOL:
        return str(span.attributes.get(A.TOOL_NAME) or span.name.removeprefix("execute_tool "))
    if A.seatrial_call(span.attributes):  # e.g. "simulator: chat user-v1", not the agent's
        return f"{span.attributes.get(A.GATEWAY_PURPOSE)}: {span.name}"
    return span.name


def _mark(event: SpanEvent, start: int) -> Mark | None:
    attrs = event.attributes
    offset = (event.time_unix_nano - start) / 1e6
    if event.name == A.PERMISSION:
        decision = str(event.value(A.PERMISSION_DECISION, ""))
        text = _("permission {tool} ({scope}): {decision}").format(
            tool=event.value(A.PERMISSION_TOOL, "?"),
            scope=event.value(A.PERMISSION_SCOPE, "?"),
            decision=_(_DECISIONS[decision]) if decision in _DECISIONS else decision,
        )
        reason = event.value(A.PERMISSION_REASON)
        if reason:
            text += f" - {reason}"
        return Mark("permission", text, offset, decision == "denied", dict(attrs))
    if event.name == A.STATE_CHANGE:
        text = _("state change: {operation} {target}").format(
            operation=event.value(A.STATE_OP, "?"), target=event.value(A.STATE_TARGET, "?")
        )
        return Mark("state_change", text, offset, False, dict(attrs))
    if event.name == A.TURN:
        index = _int(event.value(A.TURN_INDEX))
        text = _("turn {n}: {message}").format(
            n=index + 1 if index is not None else "?", message=event.value(A.TURN_MESSAGE, "")
        )
        return Mark("turn", text, offset, False, dict(attrs))
    return None


def _depths(spans: list[Span]) -> dict[str, int]:
    parents = {s.span_id: s.parent_span_id for s in spans}
    depths: dict[str, int] = {}
    for span in spans:
        depth, parent, seen = 0, span.parent_span_id, {span.span_id}
        while parent is not None and parent in parents and parent not in seen:
            seen.add(parent)
            depth += 1
            parent = parents[parent]
        depths[span.span_id] = depth
    return depths


def _summary(rows: list[SpanRow]) -> str:
    """The steps in one line, in the reader's language (span names and times as they are)."""
    steps = [r for r in rows if r.span.operation != A.OP_INVOKE_AGENT]
    parts = []
    for number, row in enumerate(steps[:SUMMARY_STEPS], start=1):
        step = (
            _("Step{number} {label} {duration} FAILED")
            if row.kind == "error"
            else _("Step{number} {label} {duration}")
        )
        parts.append(step.format(number=number, label=row.label, duration=ms(row.duration_ms)))
    if len(steps) > SUMMARY_STEPS:
        more = len(steps) - SUMMARY_STEPS
        parts.append(ngettext("... ({n} more)", "... ({n} more)", more).format(n=more))
    return " -> ".join(parts)


def build_timeline(trace: Trace | None) -> Timeline:
    """The timeline of a trace (an empty one for none)."""
    spans = sorted(
        enumerate(trace.spans if trace is not None else []),
        key=lambda item: (item[1].start_time_unix_nano, item[0]),
    )
    ordered = [span for _, span in spans]
    if not ordered:
        return Timeline(rows=[], total_ms=0.0, summary="")
    start = min(s.start_time_unix_nano for s in ordered)
    end = max(s.end_time_unix_nano or s.start_time_unix_nano for s in ordered)
    total = max(end - start, 1)
    depths = _depths(ordered)
    rows = []
    for span in ordered:
        attrs = span.attributes
        kind = _kind(span)
        is_chat = span.operation in _MODEL_OPERATIONS
        is_tool = span.operation == A.OP_EXECUTE_TOOL
        left = (span.start_time_unix_nano - start) / total * 100
        width = max(span.duration_ms * 1e6 / total * 100, _MIN_WIDTH)
        cost = attrs.get(A.COST_USD)
        rows.append(
            SpanRow(
                span=span,
                depth=depths[span.span_id],
                kind=kind,
                label=_label(span),
                offset_ms=(span.start_time_unix_nano - start) / 1e6,
                duration_ms=span.duration_ms,
                left=round(min(left, 100 - _MIN_WIDTH), 3),
                width=round(min(width, 100 - min(left, 100 - _MIN_WIDTH)), 3),
                input_tokens=_int(attrs.get(A.INPUT_TOKENS)) if is_chat else None,
                output_tokens=_int(attrs.get(A.OUTPUT_TOKENS)) if is_chat else None,
                cost_usd=float(cost) if cost is not None else (0.0 if is_chat else None),
                arguments=pretty_json(attrs.get(A.TOOL_ARGUMENTS)) if is_tool else None,
                result=pretty_json(attrs.get(A.TOOL_RESULT)) if is_tool else None,
                error_type=str(attrs[A.ERROR_TYPE]) if A.ERROR_TYPE in attrs else None,
                error=span.status_message if span.status == "error" else "",
                marks=[m for e in span.events if (m := _mark(e, start)) is not None],
            )
        )
    return Timeline(rows=rows, total_ms=total / 1e6, summary=_summary(rows))


class Checked(Protocol):
    """A check's verdict as stored: an attempt's ``AssertionResult``, a trace's
    ``TraceCheck``."""

    @property
    def id(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def message(self) -> dict[str, Any] | None: ...
    @property
    def span_id(self) -> str | None: ...


@dataclass(frozen=True)
class FailedCheck:
    """A check that failed an attempt (or a production trace), and the span of the timeline
    it points at."""

    number: int
    """Its place among the attempt's failed checks, from 1 (the panel's anchor)."""
    assertion_id: str
    reason: str
    """Why, in the reader's language (``seatrial.i18n.render`` of the stored message)."""
    span_id: str | None
    """The span it points at, when the timeline holds it; None when it names none."""
    span_label: str = ""
    """That span's label on the timeline."""


def failed_checks(results: Sequence[Checked], timeline: Timeline) -> list[FailedCheck]:
    """The failed checks of an attempt or a trace, each with the span it points at
    (``span_id``) when the timeline holds that span."""
    labels = {row.span.span_id: row.label for row in timeline.rows}
    failed = [r for r in results if r.verdict == "fail"]
    return [
        FailedCheck(
            number=number,
            assertion_id=result.id,
            reason=render(result.message, result.reason),
            span_id=result.span_id if result.span_id in labels else None,
            span_label=labels.get(result.span_id or "", ""),
        )
        for number, result in enumerate(failed, start=1)
    ]


def failed_by_span(checks: Sequence[FailedCheck]) -> dict[str, list[FailedCheck]]:
    """The failed checks pointing at each span, by span id (the timeline marks those rows)."""
    marked: dict[str, list[FailedCheck]] = {}
    for check in checks:
        if check.span_id is not None:
            marked.setdefault(check.span_id, []).append(check)
    return marked
