"""The replay adapter: recorded sessions in OTLP or tools_called form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seatrial.agent import ReplayAgent
from seatrial.case import Case
from seatrial.errors import AgentError, AgentSpecError
from seatrial.trace import Trace, trace_from_tools_called, trace_to_otlp
from seatrial.trace import attrs as A
from tests.agent._drive import drive, make_context

CASE = Case(id="order_booking_001", input="帮我约明天上午的清洁服务")

TOOLS_CALLED = [
    {
        "name": "tool_order_query",
        "input": {"user": "u1"},
        "output": {"orders": []},
        "latency_ms": 85,
        "success": True,
    },
    {
        "name": "create_order",
        "input": {"service_type": "清洁服务", "time_slot": "tomorrow_morning"},
        "output": {"error": "slot taken"},
        "latency_ms": 40,
        "success": False,
    },
]
USAGE = {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280}


def write_sessions(path: Path, *sessions: dict) -> Path:
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sessions), "utf-8")
    return path


def summary(trace: Trace) -> list[tuple]:
    """What verdicts read: calls with arguments, results, outcome and turn; tokens; the root."""
    root = trace.agent_span()
    return [
        ("root", root is not None and root.end_time_unix_nano is not None),
        ("tokens", trace.token_usage()),
        *[
            (c.name, c.arguments, c.result, c.success, c.error_type, c.turn)
            for c in trace.tool_calls()
        ],
    ]


async def test_the_same_session_as_otlp_and_as_tools_called_gives_the_same_trajectory(tmp_path):
    recorded = trace_from_tools_called(TOOLS_CALLED, usage=USAGE, messages=CASE.user_turns)
    path = write_sessions(
        tmp_path / "sessions.jsonl",
        {"case_id": CASE.id, "response": "已预约", "tools_called": TOOLS_CALLED, "usage": USAGE},
        {"case_id": "same-as-otlp", "response": "已预约", "otlp": trace_to_otlp(recorded)},
    )
    adapter = ReplayAgent(path)
    await adapter.check()
    _, from_tools = await drive(adapter, make_context(CASE))
    other = CASE.model_copy(update={"id": "same-as-otlp"})
    _, from_otlp = await drive(adapter, make_context(other))
    assert summary(from_tools) == summary(from_otlp)
    assert summary(from_tools)[1] == ("tokens", (1200, 80))
    assert [c.name for c in from_tools.tool_calls()] == ["tool_order_query", "create_order"]


async def test_the_replayed_trace_has_the_http_adapters_shape(tmp_path):
    path = write_sessions(
        tmp_path / "s.jsonl",
        {"case_id": CASE.id, "response": "ok", "tools_called": TOOLS_CALLED, "usage": USAGE},
    )
    ctx = make_context(CASE)
    output, trace = await drive(ReplayAgent(path), ctx)
    assert output.trace is trace
    root = trace.agent_span()
    assert root is not None and root.name == f"invoke_agent {path.stem}"
    assert root.attributes[A.CONVERSATION_ID] == ctx.session_id
    assert {s.trace_id for s in trace.spans} == {ctx.recorder.trace_id}
    assert {c.span.parent_span_id for c in trace.tool_calls()} == {root.span_id}
    (turn,) = trace.events(A.TURN)
    assert turn[1].attributes[A.TURN_MESSAGE] == CASE.input
    # Laid end to end by latency, like the HTTP adapter.
    first, second = trace.tool_calls()
    assert first.span.duration_ms == 85 and second.span.duration_ms == 40
    assert root.duration_ms == 125


async def test_sessions_are_found_by_attempt_else_cycled_in_file_order(tmp_path):
    path = write_sessions(
        tmp_path / "s.jsonl",
        {"case_id": "a", "response": "first"},
        {"case_id": "b", "response": "other case"},
        {"case_id": "a", "response": "second"},
        {"case_id": "c", "attempt": 2, "response": "c2"},
        {"case_id": "c", "attempt": 1, "response": "c1"},
    )
    adapter = ReplayAgent(path)
    replies = []
    for attempt in (1, 2, 3):
        output, _ = await drive(adapter, make_context(Case(id="a", input="x"), attempt=attempt))
        replies.append(output.response)
    assert replies == ["first", "second", "first"]
    output, _ = await drive(adapter, make_context(Case(id="c", input="x"), attempt=1))
    assert output.response == "c1"


async def test_a_case_with_no_recorded_session_is_an_agent_error(tmp_path):
    path = write_sessions(tmp_path / "s.jsonl", {"case_id": "a", "response": "x"})
    with pytest.raises(AgentError, match=f"no recorded session for case `zzz` in {path}"):
        await drive(ReplayAgent(path), make_context(Case(id="zzz", input="x")))


async def test_responses_and_final_state_are_replayed(tmp_path):
    path = write_sessions(
        tmp_path / "s.jsonl",
        {
            "case_id": "m",
            "responses": ["which address?", "booked"],
            "final_state": {"order_created": {"status": "pending"}},
        },
    )
    case = Case(id="m", turns=["book", "same address"])
    output, trace = await drive(ReplayAgent(path), make_context(case))
    assert output.responses == ["which address?", "booked"]
    assert output.final_state == {"order_created": {"status": "pending"}}
    assert [e.attributes[A.TURN_INDEX] for _, e in trace.events(A.TURN)] == [0, 1]


async def test_an_otlp_trace_without_an_agent_span_gets_one(tmp_path):
    recorded = trace_from_tools_called(TOOLS_CALLED)
    without_root = Trace(trace_id=recorded.trace_id, spans=recorded.spans[1:])
    path = write_sessions(
        tmp_path / "s.jsonl", {"case_id": "a", "response": "x", "otlp": trace_to_otlp(without_root)}
    )
    _, trace = await drive(ReplayAgent(path), make_context(Case(id="a", input="x")))
    root = trace.agent_span()
    assert root is not None
    assert {c.span.parent_span_id for c in trace.tool_calls()} == {root.span_id}


async def test_each_attempt_gets_fresh_span_ids(tmp_path):
    otlp = trace_to_otlp(trace_from_tools_called(TOOLS_CALLED))
    path = write_sessions(tmp_path / "s.jsonl", {"case_id": "a", "response": "x", "otlp": otlp})
    adapter = ReplayAgent(path)
    _, one = await drive(adapter, make_context(Case(id="a", input="x"), attempt=1))
    _, two = await drive(adapter, make_context(Case(id="a", input="x"), attempt=2))
    assert not {s.span_id for s in one.spans} & {s.span_id for s in two.spans}
    assert summary(one) == summary(two)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"case_id": "a", "response": "x"', "not valid JSON"),
        ('{"response": "x"}', "needs `case_id`"),
        ('{"case_id": "a"}', "needs `response`"),
        ('{"case_id": "a", "response": "x", "tools_called": [{"input": {}}]}', "needs a `name`"),
        (
            '{"case_id": "a", "response": "x", "otlp": {"resourceSpans": [{"scopeSpans": '
            '[{"spans": [{"name": "s"}]}]}]}}',
            "traceId and spanId are required",
        ),
    ],
    ids=["json", "case_id", "response", "tools_called", "otlp"],
)
async def test_a_bad_line_is_reported_with_file_and_line(tmp_path, line, message):
    path = tmp_path / "s.jsonl"
    path.write_text('{"case_id": "ok", "response": "fine"}\n\n' + line + "\n", "utf-8")
    with pytest.raises(AgentSpecError) as caught:
        await ReplayAgent(path).check()
    assert str(caught.value).startswith(f"{path}:3: ")
    assert message in str(caught.value)


async def test_a_missing_file_is_a_spec_error(tmp_path):
    with pytest.raises(AgentSpecError, match="cannot read replay file"):
        await ReplayAgent(tmp_path / "nope.jsonl").check()
