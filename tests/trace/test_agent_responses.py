"""The agent protocol's responses, as an agent logs them, read as one trace per session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seatrial.trace import (
    TOOL_ERROR,
    Trace,
    TraceFormatError,
    decode_attribute,
    read_trace_file,
    trace_from_tools_called,
)
from seatrial.trace import attrs as A
from seatrial.trace._agent_responses import matches, read

AGENT_TRACE_ID = "0AF7651916CD43DD8448EB211C80319C"


def _turn(session: str, message: str | None, reply: str, calls: list[dict[str, Any]], **more: Any):
    response = {
        "session_id": session,
        "response": reply,
        "finished": False,
        "tools_called": calls,
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        **more,
    }
    if message is None:
        return response
    return {"request": {"session_id": session, "message": message}, "response": response}


LOG = [
    _turn(
        "s-1",
        "Refund order 1001",
        "Which card should get the refund?",
        [
            {
                "name": "get_order",
                "input": {"order_id": "1001"},
                "output": {"status": "paid"},
                "latency_ms": 120,
                "success": True,
            }
        ],
        trace_id=AGENT_TRACE_ID,
    ),
    _turn("s-2", "Hello", "Hi, how can I help?", []),
    _turn(
        "s-1",
        "The Visa ending 4242",
        "Refund failed, I have escalated it.",
        [
            {
                "name": "refund",
                "input": {"order_id": "1001", "card": "visa"},
                "output": "gateway timeout",
                "latency_ms": 300,
                "success": False,
            }
        ],
    ),
]


def _turns(trace: Trace) -> list[Any]:
    return [event.value(A.TURN_MESSAGE) for _, event in trace.events(A.TURN)]


def test_the_turns_of_one_session_form_one_trace_in_file_order():
    first, second = read(LOG, start_ns=1_000_000_000)
    assert first.spans[0].attributes[A.CONVERSATION_ID] == "s-1"
    assert second.spans[0].attributes[A.CONVERSATION_ID] == "s-2"
    assert _turns(first) == ["Refund order 1001", "The Visa ending 4242"]
    assert [(c.name, c.turn) for c in first.tool_calls()] == [("get_order", 0), ("refund", 1)]
    assert second.spans[0].start_time_unix_nano > (first.spans[0].end_time_unix_nano or 0)


def test_tool_calls_keep_arguments_results_failures_and_latencies():
    (trace, _) = read(LOG, start_ns=1_000_000_000)
    order, refund = trace.tool_calls()
    assert (order.arguments, order.result, order.success) == (
        {"order_id": "1001"},
        {"status": "paid"},
        True,
    )
    assert (refund.success, refund.error_type, refund.result) == (
        False,
        TOOL_ERROR,
        "gateway timeout",
    )
    assert order.span.duration_ms == pytest.approx(120)
    assert refund.span.start_time_unix_nano >= (order.span.end_time_unix_nano or 0)


def test_usage_is_summed_on_the_root_and_replies_are_kept_in_order():
    (trace, _) = read(LOG, start_ns=1_000_000_000)
    assert trace.token_usage() == (200, 20)
    replies = decode_attribute(trace.spans[0].attributes[A.OUTPUT_MESSAGES])
    assert [m["parts"][0]["content"] for m in replies] == [
        "Which card should get the refund?",
        "Refund failed, I have escalated it.",
    ]


def test_the_agents_own_trace_id_is_kept_so_its_exported_spans_join_the_trace():
    (trace, other) = read(LOG)
    assert trace.trace_id == AGENT_TRACE_ID.lower()
    assert {span.trace_id for span in trace.spans} == {trace.trace_id}
    assert len(other.trace_id) == 32 and other.trace_id != trace.trace_id


def test_a_session_without_a_hex_trace_id_gets_a_stable_derived_one():
    log = [_turn("s-3", "hi", "hello", [], trace_id="agent-trace-7")]
    once, again = read(log), read(json.loads(json.dumps(log)))
    assert once[0].trace_id == again[0].trace_id
    assert len(once[0].trace_id) == 32 and int(once[0].trace_id, 16) >= 0
    assert [s.span_id for s in once[0].spans] == [s.span_id for s in again[0].spans]


def test_a_bare_response_has_a_turn_without_a_message():
    (trace,) = read(_turn("s-4", None, "hello", [{"name": "ping", "input": {}}]))
    assert _turns(trace) == [None]
    assert [c.name for c in trace.tool_calls()] == ["ping"]


def test_the_spans_are_the_ones_the_http_adapter_records_for_the_same_calls():
    calls = LOG[1]["response"]["tools_called"] + LOG[0]["response"]["tools_called"]
    recorded = trace_from_tools_called(calls, agent_name="agent", messages=["Refund order 1001"])
    (trace,) = read(_turn("s-5", "Refund order 1001", "ok", calls))

    def shape(t: Trace) -> list[tuple[str, dict[str, Any]]]:
        return [
            (s.name, {k: v for k, v in s.attributes.items() if "usage" not in k}) for s in t.spans
        ]

    ours = shape(trace)
    ours[0][1].pop(A.CONVERSATION_ID)
    ours[0][1].pop(A.OUTPUT_MESSAGES)
    assert ours == shape(recorded)


def test_agent_responses_match_and_chat_logs_do_not():
    assert matches(LOG)
    assert matches({"session_id": "s", "response": "hi"})
    assert matches({"tools_called": []})
    assert not matches({"messages": [{"role": "user", "content": "hi"}]})
    assert not matches({"response": "hi"})
    assert not matches([])


def test_a_jsonl_log_is_detected_and_read_through_read_trace_file(tmp_path: Path):
    path = tmp_path / "agent.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in LOG), encoding="utf-8")
    found = read_trace_file(path)
    assert found.format == "tools-called"
    assert [len(t.tool_calls()) for t in found.traces] == [2, 0]


def test_a_bad_call_is_refused_naming_the_line_without_quoting_the_file(tmp_path: Path):
    broken = _turn("s-1", "x", "y", [{"name": "refund", "latency_ms": "13800138000"}])
    path = tmp_path / "agent.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [LOG[0], broken]), encoding="utf-8")
    with pytest.raises(TraceFormatError) as caught:
        read_trace_file(path)
    message = str(caught.value)
    assert f"{path}:2" in message and "tools_called[0].latency_ms" in message
    assert "13800138000" not in message


@pytest.mark.parametrize(
    ("record", "place"),
    [
        ({"session_id": "s", "tools_called": ["13800138000"]}, "[0].tools_called[0]"),
        ({"session_id": "s", "tools_called": [{"input": {}}]}, "[0].tools_called[0]"),
        ({"session_id": "s", "tools_called": [], "usage": ["13800138000"]}, "[0]: `usage`"),
        ({"session_id": "s", "response": ["13800138000"], "tools_called": []}, "[0].response"),
        ({"session_id": ["13800138000"], "tools_called": []}, "[0].session_id"),
        ({"session_id": "s", "message": 13800138000, "tools_called": []}, "[0].message"),
        ("13800138000", "[0]"),
    ],
)
def test_malformed_responses_are_refused_with_the_place(record: Any, place: str):
    with pytest.raises(TraceFormatError) as caught:
        read([record])
    assert str(caught.value).startswith(place)
    assert "13800138000" not in str(caught.value)
