"""OTLP/JSON import and export, so any OpenTelemetry backend can read or send a Seatrial trace.

The format is the JSON encoding of OTLP's ``ExportTraceServiceRequest``:
``resourceSpans[].scopeSpans[].spans[]`` with hex ids, nanosecond times written as strings
(numbers are accepted too), typed ``AnyValue`` attributes, events and a status. Importing
accepts the snake_case spelling of field names and base64 ids as well, because some exporters
write protobuf's default JSON mapping.

Error messages name where the export is wrong (``resourceSpans[0].scopeSpans[0].spans[3]``)
and what was expected, never a value from it: an export may hold personal data that is masked
only after it has been read.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from typing import Any

from seatrial.i18n import gettext as _
from seatrial.trace import _attrs as A
from seatrial.trace._span import Span, SpanEvent, SpanLink, Trace

_STATUS_FROM_CODE = {
    0: "unset",
    1: "ok",
    2: "error",
    "STATUS_CODE_UNSET": "unset",
    "STATUS_CODE_OK": "ok",
    "STATUS_CODE_ERROR": "error",
}
_CODE_FROM_STATUS = {"unset": 0, "ok": 1, "error": 2}

# OTLP SpanKind: inference calls leave the process, everything else stays inside it.
_KIND_INTERNAL = 1
_KIND_CLIENT = 3
_CLIENT_OPERATIONS = frozenset({A.OP_CHAT, "text_completion", "generate_content", "embeddings"})

_SPECIAL_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_DIGITS = frozenset("0123456789")
_SNAKE: dict[str, str] = {}
"""lowerCamelCase field name -> its snake_case spelling, worked out once each."""

# Reading a large export visits every span and attribute: the tests below start with
# ``type(value) is dict`` (what json.loads makes), which is much cheaper than an
# ``isinstance(value, Mapping)`` that then still decides for any other mapping.


class OtlpFormatError(ValueError):
    """The data is not valid OTLP/JSON; the message names where (``resourceSpans[0]...``)."""


def _kind(value: Any) -> str:
    """What a misplaced value is, for an error message that must not echo the value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _field(obj: Mapping[str, Any], camel: str, default: Any = None) -> Any:
    """Read an OTLP/JSON field by its lowerCamelCase name, else its snake_case name."""
    if camel in obj:
        return obj[camel]
    snake = _SNAKE.get(camel)
    if snake is None:
        snake = _SNAKE[camel] = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return obj.get(snake, default)


def _list(obj: Mapping[str, Any], camel: str, where: str) -> list[Any]:
    value = _field(obj, camel, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise OtlpFormatError(
            _("{where}.{camel}: expected a list, got {kind}").format(
                where=where, camel=camel, kind=_kind(value)
            )
        )
    return value


def _hex_id(value: Any, length: int, where: str) -> str | None:
    """Ids are hex in OTLP/JSON; protobuf's default JSON mapping writes base64 instead."""
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise OtlpFormatError(
            _("{where}: an id must be a string, got {kind}").format(where=where, kind=_kind(value))
        )
    text = value.strip()
    if len(text) == length and _HEX_DIGITS.issuperset(text):
        return text.lower()
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise OtlpFormatError(
            _("{where}: expected {length} hex digits or base64, got neither").format(
                where=where, length=length
            )
        ) from exc
    if len(raw) * 2 != length:
        raise OtlpFormatError(
            _("{where}: expected a {size}-byte id").format(where=where, size=length // 2)
        )
    return raw.hex()


def _nanos(value: Any, where: str) -> int | None:
    if value in (None, "", 0, "0"):
        return None
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        raise OtlpFormatError(
            _("{where}: expected a time in nanoseconds (digits)").format(where=where)
        ) from exc


def decode_any_value(value: Any, where: str = "value") -> Any:
    """Turn an OTLP ``AnyValue`` into Python: scalars, lists and dicts (empty -> None)."""
    if type(value) is not dict and not isinstance(value, Mapping):
        raise OtlpFormatError(
            _("{where}: expected an AnyValue object, got {kind}").format(
                where=where, kind=_kind(value)
            )
        )
    if not value:
        return None
    kind, inner = next(iter(value.items()))
    try:
        if kind in ("stringValue", "string_value"):
            return str(inner)
        if kind in ("boolValue", "bool_value"):
            if isinstance(inner, str):
                return inner.lower() == "true"
            return bool(inner)
        if kind in ("intValue", "int_value"):
            return int(inner)
        if kind in ("doubleValue", "double_value"):
            if isinstance(inner, str) and inner in _SPECIAL_DOUBLES:
                return _SPECIAL_DOUBLES[inner]
            return float(inner)
        if kind in ("bytesValue", "bytes_value"):
            return str(inner)
        if kind in ("arrayValue", "array_value"):
            items = (inner or {}).get("values") or []
            return [decode_any_value(v, f"{where}[{i}]") for i, v in enumerate(items)]
        if kind in ("kvlistValue", "kvlist_value"):
            pairs = (inner or {}).get("values") or []
            return _decode_attributes(pairs, where)
    except (TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, OtlpFormatError):
            raise
        raise OtlpFormatError(
            _("{where}: {kind} does not hold a value of its type").format(where=where, kind=kind)
        ) from exc
    raise OtlpFormatError(
        _("{where}: unknown AnyValue kind {kind}").format(where=where, kind=repr(kind))
    )


def _decode_attributes(pairs: Any, where: str) -> dict[str, Any]:
    if not isinstance(pairs, list):
        raise OtlpFormatError(
            _("{where}: attributes must be a list of {{key, value}}").format(where=where)
        )
    result: dict[str, Any] = {}
    for i, pair in enumerate(pairs):
        if (type(pair) is not dict and not isinstance(pair, Mapping)) or "key" not in pair:
            raise OtlpFormatError(
                _("{where}[{i}]: expected {{key, value}}, got {kind}").format(
                    where=where, i=i, kind=_kind(pair)
                )
            )
        key = str(pair["key"])
        value = pair.get("value") or {}
        if type(value) is dict and len(value) == 1:
            # Most attributes are plain scalars: read here, as decode_any_value reads them,
            # without a call or a place worked out for an error that cannot happen.
            kind, inner = next(iter(value.items()))
            plain = type(inner)
            if kind == "stringValue" and plain is str:
                result[key] = inner
                continue
            if kind == "intValue" and (
                plain is int or (plain is str and 0 < len(inner) < 19 and _DIGITS.issuperset(inner))
            ):
                result[key] = int(inner)
                continue
            if (kind == "boolValue" and plain is bool) or (
                kind == "doubleValue" and plain is float
            ):
                result[key] = inner
                continue
        result[key] = decode_any_value(value, f"{where}.{key}")
    return result


def _decode_status(status: Any, where: str) -> tuple[str, str]:
    if not status:
        return "unset", ""
    if not isinstance(status, Mapping):
        raise OtlpFormatError(_("{where}: status must be an object").format(where=where))
    code = status.get("code", 0)
    # A list or an object as the code would make the lookup itself fail (unhashable).
    if not isinstance(code, int | str) or code not in _STATUS_FROM_CODE:
        raise OtlpFormatError(
            _("{where}.code: unknown status code (expected 0, 1 or 2)").format(where=where)
        )
    return _STATUS_FROM_CODE[code], str(status.get("message") or "")


def _decode_span(raw: Any, where: str) -> Span:
    if type(raw) is not dict and not isinstance(raw, Mapping):
        raise OtlpFormatError(_("{where}: a span must be an object").format(where=where))
    trace_id = _hex_id(_field(raw, "traceId"), 32, f"{where}.traceId")
    span_id = _hex_id(_field(raw, "spanId"), 16, f"{where}.spanId")
    if trace_id is None or span_id is None:
        raise OtlpFormatError(_("{where}: traceId and spanId are required").format(where=where))
    start = _nanos(_field(raw, "startTimeUnixNano"), f"{where}.startTimeUnixNano")
    if start is None:
        raise OtlpFormatError(_("{where}: startTimeUnixNano is required").format(where=where))
    events = []
    for i, event in enumerate(_list(raw, "events", where)):
        at = f"{where}.events[{i}]"
        if not isinstance(event, Mapping):
            raise OtlpFormatError(_("{at}: an event must be an object").format(at=at))
        events.append(
            SpanEvent(
                name=str(event.get("name") or ""),
                time_unix_nano=_nanos(_field(event, "timeUnixNano"), at) or start,
                attributes=_decode_attributes(_list(event, "attributes", at), f"{at}.attributes"),
            )
        )
    links = []
    for i, link in enumerate(_list(raw, "links", where)):
        at = f"{where}.links[{i}]"
        if not isinstance(link, Mapping):
            raise OtlpFormatError(_("{at}: a link must be an object").format(at=at))
        linked_trace = _hex_id(_field(link, "traceId"), 32, f"{at}.traceId")
        linked_span = _hex_id(_field(link, "spanId"), 16, f"{at}.spanId")
        if linked_trace is None or linked_span is None:
            raise OtlpFormatError(_("{at}: traceId and spanId are required").format(at=at))
        links.append(
            SpanLink(
                trace_id=linked_trace,
                span_id=linked_span,
                trace_state=str(_field(link, "traceState") or ""),
                attributes=_decode_attributes(_list(link, "attributes", at), f"{at}.attributes"),
            )
        )
    status, message = _decode_status(raw.get("status"), f"{where}.status")
    parent = _hex_id(_field(raw, "parentSpanId"), 16, f"{where}.parentSpanId")
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        # Some exporters write the invalid all-zero id for "no parent": that is a root, not
        # a span whose parent went missing.
        parent_span_id=None if parent == "0" * 16 else parent,
        name=str(raw.get("name") or ""),
        start_time_unix_nano=start,
        end_time_unix_nano=_nanos(_field(raw, "endTimeUnixNano"), f"{where}.endTimeUnixNano"),
        attributes=_decode_attributes(_list(raw, "attributes", where), f"{where}.attributes"),
        events=sorted(events, key=lambda e: e.time_unix_nano),
        status=status,  # type: ignore[arg-type]
        status_message=message,
        links=links,
    )


def _resource_spans(data: Mapping[str, Any]) -> list[tuple[dict[str, Any], list[Span]]]:
    """Each ``resourceSpans`` entry: its resource's attributes and its spans."""
    if not isinstance(data, Mapping):
        raise OtlpFormatError(_("an OTLP/JSON export must be an object with `resourceSpans`"))
    if _field(data, "resourceSpans") is None:
        raise OtlpFormatError(_("an OTLP/JSON export needs `resourceSpans`"))
    groups: list[tuple[dict[str, Any], list[Span]]] = []
    for r, resource_spans in enumerate(_list(data, "resourceSpans", "")):
        where = f"resourceSpans[{r}]"
        if not isinstance(resource_spans, Mapping):
            raise OtlpFormatError(_("{where}: expected an object").format(where=where))
        resource = resource_spans.get("resource") or {}
        if not isinstance(resource, Mapping):
            raise OtlpFormatError(_("{where}.resource: expected an object").format(where=where))
        attributes = _decode_attributes(
            _list(resource, "attributes", f"{where}.resource"), f"{where}.resource.attributes"
        )
        spans: list[Span] = []
        for s, scope in enumerate(_list(resource_spans, "scopeSpans", where)):
            at = f"{where}.scopeSpans[{s}]"
            if not isinstance(scope, Mapping):
                raise OtlpFormatError(_("{at}: expected an object").format(at=at))
            for i, raw in enumerate(_list(scope, "spans", at)):
                spans.append(_decode_span(raw, f"{at}.spans[{i}]"))
        groups.append((attributes, spans))
    return groups


def spans_from_otlp(data: Mapping[str, Any]) -> list[Span]:
    """Every span of an OTLP/JSON export, whatever trace it belongs to."""
    return [span for _, spans in _resource_spans(data) for span in spans]


def traces_from_otlp(data: Mapping[str, Any]) -> list[Trace]:
    """The traces of an OTLP/JSON export, one per trace id, in order of first appearance.

    Each trace's ``resource`` holds the resource attributes of the ``resourceSpans`` its spans
    came in (``service.name``, ...). A trace whose spans came from several resources (a
    distributed trace: two services in one export) gets them merged, the first resource's
    value winning where two disagree, so the service that started the trace names it.
    """
    grouped: dict[str, list[Span]] = {}
    resources: dict[str, dict[str, Any]] = {}
    for attributes, spans in _resource_spans(data):
        for span in spans:
            grouped.setdefault(span.trace_id, []).append(span)
        for trace_id in {span.trace_id for span in spans}:
            merged = resources.setdefault(trace_id, {})
            for key, value in attributes.items():
                merged.setdefault(key, value)
    return [
        Trace(
            trace_id=trace_id,
            spans=sorted(spans, key=lambda s: s.start_time_unix_nano),
            resource=resources[trace_id],
        )
        for trace_id, spans in grouped.items()
    ]


def trace_from_otlp(data: Mapping[str, Any]) -> Trace:
    """The one trace in an OTLP/JSON export (use :func:`traces_from_otlp` for several)."""
    traces = traces_from_otlp(data)
    if len(traces) != 1:
        raise OtlpFormatError(
            _(
                "expected spans of exactly one trace, found {count}; "
                "use traces_from_otlp() for an export holding several traces"
            ).format(count=len(traces))
        )
    return traces[0]


def encode_any_value(value: Any) -> dict[str, Any]:
    """Turn a Python value into an OTLP ``AnyValue`` (ints as decimal strings, per OTLP/JSON)."""
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        if math.isnan(value):
            return {"doubleValue": "NaN"}
        if math.isinf(value):
            return {"doubleValue": "Infinity" if value > 0 else "-Infinity"}
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _encode_attributes(value)}}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [encode_any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _encode_attributes(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": str(k), "value": encode_any_value(v)} for k, v in attributes.items()]


def _encode_span(span: Span) -> dict[str, Any]:
    encoded: dict[str, Any] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "name": span.name,
        "kind": _KIND_CLIENT if span.operation in _CLIENT_OPERATIONS else _KIND_INTERNAL,
        "startTimeUnixNano": str(span.start_time_unix_nano),
        "attributes": _encode_attributes(span.attributes),
        "events": [
            {
                "timeUnixNano": str(event.time_unix_nano),
                "name": event.name,
                "attributes": _encode_attributes(event.attributes),
            }
            for event in span.events
        ],
        "status": {"code": _CODE_FROM_STATUS[span.status]},
    }
    if span.parent_span_id:
        encoded["parentSpanId"] = span.parent_span_id
    if span.end_time_unix_nano is not None:
        encoded["endTimeUnixNano"] = str(span.end_time_unix_nano)
    if span.status_message:
        encoded["status"]["message"] = span.status_message
    if span.links:
        encoded["links"] = [_encode_link(link) for link in span.links]
    return encoded


def _encode_link(link: SpanLink) -> dict[str, Any]:
    encoded: dict[str, Any] = {
        "traceId": link.trace_id,
        "spanId": link.span_id,
        "attributes": _encode_attributes(link.attributes),
    }
    if link.trace_state:
        encoded["traceState"] = link.trace_state
    return encoded


def trace_to_otlp(trace: Trace, service_name: str = "seatrial") -> dict[str, Any]:
    """The trace as an OTLP/JSON export, ready to POST to any collector's ``/v1/traces``.

    The resource is the trace's own (an ingested trace keeps its ``service.name``), with
    ``service_name`` where it has none; reading the export back gives that resource.
    """
    resource = {"service.name": service_name, **trace.resource}
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _encode_attributes(resource)},
                "scopeSpans": [
                    {
                        "scope": {"name": "seatrial"},
                        "spans": [_encode_span(span) for span in trace.spans],
                    }
                ],
            }
        ]
    }
