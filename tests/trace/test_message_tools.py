"""Tool calls held only in model calls' messages become ``execute_tool`` spans, once each."""

from __future__ import annotations

import json
from typing import Any

from seatrial.trace import Span, Trace, normalize_trace
from seatrial.trace import attrs as A

TRACE_ID = "5b8aa5a2d2c872e8321cf37308d69df2"
ROOT = "r" * 16


def _chat(span_id: str, start: int, inputs: list[Any], outputs: list[Any]) -> Span:
    return Span(
        trace_id=TRACE_ID,
        span_id=span_id,
        parent_span_id=ROOT,
        name="chat gpt-4o",
        start_time_unix_nano=start,
        end_time_unix_nano=start + 10,
        attributes={
            A.OPERATION: A.OP_CHAT,
            A.INPUT_MESSAGES: json.dumps(inputs),
            A.OUTPUT_MESSAGES: json.dumps(outputs),
        },
    )


def _call(name: str, call_id: str | None, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def _asked(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "parts": list(calls)}


def _answer(call_id: str, response: Any) -> dict[str, Any]:
    return {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": call_id, "response": response}],
    }


def _tool_span(span_id: str, name: str, call_id: str | None, start: int = 12) -> Span:
    attributes: dict[str, Any] = {A.OPERATION: A.OP_EXECUTE_TOOL, A.TOOL_NAME: name}
    if call_id is not None:
        attributes[A.TOOL_CALL_ID] = call_id
    return Span(
        trace_id=TRACE_ID,
        span_id=span_id,
        parent_span_id=ROOT,
        name=f"execute_tool {name}",
        start_time_unix_nano=start,
        end_time_unix_nano=start + 1,
        attributes=attributes,
    )


USER = {"role": "user", "parts": [{"type": "text", "content": "查订单 ORD1 并退款"}]}
FIRST = _chat(
    "1" * 16, 0, [USER], [_asked(_call("search", "c1", q="ORD1"), _call("refund", "c2", id="ORD1"))]
)
SECOND = _chat(
    "2" * 16,
    20,
    [
        USER,
        _asked(_call("search", "c1", q="ORD1"), _call("refund", "c2", id="ORD1")),
        _answer("c1", {"found": True}),
        _answer("c2", "ok"),
    ],
    [{"role": "assistant", "parts": [{"type": "text", "content": "已退款"}]}],
)


def _trace(*spans: Span) -> Trace:
    root = Span(trace_id=TRACE_ID, span_id=ROOT, name="agent", start_time_unix_nano=0)
    return Trace(trace_id=TRACE_ID, spans=[root, *spans])


def test_calls_only_in_messages_become_tool_calls_with_the_results_that_answered_them() -> None:
    trace = normalize_trace(_trace(FIRST, SECOND))

    calls = trace.tool_calls()
    assert [(c.name, c.arguments, c.result, c.success) for c in calls] == [
        ("search", {"q": "ORD1"}, {"found": True}, True),
        ("refund", {"id": "ORD1"}, "ok", True),
    ]
    made = calls[0].span
    assert made.attributes[A.TOOL_CALL_SOURCE] == A.TOOL_CALL_FROM_MESSAGE
    assert made.parent_span_id == ROOT  # a sibling of the model call that asked for it
    assert normalize_trace(trace) is trace  # nothing more to make


def test_a_call_with_its_own_span_counts_once_and_a_call_without_one_still_counts() -> None:
    exported = _tool_span("t" * 16, "search", "c1")

    calls = normalize_trace(_trace(FIRST, exported, SECOND)).tool_calls()

    assert {c.name: c.span.attributes.get(A.TOOL_CALL_SOURCE) for c in calls} == {
        "search": None,  # the agent's own span
        "refund": A.TOOL_CALL_FROM_MESSAGE,  # c2 has no span: made from the message
    }
    assert len(calls) == 2


def test_a_span_exported_in_a_later_batch_replaces_the_call_made_from_the_message() -> None:
    # Batch 1 held only the model calls; the agent's tool span arrived in batch 2.
    first_batch = normalize_trace(_trace(FIRST, SECOND))
    later = _tool_span("t" * 16, "search", "c1")
    stored = Trace(trace_id=TRACE_ID, spans=[*first_batch.spans, later])

    calls = stored.tool_calls()
    assert sorted(c.name for c in calls) == ["refund", "search"]
    assert next(c for c in calls if c.name == "search").span is later


def test_a_call_seen_again_in_a_later_batch_is_the_same_span() -> None:
    alone = normalize_trace(_trace(FIRST)).tool_calls()
    together = normalize_trace(_trace(FIRST, SECOND)).tool_calls()

    assert [c.span.span_id for c in alone] == [c.span.span_id for c in together]


def test_calls_without_ids_match_unclaimed_tool_spans_by_name_only() -> None:
    asked = _chat("1" * 16, 0, [USER], [_asked(_call("search", None), _call("refund", None))])
    # search has an id-less span of its own (Langfuse's TOOL observations carry no call id);
    # lookup is another tool, so it claims nothing.
    spans = [_tool_span("t" * 16, "search", None), _tool_span("u" * 16, "lookup", None)]

    calls = normalize_trace(_trace(asked, *spans)).tool_calls()

    assert sorted(c.name for c in calls) == ["lookup", "refund", "search"]


def test_calls_without_ids_in_a_later_calls_history_are_not_counted_again() -> None:
    asked = _chat("1" * 16, 0, [USER], [_asked(_call("search", None, q="x"))])
    again = _chat("2" * 16, 20, [USER, _asked(_call("search", None, q="x"))], [])

    assert [c.name for c in normalize_trace(_trace(asked, again)).tool_calls()] == ["search"]
