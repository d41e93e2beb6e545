"""Langfuse trace exports (v2 and v3 observation types) read as GenAI traces."""

from __future__ import annotations

import json
from typing import Any

import pytest

from seatrial.trace import TraceFormatError, read_trace_file
from seatrial.trace import _langfuse as langfuse
from seatrial.trace import attrs as A
from tests.conftest import bundled_data

V3 = bundled_data("langfuse/trace-v3-agent.json")
V2 = bundled_data("langfuse/traces-v2.jsonl")


def test_a_v3_trace_keeps_its_agent_generations_and_tool_observations():
    result = read_trace_file(V3)
    assert result.format == "langfuse"
    (trace,) = result.traces
    assert trace.trace_id == "3f9c1e7a2b4d4c8e9a0b1c2d3e4f5a6b"
    root = trace.spans[0]
    assert root.name == "support-agent" and root.parent_span_id is None
    assert root.attributes[A.CONVERSATION_ID] == "chat-5581"
    assert root.attributes[A.USER_ID] == "u-20931"
    agent = trace.agent_span()
    assert agent is not None and agent.name == "refund-agent"
    assert agent.parent_span_id == root.span_id
    assert [(c.name, c.arguments) for c in trace.tool_calls()] == [
        ("get_order", {"order_id": "3003"}),
        ("issue_refund", {"amount": 59.0, "order_id": "3003"}),
    ]
    assert [(m.model, m.input_tokens, m.output_tokens) for m in trace.model_calls()] == [
        ("gpt-4.1-mini", 211, 19),
        ("gpt-4.1-mini", 268, 17),
    ]
    assert trace.cost_usd() == pytest.approx(0.0001148 + 0.0001344)
    assert trace.resource == {"deployment.environment.name": "production"}


def test_v3_messages_scores_and_unknown_fields_are_kept():
    (trace,) = read_trace_file(V3).traces
    root, plan = trace.spans[0], trace.spans[2]
    assert json.loads(root.attributes[A.INPUT_MESSAGES])[0]["parts"][0]["content"].startswith(
        "I want a refund"
    )
    assert plan.attributes[A.REQUEST_TEMPERATURE] == 0
    assert plan.attributes[A.REQUEST_MAX_TOKENS] == 512
    assert plan.attributes["langfuse.observation.promptName"] == "refund-system"
    assert root.attributes["langfuse.trace.tags"] == ["support", "refunds"]
    guardrail = next(s for s in trace.spans if s.name == "pii-check")
    assert guardrail.operation is None
    assert guardrail.attributes["langfuse.observation.type"] == "GUARDRAIL"
    (score,) = root.events
    assert score.name == "langfuse.score"
    assert score.attributes["langfuse.score.name"] == "user-feedback"


def test_v2_tool_calls_asked_for_by_generations_become_tool_spans_with_their_results():
    first, second = read_trace_file(V2).traces
    # UUIDs lose their dashes so they read as OTel ids.
    assert first.trace_id == "7c0b1d2e3f404a5b8c6d7e8f90a1b2c3"
    (call,) = first.tool_calls()
    assert (call.name, call.arguments) == ("update_address", {"order_id": "4004"})
    assert call.result == {"error": "postcode missing"}
    assert call.span.attributes[A.TOOL_CALL_ID] == "call_a1"
    assert [(m.input_tokens, m.output_tokens) for m in first.model_calls()] == [(57, 22), (96, 14)]
    assert first.spans[1].attributes[A.REQUEST_TEMPERATURE] == 0.3
    # An EVENT observation is an event on its parent (the trace's root here).
    (event,) = first.spans[0].events
    assert event.name == "address-validation-failed"
    assert event.attributes["langfuse.observation.level"] == "WARNING"
    (failed,) = second.model_calls()
    assert (failed.span.status, failed.span.status_message) == ("error", "Request timed out.")
    assert second.spans[0].attributes[A.INPUT_MESSAGES] == (
        '[{"role":"user","parts":[{"type":"text","content":"What are your opening hours?"}]}]'
    )


def test_a_v3_trace_with_tool_observations_gets_no_tool_spans_made_up():
    (trace,) = read_trace_file(V3).traces
    # The plan generation asked for get_order once; the TOOL observation is that call.
    assert [c.name for c in trace.tool_calls()].count("get_order") == 1


def test_an_observations_page_is_grouped_into_traces():
    observation = {
        "id": "obs-1",
        "traceId": "trace-a",
        "type": "TOOL",
        "name": "search",
        "startTime": "2025-01-01T00:00:00Z",
        "input": {"q": "x"},
    }
    page = {
        "data": [observation, {**observation, "id": "obs-2", "traceId": "trace-b"}],
        "meta": {"page": 1},
    }
    assert langfuse.matches(page)
    traces = langfuse.read(page)
    assert [t.trace_id for t in traces] == ["trace-a", "trace-b"]
    assert [s.span_id for s in traces[0].spans][1:] == ["obs-1"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"id": "t", "timestamp": "2025-01-01T00:00:00Z", "observations": []}, True),
        ([{"id": "t", "htmlPath": "/p", "observations": []}], True),
        ({"id": "t", "observations": []}, False),
        ({"data": [{"traceId": "t", "type": "SPAN"}], "meta": {}}, False),
        ({"resourceSpans": []}, False),
    ],
    ids=["trace", "list", "no-timestamp", "no-start-time", "otlp"],
)
def test_only_langfuse_shapes_match(data: Any, expected: bool):
    assert langfuse.matches(data) is expected


def test_a_bad_observation_names_its_place_but_no_value():
    trace = {
        "id": "t",
        "timestamp": "2025-01-01T00:00:00Z",
        "observations": [{"id": "o", "type": "SPAN", "startTime": "13800138000 o'clock"}],
    }
    with pytest.raises(TraceFormatError, match=r"\[0\]\.observations\[0\]: needs") as info:
        langfuse.read(trace)
    assert "13800138000" not in str(info.value)
