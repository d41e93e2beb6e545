"""The python adapter: sync and async agent functions, tools and model calls recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from seatrial.agent import PythonAgent, tool
from seatrial.case import Case
from seatrial.errors import AgentError, AgentSpecError
from seatrial.trace import TraceRecorder
from seatrial.trace import attrs as A
from tests.agent._drive import drive, make_context

AGENTS = Path(__file__).parent / "sample_agents.py"


def agent(function: str) -> PythonAgent:
    return PythonAgent(f"python:{AGENTS}:{function}")


async def test_sync_agent_records_tool_and_model_spans_with_no_extra_code():
    case = Case(id="refund", turns=["where is order 1001?", "refund it please"])
    output, trace = await drive(agent("support"), make_context(case))
    assert output.responses == ["order 1001 is delivered", "refunded 1001"]
    assert output.final_state == {
        "refund": {"refunded": "1001", "reason": "customer request"},
        "turns": 2,
    }
    calls = trace.tool_calls()
    assert [(c.name, c.turn, c.arguments) for c in calls] == [
        ("lookup_order", 0, {"order_id": "1001"}),
        ("lookup_order", 1, {"order_id": "1001"}),
        ("refund_order", 1, {"order_id": "1001", "reason": "customer request"}),
    ]
    assert calls[0].result == {"status": "delivered", "total": 42.5}
    assert all(c.span.attributes[A.TOOL_CALL_ID].startswith("call_") for c in calls)
    models = trace.model_calls()
    assert [(m.model, m.input_tokens, m.output_tokens) for m in models] == [
        ("gpt-4o-2024-08-06", 120, 30),
        ("gpt-4o-2024-08-06", 120, 30),
    ]
    assert models[0].span.name == "chat gpt-4o"
    assert trace.cost_usd() == pytest.approx(0.002)
    root = trace.agent_span()
    assert root is not None
    assert {c.span.parent_span_id for c in calls} == {root.span_id}
    # The write tool asked for permission and got it; read-only tools did not need to.
    permissions = [e.attributes for _, e in trace.events(A.PERMISSION)]
    assert [(p[A.PERMISSION_TOOL], p[A.PERMISSION_DECISION]) for p in permissions] == [
        ("refund_order", "granted")
    ]


async def test_async_agent_records_async_tools_models_and_skills():
    output, trace = await drive(agent("async_support"), make_context(Case(id="w", input="rain?")))
    assert output.response == "rainy in Paris"
    assert [(c.name, c.arguments, c.result) for c in trace.tool_calls()] == [
        ("weather", {"city": "Paris"}, "rainy in Paris")
    ]
    assert [m.model for m in trace.model_calls()] == ["qwen-max"]
    skills = [e.attributes[A.SKILL_NAME] for _, e in trace.events(A.SKILL)]
    assert skills == ["Weather"]


async def test_a_once_grant_lets_one_write_through_and_records_the_denial():
    case = Case(id="c", input="refund both", permissions={"refund_order": "once"})
    output, trace = await drive(agent("refunds_everything"), make_context(case))
    assert output.response == "1,denied:once"
    calls = trace.tool_calls()
    assert [(c.success, c.error_type) for c in calls] == [
        (True, None),
        (False, "permission_denied"),
    ]
    decisions = [e.attributes[A.PERMISSION_DECISION] for _, e in trace.events(A.PERMISSION)]
    assert decisions == ["granted", "denied"]


async def test_production_refuses_tools_not_declared_read_only():
    case = Case(id="c", input="refund both", env="production")
    output, trace = await drive(agent("refunds_everything"), make_context(case))
    assert output.response == "denied:production,denied:production"
    reasons = {e.attributes[A.PERMISSION_REASON] for _, e in trace.events(A.PERMISSION)}
    assert reasons == {"production: read-only tools only"}


async def test_tools_called_by_name_go_through_the_registry():
    output, trace = await drive(agent("by_name"), make_context(Case(id="c", input="status?")))
    assert output.response == "delivered"
    assert [c.name for c in trace.tool_calls()] == ["lookup_order"]


async def test_an_exception_becomes_an_agent_error_naming_type_message_and_line():
    with pytest.raises(AgentError) as caught:
        await drive(agent("fails_deep"), make_context(Case(id="c", input="hello")))
    message = str(caught.value)
    assert caught.value.failure_type == "agent_error"
    assert "LookupError: no handler for 'hello'" in message
    assert f"{AGENTS}:" in message and "in _helper" in message


async def test_a_reply_that_is_not_text_is_an_agent_error():
    with pytest.raises(AgentError, match="returned 42; return the reply as a str"):
        await drive(agent("returns_a_number"), make_context(Case(id="c", input="hi")))


async def test_module_specs_resolve_against_the_base_dir(tmp_path):
    (tmp_path / "my_project_agent.py").write_text(
        "def reply(message, session):\n    return message.upper()\n", encoding="utf-8"
    )
    adapter = PythonAgent("python:my_project_agent:reply", base_dir=tmp_path)
    await adapter.check()
    output, _ = await drive(adapter, make_context(Case(id="c", input="hi")))
    assert output.response == "HI"


async def test_relative_file_specs_resolve_against_the_base_dir(tmp_path):
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "bot.py").write_text(
        "async def reply(message, session):\n    return f'{session.case_id}:{message}'\n",
        encoding="utf-8",
    )
    adapter = PythonAgent("python:agents/bot.py:reply", base_dir=tmp_path)
    output, _ = await drive(adapter, make_context(Case(id="c7", input="hi")))
    assert output.response == "c7:hi"


async def test_check_reports_a_missing_function_with_the_ones_there():
    with pytest.raises(AgentSpecError, match="`nope` is not defined .* functions there: .*support"):
        await agent("nope").check()


async def test_check_reports_a_missing_file_and_a_broken_module(tmp_path):
    with pytest.raises(AgentSpecError, match="agent file not found"):
        await PythonAgent("python:missing.py:run", base_dir=tmp_path).check()
    (tmp_path / "broken.py").write_text("import not_a_real_module_xyz\n", encoding="utf-8")
    with pytest.raises(AgentSpecError, match="ModuleNotFoundError.*not_a_real_module_xyz"):
        await PythonAgent("python:broken.py:run", base_dir=tmp_path).check()
    with pytest.raises(AgentSpecError, match="cannot import module `no_such_module_abc`"):
        await PythonAgent("python:no_such_module_abc:run").check()


def test_a_spec_without_a_function_is_refused():
    with pytest.raises(AgentSpecError, match="python:module:function"):
        PythonAgent("python:just_a_module")


def test_a_tool_outside_an_attempt_is_a_plain_call():
    @tool
    def add(a: int, b: int) -> int:
        return a + b

    assert TraceRecorder.current() is None
    assert add(2, 3) == 5


def test_a_failing_tool_records_the_exception_type():
    @tool(read_only=True)
    def divide(a: int, b: int) -> float:
        return a / b

    recorder = TraceRecorder()
    with recorder.activate(), pytest.raises(ZeroDivisionError):
        divide(1, 0)
    (call,) = recorder.trace().tool_calls()
    assert (call.name, call.success, call.error_type) == ("divide", False, "ZeroDivisionError")
    assert call.arguments == {"a": 1, "b": 0}
