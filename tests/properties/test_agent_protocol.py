"""Agent answers and recorded sessions at volume: whatever comes back is data, never a crash.

The HTTP adapter reads each protocol response; a body that is not one (not JSON, not an
object, a `tools_called` of the wrong shape, numbers JSON allows but Python cannot use)
raises :class:`AgentError` naming the agent, which the runner records as an ERROR verdict.
A recorded-sessions file (``recorded:PATH``) that is malformed is refused when it is read,
with :class:`AgentSpecError` naming the file and line, before anything runs.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from seatrial.agent import AgentRetry, HttpAgent, RecordedAgent
from seatrial.case import Case
from seatrial.errors import AgentError, AgentSpecError
from tests.agent._drive import drive, make_context
from tests.properties._strategies import SEEDS, json_values, mutated_exports

URL = "http://agent.test/chat"
CASE = Case(id="refund", turns=["refund order A1001", "thanks"])

# Numbers JSON text may hold that Python's int() or float arithmetic refuses.
awkward_numbers = st.sampled_from(
    [math.inf, -math.inf, math.nan, 10**400, -(10**400), 2**63, -1, -0.0, 1e308, 5e-324]
)
# Weighted towards numbers: a count or a clock is where JSON and Python disagree.
values = st.one_of(awkward_numbers, st.integers(), st.floats(), json_values)
tool_calls = st.fixed_dictionaries(
    {},
    optional={
        "name": st.text(max_size=8) | values,
        "input": values,
        "arguments": values,
        "output": values,
        "result": values,
        "latency_ms": values,
        "success": values,
        "error": values,
        "error_type": values,
        "id": values,
        "turn": values,
        "permission": st.dictionaries(
            st.sampled_from(["scope", "decision", "tool", "seatrial.permission.scope"]), values
        )
        | values,
    },
)
protocol_bodies = st.fixed_dictionaries(
    {},
    optional={
        "response": st.text(max_size=20) | values,
        "session_id": values,
        "trace_id": values,
        "finished": values,
        "tools_called": st.lists(tool_calls, max_size=3) | values,
        "usage": st.dictionaries(
            st.sampled_from(
                ["prompt_tokens", "completion_tokens", "input_tokens", "output_tokens"]
            ),
            values,
        )
        | values,
        "final_state": values,
        "metadata": st.dictionaries(st.text(max_size=8), values, max_size=3) | values,
    },
)
bodies = (
    protocol_bodies.map(lambda body: json.dumps(body).encode())
    | values.map(lambda value: json.dumps(value).encode())
    | st.binary(max_size=100)
)


def answer_with(status: int, body: bytes) -> httpx.MockTransport:
    return httpx.MockTransport(lambda request: httpx.Response(status, content=body))


async def attempt(transport: httpx.MockTransport) -> None:
    # One try: a 503 is retried by default (tests/faults); here only the reply's reading counts.
    adapter = HttpAgent(URL, transport=transport, retry=AgentRetry(tries=1))
    try:
        await drive(adapter, make_context(CASE))
    finally:
        await adapter.aclose()


@given(body=bodies, status=st.sampled_from([200, 200, 200, 201, 404, 500, 503]))
def test_any_agent_answer_is_a_reply_or_an_agent_error(body, status):
    try:
        asyncio.run(attempt(answer_with(status, body)))
    except AgentError as error:
        assert URL in str(error)
        assert error.failure_type in ("agent_error", "timeout")


named_calls = st.builds(lambda call, name: {**call, "name": name}, tool_calls, st.text(min_size=1))


@given(tools_called=st.lists(named_calls, min_size=1, max_size=3), usage=protocol_bodies)
def test_a_reply_with_any_tools_called_list_is_recorded_or_refused_as_agent_error(
    tools_called, usage
):
    reply = {"response": "done", "tools_called": tools_called, "usage": usage.get("usage")}
    body = json.dumps(reply).encode()
    try:
        asyncio.run(attempt(answer_with(200, body)))
    except AgentError as error:
        assert URL in str(error)


def session_lines() -> st.SearchStrategy[dict[str, Any]]:
    """Recorded sessions: mostly the right keys, with any values, and real exports damaged."""
    otlp = mutated_exports().map(lambda export: export[1]) | st.just(SEEDS["otlp-json"])
    return st.fixed_dictionaries(
        {},
        optional={
            "case_id": st.just("refund") | values,
            "attempt": st.integers(min_value=-2, max_value=3) | values,
            "response": st.text(max_size=10) | values,
            "responses": st.lists(st.text(max_size=10), max_size=2) | values,
            "final_state": values,
            "session_id": values,
            "otlp": otlp | values,
            "tools_called": st.lists(tool_calls, max_size=2) | values,
            "usage": values,
        },
    )


@given(lines=st.lists(session_lines() | values, min_size=1, max_size=3))
def test_a_recorded_sessions_file_plays_back_or_is_refused_with_its_line(tmp_path, lines):
    path = tmp_path / "sessions.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    agent = RecordedAgent(path)
    try:
        asyncio.run(agent.check())
    except AgentSpecError as error:
        assert str(error).startswith(str(path)) or f"file {path}" in str(error), error
        return
    try:
        output, trace = asyncio.run(drive(agent, make_context(CASE)))
    except AgentError as error:
        assert "refund" in str(error)
        return
    assert all(span.trace_id == trace.trace_id for span in trace.spans)
    assert isinstance(output.response, str)


def test_a_recorded_session_may_hold_unicode_line_separators_inside_its_strings(tmp_path):
    # str.splitlines() cut the line at U+2028, which JSON strings may hold unescaped.
    path = tmp_path / "sessions.jsonl"
    session = {"case_id": "refund", "responses": ["first\u2028second", "ok"]}
    path.write_text(json.dumps(session, ensure_ascii=False), encoding="utf-8")

    output, _ = asyncio.run(drive(RecordedAgent(path), make_context(CASE)))

    assert output.responses == ["first\u2028second", "ok"]


@pytest.mark.parametrize("value", ["9" * 5_000, "[" * 5_000 + "]" * 5_000])
def test_a_recorded_session_python_cannot_read_is_refused_with_its_line(tmp_path, value):
    path = tmp_path / "sessions.jsonl"
    path.write_text(
        json.dumps({"case_id": "refund", "response": "ok"})
        + "\n"
        + json.dumps({"case_id": "refund", "response": "ok", "usage": "VALUE"}).replace(
            '"VALUE"', value
        ),
        encoding="utf-8",
    )

    with pytest.raises(AgentSpecError) as refused:
        asyncio.run(RecordedAgent(path).check())

    assert str(refused.value).startswith(f"{path}:2:")
