"""Injected tool faults: which call gets one, what the tool answers, what the span records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seatrial.agent import HttpAgent, PythonAgent, RecordedAgent, check_fault_support
from seatrial.agent import fault_message as message_for
from seatrial.case import Case, ToolFault
from seatrial.errors import ConfigError
from seatrial.trace import attrs as A
from tests.agent._drive import drive, make_context

AGENTS = Path(__file__).parent / "fault_agents.py"


def agent(function: str) -> PythonAgent:
    return PythonAgent(f"python:{AGENTS}:{function}")


def case_with(*faults: ToolFault, calls: int = 4) -> Case:
    # tells_faults calls book_slot once per line of the input.
    return Case(id="faults", input="\n".join(["book"] * calls), tool_faults=list(faults))


async def test_only_the_calls_at_call_and_times_name_get_the_fault():
    fault = ToolFault(tool="book_slot", fault="http_500", at_call=2, times=2)
    output, trace = await drive(agent("tells_faults"), make_context(case_with(fault)))
    answers = output.response.splitlines()
    assert answers[0].startswith("{'booked': True")
    assert answers[1].startswith("http_500: `book_slot` failed: its upstream service answered")
    assert answers[2] == answers[1]
    assert answers[3].startswith("{'booked': True")
    calls = trace.tool_calls()
    assert [c.success for c in calls] == [True, False, False, True]
    assert [c.span.attributes.get(A.FAULT) for c in calls] == [None, "http_500", "http_500", None]
    assert [c.span.attributes.get(A.FAULT_CALL) for c in calls] == [None, 2, 3, None]
    # The faulted calls never reached the tool: no result recorded; the arguments are, as the
    # tool records them (defaults filled in), so a retry compares equal.
    assert calls[1].result is None
    assert calls[1].arguments == calls[0].arguments
    assert calls[1].arguments == {"date": "2026-12-01", "period": "morning", "note": ""}


async def test_calls_of_other_tools_do_not_count_towards_at_call():
    fault = ToolFault(tool="find_slots", fault="timeout", at_call=1)
    output, trace = await drive(agent("tells_faults"), make_context(case_with(fault, calls=2)))
    assert all(line.startswith("{'booked'") for line in output.response.splitlines())
    assert all(c.span.attributes.get(A.FAULT) is None for c in trace.tool_calls())


async def test_each_attempt_counts_its_own_calls():
    fault = ToolFault(tool="book_slot", fault="timeout", at_call=1)
    case = case_with(fault, calls=1)
    adapter = agent("tells_faults")
    first, _ = await drive(adapter, make_context(case, attempt=1))
    second, _ = await drive(adapter, make_context(case, attempt=2))
    assert first.response.startswith("timeout: `book_slot` timed out")
    assert second.response == first.response


async def test_missing_param_takes_out_a_required_parameter_the_call_sent_and_says_so():
    fault = ToolFault(tool="book_slot", fault="missing_param")
    output, trace = await drive(agent("tells_faults"), make_context(case_with(fault, calls=1)))
    assert output.response == (
        "missing_param: invalid arguments for `book_slot`: missing required parameter `date`; "
        'the tool received {"period": "morning"}; call `book_slot` again with `date` set'
    )
    call = trace.tool_calls()[0]
    assert call.error_type == "missing_param"
    # The trace holds the call as the tool received it: without the parameter named.
    assert call.arguments == {"period": "morning", "note": ""}
    assert call.span.attributes[A.FAULT_PARAMETER] == "date"
    assert call.span.attributes[A.FAULT_REMOVED] == "date"


async def test_missing_param_names_the_required_parameter_a_call_lacked_and_removes_nothing():
    fault = ToolFault(tool="book_slot", fault="missing_param")
    _, trace = await drive(agent("forgets_date_and_resends"), make_context(case_with(fault)))
    call = trace.tool_calls()[0]
    assert call.arguments == {"period": "morning", "note": ""}
    assert call.span.attributes[A.FAULT_PARAMETER] == "date"
    assert A.FAULT_REMOVED not in call.span.attributes


async def test_bad_enum_refuses_the_value_sent_and_lists_only_the_other_allowed_values():
    fault = ToolFault(tool="book_slot", fault="bad_enum")
    output, trace = await drive(agent("tells_faults"), make_context(case_with(fault, calls=1)))
    assert output.response == (
        'bad_enum: invalid arguments for `book_slot`: "morning" is not an allowed value of '
        '`period`; allowed values: "afternoon"; call `book_slot` again with one of them'
    )
    attributes = trace.tool_calls()[0].span.attributes
    assert (attributes[A.FAULT_PARAMETER], attributes[A.FAULT_ALLOWED]) == (
        "period",
        '["afternoon"]',
    )


@pytest.mark.parametrize(
    ("kind", "answer"),
    [("malformed_json", repr('{"status": "ok", "result": [{"id": 1, "name": ')), ("empty", "''")],
)
async def test_malformed_json_and_empty_answer_a_text_and_mark_the_call_failed(kind, answer):
    fault = ToolFault(tool="book_slot", fault=kind)
    output, trace = await drive(agent("tells_faults"), make_context(case_with(fault, calls=1)))
    assert output.response == answer
    with pytest.raises(json.JSONDecodeError):
        json.loads(eval(answer))  # noqa: S307 - the repr of a str written by the test agent
    call = trace.tool_calls()[0]
    assert (call.success, call.error_type, call.span.attributes[A.FAULT]) == (False, kind, kind)


async def test_async_calls_get_the_same_faults_counted_once():
    fault = ToolFault(tool="book_slot", fault="http_500", at_call=2)
    output, trace = await drive(
        agent("async_tells_faults"), make_context(case_with(fault, calls=3))
    )
    answers = output.response.splitlines()
    assert [a.split(":")[0] for a in answers] == ["{'booked'", "http_500", "{'booked'"]
    assert [c.span.attributes.get(A.FAULT_CALL) for c in trace.tool_calls()] == [None, 2, None]


async def test_a_case_that_forbids_the_tool_gets_the_refusal_not_the_fault():
    fault = ToolFault(tool="book_slot", fault="http_500")
    case = Case(id="f", input="book", tool_faults=[fault], allowed_tools=["find_slots"])
    output, trace = await drive(agent("tells_faults"), make_context(case))
    assert output.response.startswith("permission_denied: permission denied for `book_slot`")
    assert trace.tool_calls()[0].error_type == "permission_denied"


def test_messages_read_parameters_and_enums_from_an_openai_tool_schema():
    schema = {
        "type": "function",
        "function": {
            "name": "reserve",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "城市"},
                    "seat": {"type": "string", "enum": ["window", "aisle"]},
                },
                "required": ["city", "seat"],
            },
        },
    }
    assert message_for("missing_param", "reserve", {"seat": "aisle"}, schema) == (
        "invalid arguments for `reserve`: missing required parameter `city` (string: 城市); "
        'the tool received {"seat": "aisle"}; call `reserve` again with `city` set'
    )
    assert message_for("missing_param", "reserve", {}, schema).endswith(
        "missing required parameter `city` (string: 城市); the tool received {}; call "
        "`reserve` again with `city` set"
    )
    # A call that sent every required parameter: the first is taken out, and the message
    # says what the tool received, so resending the same call cannot be what it asks for.
    assert message_for("missing_param", "reserve", {"city": "上海", "seat": "aisle"}, schema) == (
        "invalid arguments for `reserve`: missing required parameter `city` (string: 城市); "
        'the tool received {"seat": "aisle"}; call `reserve` again with `city` set'
    )
    refused = message_for("bad_enum", "reserve", {"seat": "aisle"}, schema)
    assert '"aisle" is not an allowed value of `seat`; allowed values: "window";' in refused
    assert '"aisle"' not in refused.split("allowed values:")[1]
    # No value given: said so, with every allowed value.
    assert message_for("bad_enum", "reserve", {"city": "上海"}, schema) == (
        "invalid arguments for `reserve`: `seat` needs one of its allowed values and the call "
        'gave none; allowed values: "window", "aisle"; call `reserve` again with one of them'
    )
    # Without an enum anywhere, the message still names the parameter and what to do.
    plain = message_for("bad_enum", "reserve", {"city": "x"}, {"properties": {"city": {}}})
    assert plain == (
        'invalid arguments for `reserve`: the value "x" of `city` is not one the tool accepts; '
        "call `reserve` again with another value of `city`"
    )
    assert "may be sent again" in message_for("http_500", "reserve", {}, schema)
    assert "may be sent again" in message_for("timeout", "reserve", {}, schema)


def test_http_and_recorded_agents_refuse_cases_with_tool_faults(tmp_path):
    faulted = Case(id="c-1", input="x", tool_faults=[ToolFault(tool="t", fault="empty")])
    plain = Case(id="c-2", input="x")
    http = HttpAgent("http://127.0.0.1:9/chat")
    with pytest.raises(ConfigError, match=r"case c-1 sets `tool_faults`.*runs its own tools"):
        check_fault_support(http, [plain, faulted])
    check_fault_support(http, [plain])
    recorded = RecordedAgent(tmp_path / "sessions.jsonl")
    with pytest.raises(ConfigError, match="recorded sessions"):
        check_fault_support(recorded, [faulted])
    check_fault_support(agent("tells_faults"), [faulted])
