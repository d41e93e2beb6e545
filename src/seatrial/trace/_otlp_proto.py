"""OTLP/protobuf import: the body an OpenTelemetry exporter POSTs to ``/v1/traces``.

The body is an ``ExportTraceServiceRequest``. Spans are read straight off the decoded
message objects (the C ``upb`` runtime), not through ``MessageToDict`` and the OTLP/JSON
reader: that detour builds and walks a second tree of dicts and costs several times more.
Every field read off a message object costs about half a microsecond (upb makes a Python
object for it), so each is read once, and the spans are built with
:func:`~seatrial.trace.trusted_model`: the protobuf schema and this module already give each
value its field's type, and validating them again was a fifth of the receiver's work.

A span's attributes are most of those reads, and most of them repeat from span to span
(operation, model, provider and tool names, settings): the body is parsed with a copy of the
schema that leaves each span attribute as the bytes of its ``KeyValue``, and one body's
attributes already read are looked up by those bytes (:func:`_span_attributes`); the others
are parsed on their own, as the whole body would have parsed them.
What comes out is what :func:`seatrial.trace.traces_from_otlp` makes of the same export in
JSON: hex ids, ``AnyValue`` as Python values (bytes as base64 text, as OTLP/JSON writes
them), the resource's attributes in :attr:`Trace.resource`.

Errors say where the message is wrong (``resource_spans[0].scope_spans[1].spans[3]``) and
never quote it: an export may hold personal data that is masked only after it is read.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Iterable
from typing import Any, Literal

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FileDescriptor
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue

from seatrial.i18n import gettext as _
from seatrial.trace._otlp import OtlpFormatError
from seatrial.trace._span import Span, SpanEvent, SpanLink, Trace
from seatrial.trace._trusted import trusted_model

_STATUS: dict[int, Literal["unset", "ok", "error"]] = {0: "unset", 1: "ok", 2: "error"}
_NO_PARENT = b"\x00" * 8
_SCALARS = frozenset({str, int, float, bool, type(None)})

_Known = dict[bytes, tuple[str, Any, bool]]
"""A span attribute's ``KeyValue`` bytes -> its key, its value, and whether the value is a
list (each span gets a copy of it); only values without dicts or nested lists are kept."""


class _Undecodable(Exception):
    """A span attribute's bytes are not a ``KeyValue``: the body is not an export."""


def traces_from_otlp_protobuf(body: bytes) -> list[Trace]:
    """The traces of an ``ExportTraceServiceRequest`` body, one per trace id, in order of
    first appearance, spans in start order; OtlpFormatError for a body that is not one."""
    request = _request_type()()
    try:
        request.ParseFromString(body)
        return _traces(request)
    except (DecodeError, _Undecodable) as exc:
        raise _not_an_export(body) from exc
    except OtlpFormatError:
        # A body that does not parse as a whole is refused as such, whatever its spans
        # hold, as when the span attributes were parsed with it.
        if not _parses(body):
            raise _not_an_export(body) from None
        raise


def _traces(request: Any) -> list[Trace]:
    grouped: dict[str, tuple[list[Span], dict[str, Any]]] = {}
    known: _Known = {}
    for r, resource_spans in enumerate(request.resource_spans):
        try:
            resource = _attributes(resource_spans.resource.attributes)
        except OtlpFormatError as exc:
            # untranslated: a path in the message, which an exporter logs
            raise OtlpFormatError(f"resource_spans[{r}].resource.{exc}") from None
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            for i, raw in enumerate(scope_spans.spans):
                try:
                    span = _span(raw, known)
                except OtlpFormatError as exc:
                    # Where is worked out only for a bad span: most exports have none.
                    where = f"resource_spans[{r}].scope_spans[{s}].spans[{i}]"
                    raise OtlpFormatError(f"{where}.{exc}") from None
                found = grouped.get(span.trace_id)
                if found is None:
                    grouped[span.trace_id] = ([span], resource)
                else:
                    found[0].append(span)
    traces = []
    for trace_id, (spans, resource) in grouped.items():
        spans.sort(key=lambda span: span.start_time_unix_nano)
        traces.append(
            trusted_model(Trace, {"trace_id": trace_id, "spans": spans, "resource": dict(resource)})
        )
    return traces


def _not_an_export(body: bytes) -> OtlpFormatError:
    return OtlpFormatError(
        # untranslated: the receiver's answer, which an exporter logs
        f"the body ({len(body)} bytes) is not an OTLP ExportTraceServiceRequest in "
        "protobuf; send Content-Type application/json for OTLP/JSON"
    )


def _parses(body: bytes) -> bool:
    """Whether ``body`` parses with the OTLP schema itself."""
    try:
        ExportTraceServiceRequest().ParseFromString(body)
    except DecodeError:
        return False
    return True


@functools.cache
def _request_type() -> type[Message]:
    """``ExportTraceServiceRequest`` as a copy of the schema whose ``Span.attributes`` are
    ``repeated bytes``: the same wire format, each attribute left as its ``KeyValue``'s bytes."""
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(file: FileDescriptor) -> None:
        if file.name in added:
            return
        for dependency in file.dependencies:
            add(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(proto)
        for message in proto.message_type:
            if proto.package == "opentelemetry.proto.trace.v1" and message.name == "Span":
                for field in message.field:
                    if field.name == "attributes":
                        field.type = descriptor_pb2.FieldDescriptorProto.TYPE_BYTES
                        field.ClearField("type_name")
        pool.Add(proto)
        added.add(file.name)

    request = ExportTraceServiceRequest.DESCRIPTOR
    add(request.file)
    copy: type[Message] = message_factory.GetMessageClass(
        pool.FindMessageTypeByName(request.full_name)
    )
    return copy


def _span(raw: Any, known: _Known) -> Span:
    """One span; an OtlpFormatError message starts with the field (the caller adds where)."""
    trace_id = _hex(raw.trace_id, 16, "trace_id")
    span_id = _hex(raw.span_id, 8, "span_id")
    parent = raw.parent_span_id
    # Some exporters write the invalid all-zero id for "no parent": that is a root.
    has_parent = parent and parent != _NO_PARENT
    start = raw.start_time_unix_nano
    if not start:
        raise OtlpFormatError(_("start_time_unix_nano: required, and missing"))
    status = raw.status
    code = status.code
    if code not in _STATUS:
        raise OtlpFormatError(_("status.code: expected 0, 1 or 2 (unset, ok, error)"))
    # upb's repeated fields iterate by index until an IndexError, which costs more than
    # the rest of an empty loop: most spans have no events and no links, so the loops are
    # entered only for spans that have some, and the attributes are read off a slice.
    events = []
    for e, event in enumerate(raw.events) if raw.events else ():
        try:
            values = _attributes(event.attributes)
        except OtlpFormatError as exc:
            # untranslated: a path in the message, which an exporter logs
            raise OtlpFormatError(f"events[{e}].attributes.{exc}") from None
        events.append(
            SpanEvent(
                name=event.name, time_unix_nano=event.time_unix_nano or start, attributes=values
            )
        )
    if len(events) > 1:
        events.sort(key=lambda event: event.time_unix_nano)
    try:
        attributes = _span_attributes(raw.attributes[:], known)
    except OtlpFormatError as exc:
        # untranslated: a path in the message, which an exporter logs
        raise OtlpFormatError(f"attributes.{exc}") from None
    links = []
    for n, link in enumerate(raw.links) if raw.links else ():
        try:
            values = _attributes(link.attributes)
        except OtlpFormatError as exc:
            # untranslated: a path in the message, which an exporter logs
            raise OtlpFormatError(f"links[{n}].attributes.{exc}") from None
        links.append(
            SpanLink(
                trace_id=_hex(link.trace_id, 16, f"links[{n}].trace_id"),
                span_id=_hex(link.span_id, 8, f"links[{n}].span_id"),
                trace_state=link.trace_state,
                attributes=values,
            )
        )
    # Every field, in the model's order: trusted_model takes the dict as the instance's own.
    return trusted_model(
        Span,
        {
            "trace_id": trace_id,
            "span_id": span_id,
            "parent_span_id": _hex(parent, 8, "parent_span_id") if has_parent else None,
            "name": raw.name,
            "start_time_unix_nano": start,
            "end_time_unix_nano": raw.end_time_unix_nano or None,
            "attributes": attributes,
            "events": events,
            "status": _STATUS[code],
            "status_message": status.message,
            "links": links,
        },
    )


def _hex(value: bytes, size: int, field: str) -> str:
    if len(value) != size:
        if not value:
            raise OtlpFormatError(_("{field}: required, and missing").format(field=field))
        raise OtlpFormatError(
            _("{field}: expected a {size}-byte id, got {count} bytes").format(
                field=field, size=size, count=len(value)
            )
        )
    return value.hex()


def _span_attributes(pairs: Iterable[bytes], known: _Known) -> dict[str, Any]:
    """A span's attributes from their ``KeyValue`` bytes; ``known`` holds those of the body's
    spans read before (most attributes repeat from span to span) and is added to."""
    values = {}
    for pair in pairs:
        found = known.get(pair)
        if found is None:
            found = _read_pair(pair)
            if found[2] or type(found[1]) in _SCALARS:
                known[pair] = found
        key, value, is_list = found
        values[key] = value[:] if is_list else value
    return values


def _read_pair(pair: bytes) -> tuple[str, Any, bool]:
    """A ``KeyValue``'s key and value from its bytes, and whether the value is a list of
    plain values (see _Known)."""
    try:
        read = KeyValue.FromString(pair)
    except DecodeError as exc:
        raise _Undecodable from exc
    value = read.value
    kind = value.WhichOneof("value")
    if kind == "array_value" or kind == "kvlist_value":
        # Nested values count against upb's nesting limit from the body's root: parsed
        # where the body has them, they are refused exactly where the whole body was.
        read = _nested_pair(pair)
        value = read.value
    key = read.key
    try:
        result = _value(value)
    except OtlpFormatError as exc:
        raise OtlpFormatError(f"{key}{exc}") from None
    flat = type(result) is list and all(type(item) in _SCALARS for item in result)
    return key, result, flat


def _nested_pair(pair: bytes) -> Any:
    """The ``KeyValue`` parsed as the attribute of a span in a request, at the depth a body
    nests it."""
    wrapped = pair
    for number in (9, 2, 2, 1):  # Span.attributes, ScopeSpans.spans, ResourceSpans.scope_spans
        wrapped = _length_delimited(number, wrapped)
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(wrapped)
    except DecodeError as exc:
        raise _Undecodable from exc
    return request.resource_spans[0].scope_spans[0].spans[0].attributes[0]


def _length_delimited(number: int, payload: bytes) -> bytes:
    header = bytearray([number << 3 | 2])
    size = len(payload)
    while size > 0x7F:
        header.append(size & 0x7F | 0x80)
        size >>= 7
    header.append(size)
    return bytes(header) + payload


def _attributes(pairs: Any) -> dict[str, Any]:
    values = {}
    for pair in pairs:
        value = pair.value
        # Most attributes are non-empty strings: one read answers for them, without asking
        # upb which field of the oneof is set (an empty string is read again below).
        text = value.string_value
        if text:
            values[pair.key] = text
            continue
        try:
            values[pair.key] = _value(value)
        except OtlpFormatError as exc:
            raise OtlpFormatError(f"{pair.key}{exc}") from None
    return values


def _value(value: Any) -> Any:
    """An ``AnyValue`` as Python: scalars, lists, dicts; unset is None.

    An OtlpFormatError's message starts where inside the value (``[2]``, ``.key``) or with
    ``:``, for :func:`_attributes` to put the attribute's key before it.
    """
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind == "int_value":
        return value.int_value
    if kind == "double_value":
        return value.double_value
    if kind == "bool_value":
        return value.bool_value
    if kind is None:
        return None
    if kind == "array_value":
        items = []
        for i, item in enumerate(value.array_value.values):
            try:
                items.append(_value(item))
            except OtlpFormatError as exc:
                raise OtlpFormatError(f"[{i}]{exc}") from None
        return items
    if kind == "kvlist_value":
        try:
            return _attributes(value.kvlist_value.values)
        except OtlpFormatError as exc:
            raise OtlpFormatError(f".{exc}") from None
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    raise OtlpFormatError(_(": an AnyValue of a kind this Seatrial does not know"))
