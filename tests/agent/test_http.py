"""The HTTP adapter against a real agent-protocol server on 127.0.0.1."""

from __future__ import annotations

import pytest

from seatrial.agent import AgentRetry, HttpAgent
from seatrial.case import Case
from seatrial.errors import AgentError, AgentSpecError
from seatrial.testing import AgentServer, Hang, HttpReply
from seatrial.trace import attrs as A
from tests.agent._drive import drive, make_context

TWO_TURNS = Case(
    id="order_booking_001",
    turns=["帮我约明天上午的清洁服务", "还是上次那个地址"],
    context={"user_id": "test_user_001", "user_profile": {"phone": "138****1234"}},
    env="staging",
)


async def test_multi_turn_posts_each_turn_with_one_session_id():
    replies = {
        TWO_TURNS.user_turns[0]: "请问还是上次那个地址吗？",
        TWO_TURNS.user_turns[1]: "已预约",
    }
    async with AgentServer(replies) as server:
        adapter = HttpAgent(server.url)
        ctx = make_context(TWO_TURNS, run_id="20260701-101500-3fa2c1")
        output, _ = await drive(adapter, ctx)
        await adapter.aclose()
    assert output.responses == ["请问还是上次那个地址吗？", "已预约"]
    bodies = [r.body for r in server.requests]
    assert [b["message"] for b in bodies] == TWO_TURNS.user_turns
    assert {b["session_id"] for b in bodies} == {ctx.session_id}
    assert {b["user_id"] for b in bodies} == {ctx.user_id}
    assert bodies[0]["context"] == {
        "channel": "eval",
        "env": "staging",
        "user_id": "test_user_001",
        "user_profile": {"phone": "138****1234"},
    }
    assert bodies[0]["metadata"]["case_id"] == "order_booking_001"
    assert bodies[0]["metadata"]["run_id"] == "20260701-101500-3fa2c1"
    # Agents written against the old field name still get the run id under it.
    assert bodies[0]["metadata"]["replay_id"] == "20260701-101500-3fa2c1"


async def test_each_attempt_sends_its_own_user_id():
    async with AgentServer(lambda request: "ok") as server:
        adapter = HttpAgent(server.url)
        for attempt, user in enumerate(["alice_1a2b", "alice_9f8e"], start=1):
            await drive(adapter, make_context(TWO_TURNS, attempt=attempt, user_id=user))
        await adapter.aclose()
    users = [r.body["user_id"] for r in server.requests]
    sessions = [r.body["session_id"] for r in server.requests]
    assert users == ["alice_1a2b", "alice_1a2b", "alice_9f8e", "alice_9f8e"]
    assert sessions[0] == sessions[1] != sessions[2] == sessions[3]


async def test_tools_called_become_tool_spans_of_their_turn_and_usage_is_summed():
    def agent(request):
        if request["message"] == TWO_TURNS.user_turns[0]:
            return {
                "response": "which address?",
                "finished": False,
                "tools_called": [
                    {
                        "name": "tool_order_query",
                        "input": {},
                        "output": {"orders": []},
                        "latency_ms": 85,
                        "success": True,
                    },
                ],
                "usage": {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280},
            }
        return {
            "response": "booked",
            "tools_called": [
                {
                    "name": "create_order",
                    "input": {"service_type": "清洁服务"},
                    "output": {"error": "slot taken"},
                    "latency_ms": 30,
                    "success": False,
                },
                {
                    "name": "create_order",
                    "input": {"service_type": "清洁服务", "slot": 2},
                    "output": {"status": "pending"},
                    "latency_ms": 40,
                    "success": True,
                },
            ],
            "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320},
        }

    async with AgentServer(agent) as server:
        adapter = HttpAgent(server.url)
        _, trace = await drive(adapter, make_context(TWO_TURNS))
        await adapter.aclose()
    calls = trace.tool_calls()
    assert [(c.name, c.turn, c.success) for c in calls] == [
        ("tool_order_query", 0, True),
        ("create_order", 1, False),
        ("create_order", 1, True),
    ]
    assert calls[1].error_type == "tool_error"
    assert calls[2].arguments == {"service_type": "清洁服务", "slot": 2}
    assert calls[2].result == {"status": "pending"}
    root = trace.agent_span()
    assert root is not None
    assert all(c.span.parent_span_id == root.span_id for c in calls)
    # Laid end to end inside the turn: the second call starts where the first ended.
    assert calls[2].span.start_time_unix_nano == calls[1].span.end_time_unix_nano
    assert calls[1].span.duration_ms <= 30
    assert trace.token_usage() == (1500, 100)
    turns = [e.attributes[A.TURN_MESSAGE] for _, e in trace.events(A.TURN)]
    assert turns == TWO_TURNS.user_turns


async def test_final_state_extension_is_reported():
    reply = {"response": "done", "final_state": {"order_created": {"status": "pending"}}}
    async with AgentServer(lambda request: reply) as server:
        adapter = HttpAgent(server.url)
        output, _ = await drive(adapter, make_context(Case(id="c", input="book it")))
        await adapter.aclose()
    assert output.final_state == {"order_created": {"status": "pending"}}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (HttpReply(503, "upstream model overloaded " + "x" * 500), "HTTP 503"),
        (HttpReply(200, "<html>not json</html>", "text/html"), "non-JSON"),
        ({"answer": "the field is misnamed"}, "has no `response`"),
    ],
    ids=["5xx", "malformed", "no-response"],
)
async def test_bad_answers_are_agent_errors_naming_what_was_wrong(reply, expected):
    async with AgentServer(lambda request: reply) as server:
        adapter = HttpAgent(server.url, retry=AgentRetry(tries=1))  # retries: tests/faults
        with pytest.raises(AgentError) as caught:
            await drive(adapter, make_context(Case(id="c", input="hi")))
        await adapter.aclose()
    assert caught.value.failure_type == "agent_error"
    assert expected in str(caught.value)
    assert len(str(caught.value)) < 400  # the body is cut, not dumped


async def test_unreachable_agent_is_an_agent_error(refused_port):
    url = f"http://127.0.0.1:{refused_port}/chat"
    adapter = HttpAgent(url)
    with pytest.raises(AgentError) as caught:
        await drive(adapter, make_context(Case(id="c", input="hi")))
    await adapter.aclose()
    assert caught.value.failure_type == "agent_error"
    assert f"agent unreachable at {url}" in str(caught.value)


async def test_an_agent_that_hangs_is_a_timeout():
    async with AgentServer(lambda request: Hang()) as server:
        adapter = HttpAgent(server.url, timeout_s=0.2)
        with pytest.raises(AgentError) as caught:
            await drive(adapter, make_context(Case(id="c", input="hi")))
        await adapter.aclose()
    assert caught.value.failure_type == "timeout"


async def test_header_values_come_from_the_environment_and_stay_secret(monkeypatch):
    monkeypatch.setenv("AGENT_TOKEN", "s3cret-token")
    async with AgentServer(lambda request: HttpReply(500, "boom")) as server:
        adapter = HttpAgent(server.url, headers={"Authorization": "Bearer ${AGENT_TOKEN}"})
        with pytest.raises(AgentError) as caught:
            await drive(adapter, make_context(Case(id="c", input="hi")))
        await adapter.aclose()
    assert server.requests[0].headers["authorization"] == "Bearer s3cret-token"
    assert "s3cret" not in str(caught.value)


def test_a_missing_environment_variable_is_named_at_construction(monkeypatch):
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(AgentSpecError, match=r"\$\{NOT_SET_ANYWHERE\}, which is not set"):
        HttpAgent("http://127.0.0.1:1/chat", headers={"X-Key": "${NOT_SET_ANYWHERE}"})


async def test_check_connects_without_posting():
    async with AgentServer(lambda request: "ok") as server:
        adapter = HttpAgent(server.url)
        await adapter.check()
        await adapter.aclose()
        assert server.requests == []


async def test_check_of_an_unreachable_agent_is_a_spec_error(refused_port):
    url = f"http://127.0.0.1:{refused_port}/chat"
    with pytest.raises(AgentSpecError, match=f"agent unreachable at {url}"):
        await HttpAgent(url).check()


async def test_many_concurrent_attempts_share_one_pool():
    import asyncio

    async with AgentServer(lambda request: f"re: {request['message']}") as server:
        adapter = HttpAgent(server.url, concurrency=16)
        cases = [Case(id=f"c{i}", input=f"m{i}") for i in range(64)]
        results = await asyncio.gather(*(drive(adapter, make_context(c)) for c in cases))
        await adapter.aclose()
    assert [output.response for output, _ in results] == [f"re: m{i}" for i in range(64)]


def test_repeats_of_a_run_reach_the_agent_as_fresh_users(tmp_path):
    from seatrial import run_suite

    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "suite: memory\n"
        "cases:\n"
        "  - id: kb-question\n"
        "    turns: ['what is the refund policy?', 'and for coupons?']\n"
        "    context: {user_id: test_user_001}\n"
        "    repeats: 3\n"
        "    assertions: [{type: contains, value: policy}]\n",
        encoding="utf-8",
    )
    with AgentServer(lambda request: "the policy is 7 days") as server:
        report = run_suite(suite, server.url, db=f"sqlite:///{tmp_path / 'seatrial.db'}")
    assert [a.verdict for c in report.cases for a in c.attempts] == ["PASS"] * 3
    by_session: dict[str, list[str]] = {}
    for request in server.requests:
        by_session.setdefault(request.body["session_id"], []).append(request.body["user_id"])
    # Both turns of one attempt share a session and a user; the three attempts share neither.
    assert sorted(len(users) for users in by_session.values()) == [2, 2, 2]
    assert all(len(set(users)) == 1 for users in by_session.values())
    fresh = {users[0] for users in by_session.values()}
    assert len(fresh) == 3
    assert all(user.startswith("test_user_001") and user != "test_user_001" for user in fresh)
