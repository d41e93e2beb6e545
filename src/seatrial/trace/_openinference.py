"""Phoenix's span exports (OpenInference spans) as Seatrial traces.

Phoenix hands spans out in two shapes, both read here:

- its REST API, ``GET /v1/projects/{project}/spans``: ``{"data": [span, ...], "next_cursor"}``
  where a span is ``{name, context: {trace_id, span_id}, span_kind, parent_id, start_time,
  end_time, status_code, status_message, attributes: {flat dotted keys}, events: [{name,
  timestamp, attributes}]}`` (a page of ``data``, or the list of spans itself);
- ``px.Client().get_spans_dataframe()`` saved with pandas' ``to_json(orient="records")``
  (a JSON array, or JSONL with ``lines=True``): one record per span with the columns
  ``context.trace_id``, ``context.span_id``, ``parent_id``, ``name``, ``span_kind``,
  ``start_time``, ``end_time`` (ISO strings or epoch milliseconds), ``status_code``,
  ``status_message``, ``events`` and one ``attributes.<name>`` column per attribute, whose
  values may be lists of objects (``attributes.llm.input_messages``: ``[{"message.role": ...,
  "message.content": ...}]``).

Attributes are flattened to OpenInference's dotted names (``llm.input_messages.0.message.role``),
the span kind is kept as ``openinference.span.kind``, and :func:`normalize_trace` (called by
:func:`seatrial.trace.read_trace_file`) maps them onto GenAI names. Spans that carry
OpenInference attributes inside an OTLP/JSON export need nothing from here: they are OTLP/JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seatrial.i18n import gettext as _
from seatrial.trace._format_error import TraceFormatError
from seatrial.trace._normalize import OI_SPAN_KIND
from seatrial.trace._span import Span, SpanEvent, Trace
from seatrial.trace._time import to_unix_nanos

FORMAT = "openinference"

_STATUS = {"OK": "ok", "ERROR": "error", "UNSET": "unset"}
_ATTRIBUTE_COLUMN = "attributes."


def matches(data: Any) -> bool:
    """Whether ``data`` looks like a Phoenix span export (either shape)."""
    records = _records(data)
    return bool(records) and isinstance(records[0], Mapping) and _is_span(records[0])


def read(data: Any) -> list[Trace]:
    """The traces of a Phoenix span export, one per trace id, spans in start order."""
    grouped: dict[str, list[Span]] = {}
    for index, record in enumerate(_records(data)):
        span = _span(record, f"[{index}]")
        grouped.setdefault(span.trace_id, []).append(span)
    return [
        Trace(trace_id=trace_id, spans=sorted(spans, key=lambda s: s.start_time_unix_nano))
        for trace_id, spans in grouped.items()
    ]


def _records(data: Any) -> list[Any]:
    if isinstance(data, Mapping):
        page = data.get("data")
        if isinstance(page, list):
            return page
        return [data]
    if isinstance(data, list):
        return data
    return []


def _is_span(record: Mapping[str, Any]) -> bool:
    context = record.get("context")
    if isinstance(context, Mapping) and "span_id" in context and "trace_id" in context:
        return "span_kind" in record or "start_time" in record
    return "context.span_id" in record and "context.trace_id" in record


def _span(record: Any, where: str) -> Span:
    if not isinstance(record, Mapping):
        raise TraceFormatError(_("{where}: expected a span object").format(where=where))
    context = record.get("context")
    if isinstance(context, Mapping):
        trace_id, span_id = context.get("trace_id"), context.get("span_id")
    else:
        trace_id, span_id = record.get("context.trace_id"), record.get("context.span_id")
    if not isinstance(trace_id, str) or not trace_id or not isinstance(span_id, str) or not span_id:
        raise TraceFormatError(
            _("{where}: needs `context.trace_id` and `context.span_id` as strings").format(
                where=where
            )
        )
    start = to_unix_nanos(record.get("start_time"))
    if start is None:
        raise TraceFormatError(
            _("{where}.start_time: expected an ISO 8601 time or epoch milliseconds").format(
                where=where
            )
        )
    attributes = _attributes(record, where)
    kind = record.get("span_kind")
    if isinstance(kind, str) and kind:
        attributes.setdefault(OI_SPAN_KIND, kind)
    parent = record.get("parent_id")
    status = str(record.get("status_code") or "UNSET").upper()
    return Span(
        trace_id=trace_id.strip().lower(),
        span_id=span_id.strip().lower(),
        parent_span_id=parent.strip().lower() if isinstance(parent, str) and parent else None,
        name=str(record.get("name") or ""),
        start_time_unix_nano=start,
        end_time_unix_nano=to_unix_nanos(record.get("end_time")),
        attributes=attributes,
        events=_events(record.get("events"), start, where),
        status=_STATUS.get(status, "unset"),  # type: ignore[arg-type]
        status_message=str(record.get("status_message") or ""),
    )


def _attributes(record: Mapping[str, Any], where: str) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    nested = record.get("attributes")
    if nested is not None:
        if not isinstance(nested, Mapping):
            raise TraceFormatError(_("{where}.attributes: expected an object").format(where=where))
        _flatten(nested, "", flat)
    for column, value in record.items():
        if column.startswith(_ATTRIBUTE_COLUMN):
            _flatten_value(value, column[len(_ATTRIBUTE_COLUMN) :], flat)
    return flat


def _flatten(values: Mapping[str, Any], prefix: str, into: dict[str, Any]) -> None:
    for key, value in values.items():
        _flatten_value(value, f"{prefix}{key}", into)


def _flatten_value(value: Any, key: str, into: dict[str, Any]) -> None:
    """Phoenix stores attributes nested; OTel attributes are flat: ``a.b.0.c``.

    Lists of objects are flattened with their index (``llm.input_messages.0.message.role``),
    lists of plain values stay lists (``tag.tags``), and missing values (a dataframe's
    empty cells) are dropped.
    """
    if value is None:
        return
    if isinstance(value, Mapping):
        _flatten(value, f"{key}.", into)
    elif isinstance(value, list) and any(isinstance(item, Mapping) for item in value):
        for index, item in enumerate(value):
            _flatten_value(item, f"{key}.{index}", into)
    else:
        into[key] = value


def _events(raw: Any, start: int, where: str) -> list[SpanEvent]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise TraceFormatError(_("{where}.events: expected a list of events").format(where=where))
    events = []
    for index, event in enumerate(raw):
        if not isinstance(event, Mapping):
            raise TraceFormatError(
                _("{where}.events[{index}]: expected an object").format(where=where, index=index)
            )
        attributes: dict[str, Any] = {}
        if isinstance(event.get("attributes"), Mapping):
            _flatten(event["attributes"], "", attributes)
        events.append(
            SpanEvent(
                name=str(event.get("name") or ""),
                time_unix_nano=to_unix_nanos(event.get("timestamp")) or start,
                attributes=attributes,
            )
        )
    return sorted(events, key=lambda e: e.time_unix_nano)
