"""OTLP/JSON import and export, checked on the OpenTelemetry GenAI conventions' own examples."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import pytest
import yaml

from seatrial.trace import (
    OtlpFormatError,
    Span,
    SpanEvent,
    Trace,
    TraceRecorder,
    trace_from_otlp,
    trace_to_otlp,
    traces_from_otlp,
)
from seatrial.trace import attrs as A
from tests.conftest import bundled_data

SEMCONV = bundled_data("otel-semconv-genai")
EXAMPLES = json.loads((SEMCONV / "examples-llm-calls.extracted.json").read_text("utf-8"))
TABLE_KEYS = ("Span name", "Trace id", "Span id")


def typed(value: Any) -> dict[str, Any]:
    """An OTLP AnyValue written the way exporters write it (ints as strings)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [typed(v) for v in value]}}
    return {"kvlistValue": {"values": [{"key": k, "value": typed(v)} for k, v in value.items()]}}


def export(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}


def otlp_span(index: int, properties: dict[str, Any], trace_id: str) -> dict[str, Any]:
    attributes = {k: v for k, v in properties.items() if k not in TABLE_KEYS}
    return {
        "traceId": properties.get("Trace id", trace_id),
        "spanId": properties.get("Span id", f"{index + 1:016x}"),
        "name": properties.get("Span name", attributes.get(A.OPERATION, "span")),
        "kind": 3,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + index * 1000),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + index * 1000 + 500),
        "attributes": [{"key": k, "value": typed(v)} for k, v in attributes.items()],
        "status": {},
    }


def test_the_semconv_span_tables_import_with_every_attribute_and_type():
    tables = EXAMPLES["span_tables"]
    spans = [
        otlp_span(i, t["properties"], "4bf92f3577b34da6a3ce929d0e0e4736")
        for i, t in enumerate(tables)
    ]
    # The tables reuse their example ids; give each span its own so they form one trace.
    for i, span in enumerate(spans):
        span["spanId"] = f"{i + 1:016x}"
    trace = trace_from_otlp(export(spans))
    assert len(trace.spans) == len(tables)
    for span, table in zip(trace.spans, tables, strict=True):
        expected = {k: v for k, v in table["properties"].items() if k not in TABLE_KEYS}
        assert span.attributes == expected
        assert all(type(span.attributes[k]) is type(v) for k, v in expected.items())
        if "Span name" in table["properties"]:
            assert span.name == table["properties"]["Span name"]
    chat = [t["properties"] for t in tables if t["properties"].get(A.OPERATION) == "chat"]
    assert [(m.input_tokens, m.output_tokens) for m in trace.model_calls()] == [
        (p[A.INPUT_TOKENS], p[A.OUTPUT_TOKENS]) for p in chat
    ]
    tools = [t["properties"][A.TOOL_NAME] for t in tables if A.TOOL_NAME in t["properties"]]
    assert [c.name for c in trace.tool_calls()] == tools


def test_the_semconv_message_examples_survive_as_nested_any_values():
    parsed = [e for e in EXAMPLES["examples"] if e["parsed"]]
    spans = []
    for i, example in enumerate(parsed):
        span = otlp_span(i, {A.OPERATION: "chat"}, "0af7651916cd43dd8448eb211c80319c")
        span["attributes"].append(
            {"key": "gen_ai.input.messages", "value": typed(example["value"])}
        )
        spans.append(span)
    trace = trace_from_otlp(export(spans))
    assert [s.attributes["gen_ai.input.messages"] for s in trace.spans] == [
        e["value"] for e in parsed
    ]


def _registry_types() -> dict[str, str]:
    types: dict[str, str] = {}
    for path in sorted((SEMCONV / "model").glob("*registry.yaml")):
        for group in yaml.safe_load(path.read_text("utf-8"))["groups"]:
            for attribute in group.get("attributes", []):
                kind = attribute.get("type")
                types[attribute["id"]] = kind if isinstance(kind, str) else "string"
    return types


SAMPLES = {
    "string": "x",
    "int": 7,
    "double": 0.5,
    "boolean": True,
    "string[]": ["a", "b"],
    "any": {"k": [1, "v"]},
}


@pytest.mark.parametrize(
    "scenario", sorted((SEMCONV / "reference_scenarios").glob("*.json")), ids=lambda p: p.stem
)
def test_reference_scenario_attributes_keep_their_registry_types(scenario):
    types = _registry_types()
    spans_by_kind = json.loads(scenario.read_text("utf-8"))["spans"]
    spans = []
    expected = []
    for i, (kind, keys) in enumerate(sorted(spans_by_kind.items())):
        attributes = {key: SAMPLES[types.get(key, "string")] for key in keys}
        spans.append(
            otlp_span(i, {"Span name": kind, **attributes}, "5b8efff798038103d269b633813fc60c")
        )
        expected.append((kind, attributes))
    trace = trace_from_otlp(export(spans))
    assert [(s.name, s.attributes) for s in trace.spans] == expected


def test_a_recorded_trace_round_trips_exactly():
    recorder = TraceRecorder()
    with recorder.span("invoke_agent support", {A.OPERATION: "invoke_agent"}):
        recorder.turn_index = 0
        recorder.event(A.TURN, {A.TURN_INDEX: 0, A.TURN_MESSAGE: "退款 1001"})
        with recorder.span(
            "chat gpt-4o",
            {
                A.OPERATION: "chat",
                A.INPUT_TOKENS: 52,
                A.COST_USD: 0.00125,
                "flag": False,
                "gen_ai.response.finish_reasons": ["stop"],
            },
        ):
            pass
        try:
            with recorder.span("execute_tool refund", {A.TOOL_ARGUMENTS: '{"id": "1001"}'}):
                recorder.event(A.PERMISSION, {A.PERMISSION_DECISION: "denied"})
                raise PermissionError("denied")
        except PermissionError:
            pass
    original = recorder.trace()
    exported = trace_to_otlp(original, service_name="support-agent")
    imported = trace_from_otlp(json.loads(json.dumps(exported)))
    assert imported == original.model_copy(update={"resource": {"service.name": "support-agent"}})
    resource = exported["resourceSpans"][0]["resource"]["attributes"]
    assert resource == [{"key": "service.name", "value": {"stringValue": "support-agent"}}]
    chat = exported["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    assert {"key": A.INPUT_TOKENS, "value": {"intValue": "52"}} in chat["attributes"]
    assert chat["kind"] == 3 and isinstance(chat["startTimeUnixNano"], str)


def test_unusual_values_round_trip():
    span = Span(
        trace_id="a" * 32,
        span_id="b" * 16,
        name="s",
        start_time_unix_nano=1,
        attributes={"none": None, "inf": math.inf, "nested": {"a": [1, {"b": None}]}},
        events=[SpanEvent(name="e", time_unix_nano=2)],
        status="error",
        status_message="broke",
    )
    trace = Trace(trace_id="a" * 32, spans=[span], resource={"service.name": "agent", "n": 1})
    assert trace_from_otlp(trace_to_otlp(trace)) == trace


def test_base64_ids_snake_case_fields_and_named_status_codes_are_read():
    trace_id = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
    span_id = bytes.fromhex("00f067aa0ba902b7")
    data = {
        "resource_spans": [
            {
                "scope_spans": [
                    {
                        "spans": [
                            {
                                "trace_id": base64.b64encode(trace_id).decode(),
                                "span_id": base64.b64encode(span_id).decode(),
                                "name": "chat gpt-4",
                                "start_time_unix_nano": 1_700_000_000_000_000_000,
                                "end_time_unix_nano": 1_700_000_000_500_000_000,
                                "attributes": [{"key": A.INPUT_TOKENS, "value": {"int_value": 52}}],
                                "events": [
                                    {
                                        "name": "gen_ai.client.inference.operation.details",
                                        "time_unix_nano": "1700000000100000000",
                                        "attributes": [],
                                    }
                                ],
                                "status": {"code": "STATUS_CODE_ERROR", "message": "rate limited"},
                            }
                        ]
                    }
                ]
            }
        ]
    }
    (span,) = trace_from_otlp(data).spans
    assert (span.trace_id, span.span_id) == (trace_id.hex(), span_id.hex())
    assert span.attributes == {A.INPUT_TOKENS: 52}
    assert span.duration_ms == 500
    assert [e.name for e in span.events] == ["gen_ai.client.inference.operation.details"]
    assert (span.status, span.status_message) == ("error", "rate limited")


def test_an_export_of_several_traces_is_split_by_trace_id():
    spans = [otlp_span(0, {}, "1" * 32), otlp_span(1, {}, "2" * 32), otlp_span(2, {}, "1" * 32)]
    traces = traces_from_otlp(export(spans))
    assert [(t.trace_id, len(t.spans)) for t in traces] == [("1" * 32, 2), ("2" * 32, 1)]
    with pytest.raises(OtlpFormatError, match="exactly one trace, found 2"):
        trace_from_otlp(export(spans))


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({}, "needs `resourceSpans`"),
        (export([{"traceId": "1" * 32, "spanId": "2" * 16}]), "spans[0]: startTimeUnixNano"),
        (
            export([{"traceId": "zz", "spanId": "2" * 16, "startTimeUnixNano": "1"}]),
            "spans[0].traceId",
        ),
        (
            export(
                [{**otlp_span(0, {}, "1" * 32), "attributes": [{"key": "k", "value": {"x": 1}}]}]
            ),
            "spans[0].attributes.k: unknown AnyValue kind",
        ),
        (export([{**otlp_span(0, {}, "1" * 32), "status": {"code": 9}}]), "unknown status code"),
    ],
    ids=["no-resource-spans", "no-start", "bad-id", "bad-value", "bad-status"],
)
def test_malformed_exports_say_where(data, where):
    with pytest.raises(OtlpFormatError, match=where.replace("[", r"\[").replace("]", r"\]")):
        trace_from_otlp(data)


def test_an_all_zero_parent_id_is_a_root_and_a_real_one_is_kept():
    root, child = otlp_span(0, {}, "1" * 32), otlp_span(1, {}, "1" * 32)
    root["parentSpanId"] = "0" * 16
    child["parentSpanId"] = "abcdef0123456789"  # a parent that is not in the export
    imported_root, imported_child = trace_from_otlp(export([root, child])).spans
    assert imported_root.parent_span_id is None
    assert imported_child.parent_span_id == "abcdef0123456789"


def test_span_links_are_read_from_json_and_protobuf_and_written_back() -> None:
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from seatrial.trace import SpanLink, trace_to_otlp, traces_from_otlp, traces_from_otlp_protobuf

    linked = SpanLink(
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        span_id="00f067aa0ba902b7",
        trace_state="vendor=1",
        attributes={"link.reason": "重试自批处理"},
    )
    span = Span(
        trace_id="ab" * 16,
        span_id="0000000000000001",
        name="process queued order",
        start_time_unix_nano=1,
        end_time_unix_nano=2,
        links=[linked],
    )
    exported = trace_to_otlp(Trace(trace_id="ab" * 16, spans=[span]))
    (from_json,) = traces_from_otlp(exported)
    assert from_json.spans[0].links == [linked]

    (plain,) = traces_from_otlp(
        trace_to_otlp(Trace(trace_id="ab" * 16, spans=[span.model_copy(update={"links": []})]))
    )
    assert "links" not in plain.spans[0].model_dump()  # a span without links dumps as before

    request = ExportTraceServiceRequest()
    # protobuf's JSON mapping wants base64 ids: the hex ones OTLP/JSON uses are re-encoded.
    for resource in exported["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for raw in scope["spans"]:
                for key in ("traceId", "spanId"):
                    raw[key] = base64.b64encode(bytes.fromhex(raw[key])).decode()
                for link in raw["links"]:
                    for key in ("traceId", "spanId"):
                        link[key] = base64.b64encode(bytes.fromhex(link[key])).decode()
    ParseDict(exported, request)
    (from_protobuf,) = traces_from_otlp_protobuf(request.SerializeToString())
    assert from_protobuf.spans[0].links == [linked]
