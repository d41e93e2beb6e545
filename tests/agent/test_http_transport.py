"""The HTTP adapter with an in-process transport: the agent protocol without a socket.

The same behaviours test_http.py checks against a real server, answered here by an
``httpx.MockTransport``, the way a user's own tests can drive their agent's HTTP handler.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from seatrial.agent import HttpAgent, resolve_agent
from seatrial.case import Case
from seatrial.errors import AgentError, AgentSpecError
from tests.agent._drive import drive, make_context

URL = "http://agent.test/chat"
TWO_TURNS = Case(id="booking", turns=["book a cleaning", "same address as last time"])


class Agent:
    """A protocol agent as a MockTransport handler; it keeps every body it was posted."""

    def __init__(self, answer: Callable[[dict[str, Any]], Any]) -> None:
        self.answer = answer
        self.bodies: list[dict[str, Any]] = []
        self.transport = httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        answer = self.answer(body)
        if isinstance(answer, httpx.Response):
            return answer
        return httpx.Response(200, json=answer)


async def test_both_turns_of_an_attempt_share_its_session_and_user():
    agent = Agent(lambda body: {"response": f"re: {body['message']}"})
    adapter = HttpAgent(URL, transport=agent.transport)
    ctx = make_context(TWO_TURNS, run_id="run_abc")
    output, _ = await drive(adapter, ctx)
    await adapter.aclose()
    assert output.responses == [f"re: {turn}" for turn in TWO_TURNS.user_turns]
    assert [b["session_id"] for b in agent.bodies] == [ctx.session_id] * 2
    assert [b["user_id"] for b in agent.bodies] == [ctx.user_id] * 2
    assert agent.bodies[0]["metadata"]["case_id"] == "booking"


async def test_each_attempt_reaches_the_agent_as_a_fresh_user_and_session():
    agent = Agent(lambda body: {"response": "ok"})
    adapter = HttpAgent(URL, transport=agent.transport)
    for attempt, user in enumerate(["alice_1a2b", "alice_9f8e"], start=1):
        await drive(adapter, make_context(TWO_TURNS, attempt=attempt, user_id=user))
    await adapter.aclose()
    assert [b["user_id"] for b in agent.bodies] == [
        "alice_1a2b",
        "alice_1a2b",
        "alice_9f8e",
        "alice_9f8e",
    ]
    sessions = [b["session_id"] for b in agent.bodies]
    assert sessions[0] == sessions[1] != sessions[2] == sessions[3]


async def test_tools_called_become_tool_spans_of_their_turn():
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if body["message"] != TWO_TURNS.user_turns[1]:
            return {"response": "which address?"}
        return {
            "response": "booked",
            "tools_called": [
                {"name": "create_order", "input": {"slot": 2}, "output": {"id": "ORD1"}},
                {"name": "notify", "input": {}, "output": {"error": "down"}, "success": False},
            ],
            "usage": {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35},
        }

    adapter = HttpAgent(URL, transport=Agent(answer).transport)
    _, trace = await drive(adapter, make_context(TWO_TURNS))
    await adapter.aclose()
    calls = trace.tool_calls()
    assert [(c.name, c.turn, c.success) for c in calls] == [
        ("create_order", 1, True),
        ("notify", 1, False),
    ]
    assert calls[0].arguments == {"slot": 2} and calls[0].result == {"id": "ORD1"}
    assert trace.token_usage() == (30, 5)


async def test_a_500_is_an_agent_error_with_the_status_and_the_body_cut_short():
    agent = Agent(lambda body: httpx.Response(500, text="model overloaded " + "x" * 500))
    adapter = HttpAgent(URL, transport=agent.transport)
    with pytest.raises(AgentError) as caught:
        await drive(adapter, make_context(Case(id="c", input="hi")))
    await adapter.aclose()
    assert caught.value.failure_type == "agent_error"
    assert "answered HTTP 500 on turn 1: model overloaded" in str(caught.value)
    assert len(str(caught.value)) < 400


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"response": 1' + "0" * 5000 + "}", "digits"),
    ],
    ids=["nested", "long-integer"],
)
async def test_json_past_the_parsers_limits_is_an_agent_error_saying_why(body: str, said: str):
    agent = Agent(lambda _: httpx.Response(200, text=body))
    adapter = HttpAgent(URL, transport=agent.transport)
    with pytest.raises(AgentError) as caught:
        await drive(adapter, make_context(Case(id="c", input="hi")))
    await adapter.aclose()
    assert caught.value.failure_type == "agent_error"
    assert "answered JSON Seatrial cannot read on turn 1" in str(caught.value)
    assert said in str(caught.value)
    assert len(str(caught.value)) < 600


async def test_a_200_with_a_response_is_not_an_error():
    adapter = HttpAgent(URL, transport=Agent(lambda body: {"response": ""}).transport)
    output, _ = await drive(adapter, make_context(Case(id="c", input="hi")))
    await adapter.aclose()
    assert output.responses == [""]


async def test_a_transport_that_cannot_connect_is_an_unreachable_agent():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    adapter = HttpAgent(URL, transport=httpx.MockTransport(refuse))
    with pytest.raises(AgentError, match=f"agent unreachable at {URL}"):
        await drive(adapter, make_context(Case(id="c", input="hi")))
    await adapter.aclose()


async def test_check_with_a_transport_posts_nothing_and_needs_no_host():
    agent = Agent(lambda body: {"response": "ok"})
    await HttpAgent("http://no-such-host.invalid/chat", transport=agent.transport).check()
    assert agent.bodies == []


async def test_resolve_agent_hands_the_transport_to_a_named_http_agent(monkeypatch):
    monkeypatch.setenv("AGENT_TOKEN", "s3cret")
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["authorization"])
        return httpx.Response(200, json={"response": "ok"})

    agents = {"bot": {"spec": URL, "headers": {"Authorization": "Bearer ${AGENT_TOKEN}"}}}
    adapter = resolve_agent("bot", agents=agents, transport=httpx.MockTransport(answer))
    output, _ = await drive(adapter, make_context(Case(id="c", input="hi")))
    await adapter.aclose()
    assert output.responses == ["ok"] and seen == ["Bearer s3cret"]


def test_a_transport_is_refused_for_agents_that_are_not_http():
    transport = httpx.MockTransport(lambda request: httpx.Response(200))
    with pytest.raises(AgentSpecError, match="http agents only"):
        resolve_agent("python:tests.agent.sample_agents:support", transport=transport)
