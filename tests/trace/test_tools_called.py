"""The agent protocol's tools_called and usage as execute_tool spans."""

from __future__ import annotations

import pytest

from seatrial.trace import TraceRecorder, add_usage, record_tools_called, trace_from_tools_called
from seatrial.trace import attrs as A

CALLS = [
    {
        "name": "search_order",
        "input": {"order_id": "1001"},
        "output": {"status": "paid"},
        "latency_ms": 100,
        "success": True,
    },
    {
        "name": "refund_order",
        "input": {"order_id": "1001"},
        "output": "upstream 500",
        "latency_ms": 50,
        "success": False,
    },
]


def test_calls_become_tool_spans_laid_end_to_end_under_an_agent_root():
    trace = trace_from_tools_called(
        CALLS,
        usage={"prompt_tokens": 10, "completion_tokens": 4},
        agent_name="support",
        messages=["refund 1001"],
        start_time_unix_nano=1_000_000_000,
    )
    root, search, refund = trace.spans
    assert root.name == "invoke_agent support" and root.operation == "invoke_agent"
    assert (search.name, refund.name) == ("execute_tool search_order", "execute_tool refund_order")
    assert (search.start_time_unix_nano, search.end_time_unix_nano) == (
        1_000_000_000,
        1_100_000_000,
    )
    assert (refund.start_time_unix_nano, refund.end_time_unix_nano) == (
        1_100_000_000,
        1_150_000_000,
    )
    assert root.end_time_unix_nano == 1_150_000_000
    calls = trace.tool_calls()
    assert [(c.arguments, c.result, c.success, c.error_type, c.turn) for c in calls] == [
        ({"order_id": "1001"}, {"status": "paid"}, True, None, 0),
        ({"order_id": "1001"}, "upstream 500", False, "tool_error", 0),
    ]
    assert trace.token_usage() == (10, 4)
    assert [e.attributes[A.TURN_MESSAGE] for _, e in trace.events(A.TURN)] == ["refund 1001"]


def test_latencies_longer_than_the_turn_are_scaled_to_fit_inside_it():
    recorder = TraceRecorder()
    with recorder.span("invoke_agent a"):
        spans = record_tools_called(
            recorder, CALLS, start_time_unix_nano=0, end_time_unix_nano=75_000_000, turn_index=2
        )
    assert spans[-1].end_time_unix_nano == 75_000_000
    assert spans[0].duration_ms == pytest.approx(50)
    assert {s.attributes[A.TURN_INDEX] for s in spans} == {2}


def test_usage_adds_up_over_turns():
    recorder = TraceRecorder()
    with recorder.span("invoke_agent a") as root:
        add_usage(root, {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280})
        add_usage(root, {"prompt_tokens": 300, "completion_tokens": 20})
        add_usage(root, None)
    assert (root.attributes[A.INPUT_TOKENS], root.attributes[A.OUTPUT_TOKENS]) == (1500, 100)


@pytest.mark.parametrize(
    ("tools_called", "message"),
    [
        ({"name": "x"}, "must be a list"),
        (["search"], r"tools_called\[0\] must be an object"),
        ([{"input": {}}], r"tools_called\[0\] needs a `name`"),
        ([{"name": "x", "latency_ms": "fast"}], "latency_ms must be a number"),
        ([{"name": "x", "permission": "once"}], r"tools_called\[0\].permission must be an object"),
    ],
)
def test_malformed_lists_are_value_errors_naming_the_entry(tools_called, message):
    with pytest.raises(ValueError, match=message):
        trace_from_tools_called(tools_called)


def test_an_entrys_permission_becomes_a_permission_event_on_its_span():
    calls = [
        {
            "name": "write_file",
            "input": {"path": "a"},
            "latency_ms": 5,
            "permission": {"scope": "once", "decision": "granted", "reason": "user said yes"},
        },
        {
            "name": "write_file",
            "input": {"path": "b"},
            "latency_ms": 5,
            "permission": {A.PERMISSION_SCOPE: "once", A.PERMISSION_DECISION: "denied"},
        },
        {"name": "read_file", "input": {"path": "a"}, "latency_ms": 5},
    ]
    trace = trace_from_tools_called(calls, start_time_unix_nano=1_000)
    first, second, read = trace.tool_calls()
    (granted,) = first.span.events
    assert granted.name == A.PERMISSION
    assert granted.time_unix_nano == first.span.start_time_unix_nano
    assert granted.attributes == {
        A.PERMISSION_TOOL: "write_file",
        A.PERMISSION_SCOPE: "once",
        A.PERMISSION_DECISION: "granted",
        A.PERMISSION_REASON: "user said yes",
    }
    (denied,) = second.span.events
    assert denied.value(A.PERMISSION_DECISION) == "denied"
    assert read.span.events == []
