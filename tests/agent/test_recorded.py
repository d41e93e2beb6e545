"""The recorded-sessions adapter (`recorded:` or `replay:`): OTLP or tools_called form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seatrial.agent import RecordedAgent, resolve_agent
from seatrial.case import AssertionSpec, Case
from seatrial.errors import AgentError, AgentSpecError
from seatrial.run import run_attempt
from seatrial.trace import SpanEvent, Trace, trace_from_tools_called, trace_to_otlp
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
    adapter = RecordedAgent(path)
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
    output, trace = await drive(RecordedAgent(path), ctx)
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
    adapter = RecordedAgent(path)
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
        await drive(RecordedAgent(path), make_context(Case(id="zzz", input="x")))


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
    output, trace = await drive(RecordedAgent(path), make_context(case))
    assert output.responses == ["which address?", "booked"]
    assert output.final_state == {"order_created": {"status": "pending"}}
    assert [e.attributes[A.TURN_INDEX] for _, e in trace.events(A.TURN)] == [0, 1]


async def test_an_otlp_trace_without_an_agent_span_gets_one(tmp_path):
    """A framework that records no invoke_agent span: its roots go under the added one."""
    recorded = trace_from_tools_called(TOOLS_CALLED)
    roots_only = [s.model_copy(update={"parent_span_id": None}) for s in recorded.spans[1:]]
    without_root = Trace(trace_id=recorded.trace_id, spans=roots_only)
    path = write_sessions(
        tmp_path / "s.jsonl", {"case_id": "a", "response": "x", "otlp": trace_to_otlp(without_root)}
    )
    _, trace = await drive(RecordedAgent(path), make_context(Case(id="a", input="x")))
    root = trace.agent_span()
    assert root is not None
    assert {c.span.parent_span_id for c in trace.tool_calls()} == {root.span_id}


def lost_root_sessions(tmp_path: Path) -> Path:
    """One session whose agent root span never arrived, and one complete session."""
    recorded = trace_from_tools_called(TOOLS_CALLED, messages=[CASE.input])
    cut = Trace(trace_id=recorded.trace_id, spans=recorded.spans[1:])
    return write_sessions(
        tmp_path / "sessions.jsonl",
        {"case_id": "cut", "response": "已预约", "otlp": trace_to_otlp(cut)},
        {"case_id": "whole", "response": "已预约", "otlp": trace_to_otlp(recorded)},
    )


async def test_a_recorded_trace_whose_root_never_arrived_keeps_its_missing_parent(tmp_path):
    adapter = RecordedAgent(lost_root_sessions(tmp_path))
    _, trace = await drive(adapter, make_context(Case(id="cut", input="x")))
    known = {s.span_id for s in trace.spans}
    parents = {c.span.parent_span_id for c in trace.tool_calls()}
    assert len(parents) == 1 and not parents & known
    _, again = await drive(adapter, make_context(Case(id="cut", input="x"), attempt=2))
    assert {c.span.parent_span_id for c in again.tool_calls()}.isdisjoint(parents)


async def test_trace_complete_fails_a_replayed_trace_whose_root_never_arrived(tmp_path):
    """Through `--agent replay:FILE`, as a user runs it: the adapter's root must not hide it."""
    adapter = resolve_agent(f"replay:{lost_root_sessions(tmp_path)}")
    await adapter.check()
    check = [AssertionSpec(type="trace_complete")]
    cut = await run_attempt(adapter, Case(id="cut", input="x", assertions=check), 1, "r1", 30)
    assert (cut.verdict, cut.failure_type) == ("FAIL", "agent_error")
    assert "have a parent missing from the trace" in (cut.reason or "")
    whole = await run_attempt(adapter, Case(id="whole", input="x", assertions=check), 1, "r1", 30)
    assert whole.verdict == "PASS", whole.reason


async def test_the_tools_called_form_carries_recorded_permission_decisions(tmp_path):
    calls = [
        {
            "name": "write_file",
            "input": {"path": "a.md"},
            "latency_ms": 5,
            "permission": {"scope": "once", "decision": "granted"},
        },
        {"name": "write_file", "input": {"path": "b.md"}, "latency_ms": 5},
    ]
    path = write_sessions(
        tmp_path / "s.jsonl", {"case_id": "w", "response": "done", "tools_called": calls}
    )
    adapter = resolve_agent(f"replay:{path}")
    case = Case(id="w", input="write two notes", permissions={"write_file": "once"})
    record = await run_attempt(adapter, case, 1, "r1", 30)
    assert (record.verdict, record.failure_type) == ("FAIL", "permission_violation")
    assert record.trace is not None
    (decision,) = record.trace.events(A.PERMISSION)
    assert decision[1].attributes == {
        A.PERMISSION_TOOL: "write_file",
        A.PERMISSION_SCOPE: "once",
        A.PERMISSION_DECISION: "granted",
    }


async def test_each_attempt_gets_fresh_span_ids(tmp_path):
    otlp = trace_to_otlp(trace_from_tools_called(TOOLS_CALLED))
    path = write_sessions(tmp_path / "s.jsonl", {"case_id": "a", "response": "x", "otlp": otlp})
    adapter = RecordedAgent(path)
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
        await RecordedAgent(path).check()
    assert str(caught.value).startswith(f"{path}:3: ")
    assert message in str(caught.value)


async def test_a_missing_file_is_a_spec_error(tmp_path):
    with pytest.raises(AgentSpecError, match="cannot read replay file"):
        await RecordedAgent(tmp_path / "nope.jsonl").check()


@pytest.mark.parametrize(
    "keys",
    [("tool", "scope", "decision"), (A.PERMISSION_TOOL, A.PERMISSION_SCOPE, A.PERMISSION_DECISION)],
    ids=["plain", "namespaced"],
)
async def test_a_replayed_otlp_once_grant_then_two_writes_fails(tmp_path, keys):
    """The incident as recorded: one `once` grant, then two writes, the second undecided."""
    calls = [{"name": "write_file", "input": {"path": p}, "latency_ms": 5} for p in "ab"]
    recorded = trace_from_tools_called(calls, messages=["write two notes"])
    first = recorded.tool_calls()[0].span
    first.events.append(
        SpanEvent(
            name=A.PERMISSION,
            time_unix_nano=first.start_time_unix_nano,
            attributes=dict(zip(keys, ("write_file", "once", "granted"), strict=True)),
        )
    )
    path = write_sessions(
        tmp_path / "s.jsonl", {"case_id": "w", "response": "done", "otlp": trace_to_otlp(recorded)}
    )
    adapter = resolve_agent(f"replay:{path}")
    once = Case(id="w", input="write two notes", permissions={"write_file": "once"})
    record = await run_attempt(adapter, once, 1, "r1", 30)
    assert (record.verdict, record.failure_type) == ("FAIL", "permission_violation")
    session = once.model_copy(update={"permissions": {"write_file": "session"}})
    assert (await run_attempt(adapter, session, 1, "r1", 30)).verdict == "PASS"
