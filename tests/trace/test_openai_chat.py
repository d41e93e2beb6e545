"""OpenAI chat-completion logs read as traces: one record, one conversation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seatrial.trace import Trace, TraceFormatError, decode_attribute, read_trace_file
from seatrial.trace import attrs as A
from seatrial.trace._openai_chat import matches, read

CREATED = 1_717_000_000


def _pair(**response: Any) -> dict[str, Any]:
    """A logging proxy's request/response pair: a refund with one tool call."""
    return {
        "request": {
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "You are the refund desk."},
                {"role": "user", "content": "Refund order 1001 please"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "get_order", "arguments": '{"order_id":"1001"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_a", "content": '{"status":"paid"}'},
            ],
            "metadata": {"session_id": "sess-9"},
            "user": "customer-42",
        },
        "response": {
            "id": "chatcmpl-123",
            "object": "chat.completion",
            "created": CREATED,
            "model": "gpt-4o-2024-08-06",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "Order 1001 is refunded."},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
            **response,
        },
    }


def _turns(trace: Trace) -> list[str]:
    return [str(event.value(A.TURN_MESSAGE)) for _, event in trace.events(A.TURN)]


def _write(tmp_path: Path, name: str, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_a_request_response_pair_becomes_an_agent_root_with_chat_and_tool_spans():
    (trace,) = read(_pair())
    operations = [(span.operation, span.name) for span in trace.spans]
    assert operations == [
        ("invoke_agent", "invoke_agent agent"),
        ("chat", "chat gpt-4o"),
        ("execute_tool", "execute_tool get_order"),
        ("chat", "chat gpt-4o"),
    ]
    root = trace.spans[0]
    assert all(span.parent_span_id == root.span_id for span in trace.spans[1:])
    (call,) = trace.tool_calls()
    assert (call.name, call.arguments, call.result) == (
        "get_order",
        {"order_id": "1001"},
        {"status": "paid"},
    )
    assert call.span.attributes[A.TOOL_CALL_ID] == "call_a"


def test_the_user_message_is_a_turn_event_and_the_answer_is_on_its_chat_span():
    (trace,) = read(_pair())
    assert _turns(trace) == ["Refund order 1001 please"]
    answer = trace.spans[-1]
    said = decode_attribute(answer.attributes[A.OUTPUT_MESSAGES])
    assert said[0]["parts"] == [{"type": "text", "content": "Order 1001 is refunded."}]
    asked = decode_attribute(trace.spans[1].attributes[A.OUTPUT_MESSAGES])
    assert asked[0]["parts"][0]["name"] == "get_order"
    assert {span.attributes[A.TURN_INDEX] for span in trace.spans[1:]} == {0}


def test_the_responses_usage_and_model_go_on_the_answer_it_paid_for():
    (trace,) = read(_pair())
    first, answer = trace.model_calls()
    assert (first.input_tokens, first.output_tokens) == (0, 0)
    assert (answer.input_tokens, answer.output_tokens) == (120, 9)
    assert answer.model == "gpt-4o-2024-08-06"
    assert answer.span.attributes[A.REQUEST_MODEL] == "gpt-4o"
    assert trace.token_usage() == (120, 9)


def test_session_user_and_system_prompt_are_kept_on_the_root():
    (trace,) = read(_pair())
    root = trace.spans[0].attributes
    assert root[A.CONVERSATION_ID] == "sess-9"
    assert root[A.USER_ID] == "customer-42"
    assert decode_attribute(root["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "You are the refund desk."}
    ]


def test_times_start_at_created_and_move_forward_one_message_at_a_time():
    (trace,) = read(_pair())
    starts = [span.start_time_unix_nano for span in trace.spans]
    assert starts[0] == CREATED * 1_000_000_000
    assert starts == sorted(starts)
    assert trace.spans[0].end_time_unix_nano == max(
        span.end_time_unix_nano or 0 for span in trace.spans
    )


def test_records_without_created_are_laid_one_after_another_from_the_start_given():
    records = [
        {
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
            ]
        },
        {
            "messages": [
                {"role": "user", "content": "bye"},
                {"role": "assistant", "content": "ciao"},
            ]
        },
    ]
    first, second = read(records, start_ns=5_000_000_000)
    assert first.spans[0].start_time_unix_nano == 5_000_000_000
    assert second.spans[0].start_time_unix_nano > (first.spans[0].end_time_unix_nano or 0)


def test_the_trace_id_comes_from_the_record_id_and_reading_twice_gives_the_same_spans():
    (once,) = read(_pair())
    (again,) = read(_pair())
    (other,) = read(_pair(id="chatcmpl-456"))
    assert len(once.trace_id) == 32 and int(once.trace_id, 16) >= 0
    assert [s.span_id for s in once.spans] == [s.span_id for s in again.spans]
    assert once.trace_id == again.trace_id != other.trace_id


def test_records_without_an_id_get_a_trace_id_from_their_content():
    talk = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hey"}]
    }
    changed = {"messages": [{"role": "user", "content": "hi!"}, talk["messages"][1]]}
    assert read(talk)[0].trace_id == read(dict(talk))[0].trace_id != read(changed)[0].trace_id


def test_a_multi_turn_log_tags_each_model_and_tool_call_with_its_user_turn():
    record = {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Where is my parcel?"}]},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "t1", "function": {"name": "track", "arguments": {"no": "SF1"}}},
                    {"id": "t2", "function": {"name": "eta", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "t2", "content": "tomorrow"},
            {"role": "tool", "tool_call_id": "t1", "content": "in transit"},
            {"role": "assistant", "content": "It arrives tomorrow."},
            {"role": "user", "content": "Thanks, and my refund?"},
            {"role": "assistant", "content": "Done."},
        ],
        "usage": {"prompt_tokens": 30, "completion_tokens": 4},
    }
    (trace,) = read(record)
    assert _turns(trace) == ["Where is my parcel?", "Thanks, and my refund?"]
    results = {c.name: (c.arguments, c.result, c.turn) for c in trace.tool_calls()}
    assert results == {"track": ({"no": "SF1"}, "in transit", 0), "eta": ({}, "tomorrow", 0)}
    turns = [call.span.attributes[A.TURN_INDEX] for call in trace.model_calls()]
    assert turns == [0, 0, 1]
    assert trace.model_calls()[-1].input_tokens == 30  # top-level usage: the last answer
    assert trace.model_calls()[0].model == "gpt-4o-mini"


def test_the_older_function_call_spelling_is_read_as_a_tool_call():
    record = {
        "messages": [
            {"role": "user", "content": "weather in Hangzhou"},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "weather", "arguments": '{"city":"Hangzhou"}'},
            },
            {"role": "function", "name": "weather", "content": "sunny"},
            {"role": "assistant", "content": "Sunny."},
        ]
    }
    (call,) = read(record)[0].tool_calls()
    assert (call.name, call.arguments, call.result) == ("weather", {"city": "Hangzhou"}, "sunny")


def test_batch_output_lines_with_a_response_body_are_read():
    pair = _pair()
    record = {"custom_id": "r-1", "body": pair["request"], "response": {"body": pair["response"]}}
    (trace,) = read([record])
    assert trace.token_usage() == (120, 9)
    assert [c.name for c in trace.tool_calls()] == ["get_order"]


def test_chat_logs_match_and_the_other_formats_do_not():
    assert matches(_pair())
    assert matches([{"messages": [{"role": "user", "content": "hi"}]}])
    assert not matches({"request": {"message": "hi"}, "response": {"response": "hello"}})
    assert not matches({"trajectory": [{"action": "ls"}], "history": []})
    assert not matches({"resourceSpans": []})
    assert not matches([{"messages": []}])
    assert not matches([])


def test_a_jsonl_log_is_detected_and_read_through_read_trace_file(tmp_path):
    path = _write(tmp_path, "chats.jsonl", [_pair(), _pair(id="chatcmpl-2")])
    found = read_trace_file(path)
    assert found.format == "openai-chat"
    assert len(found.traces) == 2
    assert [c.name for c in found.traces[1].tool_calls()] == ["get_order"]


def test_a_tool_call_without_a_name_is_refused_naming_the_line_and_place(tmp_path):
    broken = _pair()
    broken["request"]["messages"][2]["tool_calls"][0]["function"] = {"arguments": "13800138000"}
    path = _write(tmp_path, "chats.jsonl", [_pair(id="ok"), broken])
    with pytest.raises(TraceFormatError) as caught:
        read_trace_file(path)
    message = str(caught.value)
    assert f"{path}:2" in message
    assert "request.messages[2].tool_calls[0].function.name" in message
    assert "13800138000" not in message


@pytest.mark.parametrize(
    ("change", "place"),
    [
        (lambda r: r["request"]["messages"][1].update(role="robot"), "messages[1].role"),
        (lambda r: r["request"]["messages"][1].update(content=42), "messages[1].content"),
        (lambda r: r["response"].update(usage={"prompt_tokens": "many"}), "usage.prompt_tokens"),
        (lambda r: r["response"].update(choices=[{"message": "Call 13800138000"}]), "choices[0]"),
    ],
)
def test_malformed_records_are_refused_without_quoting_the_file(change, place):
    record = _pair()
    change(record)
    with pytest.raises(TraceFormatError) as caught:
        read([record])
    assert str(caught.value).startswith("[0].")
    assert place in str(caught.value)
    assert "robot" not in str(caught.value) and "13800138000" not in str(caught.value)
