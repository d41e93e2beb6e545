"""OTLP/protobuf import: spans the real OpenTelemetry SDK encodes read like their OTLP/JSON
twin; every AnyValue kind; bad bodies named without being quoted."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from seatrial.trace import OtlpFormatError, attrs, traces_from_otlp, traces_from_otlp_protobuf

SECRET = "13812345678"
"""A phone number inside a span: it must never show up in an error message."""


def sdk_spans() -> Sequence[ReadableSpan]:
    """An agent run recorded by the real SDK: the agent, a chat, a failing tool call."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "support-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("invoke_agent support") as root:
        root.set_attribute(attrs.OPERATION, attrs.OP_INVOKE_AGENT)
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attributes(
                {
                    attrs.OPERATION: attrs.OP_CHAT,
                    attrs.REQUEST_MODEL: "gpt-4o",
                    attrs.INPUT_TOKENS: 812,
                    attrs.OUTPUT_TOKENS: 57,
                    "app.scores": [0.5, 1.5],
                    "app.flags": [True, False],
                }
            )
        with tracer.start_as_current_span("execute_tool lookup_order") as tool:
            tool.set_attributes(
                {
                    attrs.OPERATION: attrs.OP_EXECUTE_TOOL,
                    attrs.TOOL_NAME: "lookup_order",
                    attrs.TOOL_ARGUMENTS: f'{{"phone": "{SECRET}"}}',
                }
            )
            tool.add_event("retry", {"attempt": 2})
            tool.set_status(Status(StatusCode.ERROR, "order service down"))
    provider.shutdown()
    return exporter.get_finished_spans()


def test_sdk_spans_read_from_protobuf_as_from_their_json_twin() -> None:
    request = encode_spans(sdk_spans())

    from_proto = traces_from_otlp_protobuf(request.SerializeToString())
    from_json = traces_from_otlp(MessageToDict(request))

    assert len(from_proto) == 1
    trace = from_proto[0]
    assert [span.model_dump() for span in trace.spans] == [
        span.model_dump() for span in from_json[0].spans
    ]
    assert trace.resource["service.name"] == "support-bot"
    assert [span.name for span in trace.spans] == [
        "invoke_agent support",
        "chat gpt-4o",
        "execute_tool lookup_order",
    ]
    root, chat, tool = trace.spans
    assert root.parent_span_id is None
    assert chat.parent_span_id == tool.parent_span_id == root.span_id
    assert len(root.span_id) == 16 and len(trace.trace_id) == 32
    assert chat.attributes[attrs.INPUT_TOKENS] == 812
    assert chat.attributes["app.scores"] == [0.5, 1.5]
    assert chat.attributes["app.flags"] == [True, False]
    assert (tool.status, tool.status_message) == ("error", "order service down")
    assert tool.events[0].name == "retry" and tool.events[0].attributes == {"attempt": 2}
    assert trace.model_calls()[0].model == "gpt-4o"
    assert trace.tool_calls()[0].arguments == {"phone": SECRET}


def request_of(*spans: ProtoSpan, resource: Sequence[KeyValue] = ()) -> bytes:
    """An export request body holding ``spans`` under one resource and scope."""
    message = ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource={"attributes": list(resource)},
                scope_spans=[ScopeSpans(spans=list(spans))],
            )
        ]
    )
    return message.SerializeToString()


def proto_span(**fields: Any) -> ProtoSpan:
    """A valid span with ``fields`` changed."""
    values: dict[str, Any] = {
        "trace_id": bytes(range(16)),
        "span_id": bytes(range(8)),
        "name": "chat",
        "start_time_unix_nano": 1_764_000_000_000_000_000,
        "end_time_unix_nano": 1_764_000_001_000_000_000,
    }
    values.update(fields)
    return ProtoSpan(**values)


def test_every_any_value_kind_becomes_a_python_value() -> None:
    values = [
        KeyValue(key="s", value=AnyValue(string_value="你好")),
        KeyValue(key="i", value=AnyValue(int_value=-(2**40))),
        KeyValue(key="d", value=AnyValue(double_value=0.25)),
        KeyValue(key="b", value=AnyValue(bool_value=False)),
        KeyValue(key="raw", value=AnyValue(bytes_value=b"\x00\xff")),
        KeyValue(key="unset", value=AnyValue()),
        KeyValue(
            key="nested",
            value=AnyValue(
                kvlist_value={
                    "values": [
                        KeyValue(
                            key="list",
                            value=AnyValue(
                                array_value={
                                    "values": [
                                        AnyValue(int_value=1),
                                        AnyValue(string_value="two"),
                                    ]
                                }
                            ),
                        ),
                    ]
                }
            ),
        ),
    ]
    body = request_of(proto_span(attributes=values), resource=values[:1])

    (trace,) = traces_from_otlp_protobuf(body)

    assert trace.spans[0].attributes == {
        "s": "你好",
        "i": -(2**40),
        "d": 0.25,
        "b": False,
        "raw": base64.b64encode(b"\x00\xff").decode(),
        "unset": None,
        "nested": {"list": [1, "two"]},
    }
    assert trace.resource == {"s": "你好"}


def test_spans_group_by_trace_in_start_order_and_an_all_zero_parent_is_a_root() -> None:
    other = bytes([9] * 16)
    body = request_of(
        proto_span(span_id=b"\x02" * 8, start_time_unix_nano=5, parent_span_id=b"\x01" * 8),
        proto_span(trace_id=other, span_id=b"\x03" * 8),
        proto_span(span_id=b"\x01" * 8, start_time_unix_nano=3, parent_span_id=b"\x00" * 8),
    )

    first, second = traces_from_otlp_protobuf(body)

    assert [span.span_id for span in first.spans] == ["01" * 8, "02" * 8]
    assert first.spans[0].parent_span_id is None
    assert first.spans[1].parent_span_id == "01" * 8
    assert second.trace_id == other.hex()


def test_an_empty_request_holds_no_traces() -> None:
    assert traces_from_otlp_protobuf(b"") == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (SECRET.encode() * 3, "not an OTLP ExportTraceServiceRequest"),
        (request_of(proto_span(span_id=b"")), r"spans\[0\]\.span_id: required"),
        (request_of(proto_span(trace_id=b"\x01" * 8)), "expected a 16-byte id, got 8 bytes"),
        (request_of(proto_span(start_time_unix_nano=0)), "start_time_unix_nano: required"),
    ],
)
def test_a_bad_body_is_named_by_where_it_is_wrong_never_quoted(body: bytes, expected: str) -> None:
    with pytest.raises(OtlpFormatError, match=expected) as caught:
        traces_from_otlp_protobuf(body)
    assert SECRET not in str(caught.value)


def repeated_attribute_spans() -> Sequence[ReadableSpan]:
    """Two traces of SDK spans whose attributes mostly repeat from span to span, as an
    instrumented agent's do (operation, model, settings, a list), some of them unique."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "support-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    for conversation in ("c-1", "c-2"):
        with tracer.start_as_current_span("invoke_agent support") as root:
            root.set_attributes({attrs.OPERATION: attrs.OP_INVOKE_AGENT, "app.tenant": "acme"})
            for turn in range(3):
                with tracer.start_as_current_span("chat qwen-max") as chat:
                    chat.set_attributes(
                        {
                            attrs.OPERATION: attrs.OP_CHAT,
                            attrs.REQUEST_MODEL: "qwen-max",
                            attrs.INPUT_TOKENS: 800 if turn < 2 else 920,
                            "gen_ai.request.temperature": 0.2,
                            "gen_ai.response.finish_reasons": ["tool_calls"],
                            "app.stream": False,
                            "app.conversation": conversation,
                            "app.turn": turn,
                            "app.empty": "",
                        }
                    )
    provider.shutdown()
    return exporter.get_finished_spans()


def test_repeated_attributes_read_as_from_their_json_twin_each_span_its_own_lists() -> None:
    request = encode_spans(repeated_attribute_spans())

    from_proto = traces_from_otlp_protobuf(request.SerializeToString())
    from_json = traces_from_otlp(MessageToDict(request))

    assert [trace.model_dump() for trace in from_proto] == [
        trace.model_dump() for trace in from_json
    ]
    chats = [span for trace in from_proto for span in trace.spans if span.name.startswith("chat")]
    assert len(chats) == 6
    for span in chats:
        assert list(span.attributes) == list(chats[0].attributes)
        assert span.attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    reasons = [id(span.attributes["gen_ai.response.finish_reasons"]) for span in chats]
    assert len(set(reasons)) == len(reasons), "a list value is shared between spans"


def delimited(number: int, payload: bytes) -> bytes:
    """Field ``number`` holding ``payload``, as the wire format writes a length-delimited field."""
    size, header = len(payload), bytearray([number << 3 | 2])
    while size > 0x7F:
        header.append(size & 0x7F | 0x80)
        size >>= 7
    return bytes(header) + bytes([size]) + payload


def request_of_bytes(*spans: bytes) -> bytes:
    """An export request holding spans given as their bytes, under one resource and scope."""
    scope = b"".join(delimited(2, span) for span in spans)
    return delimited(1, delimited(2, scope))


def nested_attribute_span(levels: int) -> bytes:
    """A span whose attribute ``deep`` is a string nested ``levels`` times in key-value lists,
    as bytes (the message classes refuse to build what is nested past upb's limit)."""
    value = AnyValue(string_value="x").SerializeToString()
    for _ in range(levels):
        value = delimited(6, delimited(1, delimited(1, b"k") + delimited(2, value)))
    pair = delimited(1, b"deep") + delimited(2, value)
    return proto_span().SerializeToString() + delimited(9, pair)


def parses(body: bytes) -> bool:
    try:
        ExportTraceServiceRequest().ParseFromString(body)
    except DecodeError:
        return False
    return True


def test_an_attribute_nested_past_the_parsers_limit_is_refused_as_the_whole_body_is() -> None:
    (trace,) = traces_from_otlp_protobuf(request_of_bytes(nested_attribute_span(3)))
    assert trace.spans[0].attributes["deep"] == {"k": {"k": {"k": "x"}}}
    outcomes = []
    for levels in range(20, 40):
        body = request_of_bytes(nested_attribute_span(levels))
        outcomes.append(parses(body))
        if outcomes[-1]:
            assert traces_from_otlp_protobuf(body)[0].spans[0].attributes["deep"]
        else:
            with pytest.raises(OtlpFormatError, match="not an OTLP ExportTraceServiceRequest"):
                traces_from_otlp_protobuf(body)
    assert True in outcomes and False in outcomes


def test_an_attribute_that_is_no_key_value_refuses_the_body_before_a_bad_span_is_named() -> None:
    bad_span = proto_span(start_time_unix_nano=0).SerializeToString()
    # An attribute whose key is not UTF-8, which upb refuses in a string field.
    broken = proto_span().SerializeToString() + delimited(9, delimited(1, b"\xff\xfe"))
    assert not parses(request_of_bytes(bad_span, broken))

    with pytest.raises(OtlpFormatError, match="not an OTLP ExportTraceServiceRequest"):
        traces_from_otlp_protobuf(request_of_bytes(bad_span, broken))
    with pytest.raises(OtlpFormatError, match="not an OTLP ExportTraceServiceRequest"):
        traces_from_otlp_protobuf(request_of_bytes(broken))
    with pytest.raises(OtlpFormatError, match="start_time_unix_nano: required"):
        traces_from_otlp_protobuf(request_of_bytes(bad_span))
