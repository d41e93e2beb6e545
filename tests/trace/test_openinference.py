"""Phoenix span exports (OpenInference) read as Seatrial traces, in both shapes Phoenix writes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from seatrial.trace import TraceFormatError, normalize_trace, read_trace_file
from seatrial.trace import _openinference as openinference
from seatrial.trace import attrs as A
from tests.conftest import bundled_data

REST = bundled_data("openinference/phoenix-rest-spans.json")
DATAFRAME = bundled_data("openinference/phoenix-spans-dataframe.jsonl")


def test_a_rest_api_page_becomes_one_trace_with_agent_model_and_tool_calls():
    result = read_trace_file(REST)
    assert result.format == "openinference"
    (trace,) = result.traces
    assert trace.trace_id == "6f1c2a0e5b7d4e3f8a9b0c1d2e3f4a5b"
    assert [s.name for s in trace.spans] == [
        "order-agent",
        "ChatCompletion",
        "get_order",
        "ChatCompletion",
    ]
    agent = trace.agent_span()
    assert agent is not None and agent.attributes[A.AGENT_NAME] == "order-agent"
    assert all(s.parent_span_id == agent.span_id for s in trace.spans[1:])
    (call,) = trace.tool_calls()
    assert (call.name, call.arguments) == ("get_order", {"order_id": "1001"})
    assert call.result == {"order_id": "1001", "status": "shipped"}
    assert [(m.model, m.input_tokens, m.output_tokens) for m in trace.model_calls()] == [
        ("gpt-4o-2024-08-06", 182, 21),
        ("gpt-4o-2024-08-06", 241, 12),
    ]
    assert agent.attributes[A.CONVERSATION_ID] == "sess-7731"
    assert agent.attributes[A.USER_ID] == "customer-42"
    # Unknown attributes are kept as they came, lists of plain values as lists.
    assert agent.attributes["tag.tags"] == ["production", "orders"]
    assert trace.spans[1].attributes["llm.tools.0.tool.json_schema"].startswith('{"type"')
    assert trace.spans[0].start_time_unix_nano == 1_741_076_102_000_000_000


def test_the_answer_after_a_tool_call_carries_the_tool_result_message():
    (trace,) = read_trace_file(REST).traces
    messages = json.loads(trace.spans[3].attributes[A.INPUT_MESSAGES])
    assert messages[3] == {
        "role": "tool",
        "parts": [
            {
                "type": "tool_call_response",
                "id": "call_Qm3kT9",
                "response": '{"order_id": "1001", "status": "shipped"}',
            }
        ],
    }


def test_a_spans_dataframe_saved_as_jsonl_is_read_with_its_nested_columns():
    (trace,) = read_trace_file(DATAFRAME).traces
    chain, llm, tool = trace.spans
    assert chain.operation is None and chain.status == "error"
    # pandas writes datetimes as epoch milliseconds and counts as floats.
    assert llm.start_time_unix_nano == 1_741_076_400_050_000_000
    assert (llm.attributes[A.INPUT_TOKENS], llm.attributes[A.OUTPUT_TOKENS]) == (96, 18)
    assert llm.attributes["llm.input_messages.1.message.content"] == "Cancel order 2002 please"
    assert json.loads(llm.attributes[A.OUTPUT_MESSAGES])[0]["parts"][0]["name"] == "cancel_order"
    (call,) = trace.tool_calls()
    assert (call.name, call.success, call.error_type) == ("cancel_order", False, "PermissionError")
    assert tool.events[0].attributes["exception.type"] == "PermissionError"
    # The dataframe's empty cells are not attributes.
    assert "llm.model_name" not in tool.attributes


def test_phoenix_nested_attributes_are_flattened_to_dotted_names():
    record = {
        "context": {"trace_id": "A" * 32, "span_id": "B" * 16},
        "span_kind": "LLM",
        "name": "llm",
        "start_time": "2025-01-01T00:00:00.123456789Z",
        "attributes": {
            "llm": {
                "model_name": "m",
                "input_messages": [{"message": {"role": "user", "content": "hi"}}],
            },
        },
    }
    (trace,) = [normalize_trace(t) for t in openinference.read([record])]
    (span,) = trace.spans
    assert span.trace_id == "a" * 32
    assert span.attributes["llm.input_messages.0.message.content"] == "hi"
    assert span.attributes["openinference.span.kind"] == "LLM"
    assert span.start_time_unix_nano % 1_000_000_000 == 123_456_789
    assert span.operation == A.OP_CHAT


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"data": [{"context": {"trace_id": "t", "span_id": "s"}, "span_kind": "LLM"}]}, True),
        ([{"context.trace_id": "t", "context.span_id": "s", "name": "x"}], True),
        ({"resourceSpans": []}, False),
        ({"data": [{"id": "x", "traceId": "t"}], "meta": {}}, False),
        ([{"context": {"span_id": "s"}}], False),
        ([], False),
    ],
    ids=["rest-page", "dataframe", "otlp", "langfuse-page", "no-trace-id", "empty"],
)
def test_only_phoenix_shapes_match(data: Any, expected: bool):
    assert openinference.matches(data) is expected


def test_a_span_without_a_start_time_names_the_record_and_field_but_no_value():
    record = {
        "context": {"trace_id": "a" * 32, "span_id": "b" * 16},
        "span_kind": "TOOL",
        "start_time": "yesterday 13800138000",
    }
    with pytest.raises(TraceFormatError, match=r"\[1\]\.start_time: expected") as info:
        openinference.read([{**record, "start_time": "2025-01-01T00:00:00Z"}, record])
    assert "13800138000" not in str(info.value)
