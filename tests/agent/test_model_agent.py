"""``model:`` agents: a model, a system prompt and tools, run by Seatrial through its gateway.

Each test runs a suite with ``execute_suite_async`` (the one front door) against a scripted
OpenAI-compatible server on 127.0.0.1; the run starts the gateway itself.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from seatrial._execute import SuiteRun, execute_suite_async
from seatrial.config import load_config
from seatrial.errors import AgentSpecError
from seatrial.record import AttemptRecord
from seatrial.run import RunOptions
from seatrial.store import Store
from seatrial.testing import FakeOpenAI, FakeReply, FakeToolCall
from seatrial.trace import Trace

TOOLS_PY = Path(__file__).parent / "model_agent_tools.py"
KEY_ENV = "SEATRIAL_TEST_MODEL_AGENT_KEY"
PROMPT = "You book cleaning visits. Look the order up before booking."
SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "An order's status and address.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    },
    {
        "name": "book_visit",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "slot": {"enum": ["am", "pm"]}},
            "required": ["order_id", "slot"],
        },
    },
]
BOOKER = f"""
    system_prompt: {json.dumps(PROMPT)}
    tools: tools.json
    implementations:
      lookup_order: python:{TOOLS_PY}:lookup_order
      book_visit: python:{TOOLS_PY}:book_visit
"""
BOOKING_SUITE = """
suite: booking
cases:
  - id: book
    input: Book a morning visit for order A1
    assertions:
      - {type: tool_called, expected: book_visit}
      - {type: tool_params, tool: book_visit, params: {order_id: A1, slot: am}}
      - {type: contains, value: Booked}
"""


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-model-agent")


def write_project(root: Path, base_url: str, agent: str, suite: str) -> None:
    (root / "tools.json").write_text(json.dumps(SCHEMAS), encoding="utf-8")
    (root / "suite.yaml").write_text(textwrap.dedent(suite), encoding="utf-8")
    (root / "seatrial.yaml").write_text(
        "models:\n"
        "  main:\n"
        "    model: main-v1\n"
        f"    base_url: {base_url}\n"
        f"    api_key_env: {KEY_ENV}\n"
        "    price: {input_per_mtok: 1.0, output_per_mtok: 2.0}\n"
        "agents:\n"
        "  booker:\n"
        "    spec: model:main\n" + textwrap.indent(textwrap.dedent(agent).strip(), "    ") + "\n",
        encoding="utf-8",
    )


class Ran:
    """A finished run: its outcome, the requests the model got, and what the store holds."""

    def __init__(self, root: Path, done: SuiteRun, requests: list[dict[str, Any]]) -> None:
        self.root, self.done, self.requests = root, done, requests
        with Store.open(f"sqlite:///{root / 'store.db'}") as store:
            self.records = store.attempts(done.run_id)
            self.traces = [
                store.attempt_trace(done.run_id, r.case_id, r.attempt) for r in self.records
            ]

    @property
    def record(self) -> AttemptRecord:
        [record] = self.records
        return record

    @property
    def trace(self) -> Trace:
        [trace] = self.traces
        return trace


async def run(
    root: Path,
    script: Any,
    *,
    agent: str = BOOKER,
    suite: str = BOOKING_SUITE,
    spec: str = "booker",
    cassette: bool = False,
    options: RunOptions | None = None,
    notices: list[tuple[str, str]] | None = None,
) -> Ran:
    async with FakeOpenAI(script) as upstream:
        write_project(root, upstream.base_url, agent, suite)
        if cassette:
            with (root / "seatrial.yaml").open("a", encoding="utf-8") as file:
                file.write("gateway: {cassette: {mode: record}}\n")
        done = await execute_suite_async(
            root / "suite.yaml",
            spec,
            config=load_config(root),
            db=f"sqlite:///{root / 'store.db'}",
            write_report_files=False,
            options=options,
            on_notice=None if notices is None else lambda *notice: notices.append(notice),
        )
        requests = [r.body for r in upstream.requests]
    return Ran(root, done, requests)


def calls(*pairs: tuple[str, dict[str, Any]]) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name, args) for name, args in pairs])


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_a_tool_loop_runs_to_its_reply_through_the_gateway_with_every_call_traced(
    tmp_path: Path,
) -> None:
    script = [
        calls(("lookup_order", {"order_id": "A1"})),
        calls(("book_visit", {"order_id": "A1", "slot": "am"})),
        FakeReply("Booked: order A1, morning.", input_tokens=100, output_tokens=10),
    ]
    ran = await run(tmp_path, script)  # no gateway=True: a model agent's run starts it

    assert ran.record.verdict == "PASS", ran.record.reason
    assert ran.record.response == "Booked: order A1, morning."
    assert ran.record.final_state == {"booked": {"order_id": "A1", "slot": "am"}}
    first, second, third = ran.requests
    assert first["model"] == "main-v1"  # the gateway sends the pinned id of `main`
    assert first["messages"] == [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": "Book a morning visit for order A1"},
    ]
    assert [t["function"]["name"] for t in first["tools"]] == ["lookup_order", "book_visit"]
    assert json.loads(tool_messages(second)[0]) == {
        "status": "shipped",
        "address": "1 Rue de Rivoli",
    }
    assert json.loads(tool_messages(third)[1]) == {"booked": True, "slot": "am"}
    # The tool message answers the call it belongs to.
    asked = second["messages"][-2]["tool_calls"][0]["id"]
    assert second["messages"][-1]["tool_call_id"] == asked

    trace = ran.trace
    model_calls = trace.model_calls()
    assert [c.model for c in model_calls] == ["main-v1"] * 3  # recorded once, by the gateway
    assert (model_calls[2].input_tokens, model_calls[2].output_tokens) == (100, 10)
    assert model_calls[2].cost_usd == pytest.approx((100 * 1.0 + 10 * 2.0) / 1e6)
    tools = trace.tool_calls()
    assert [(t.name, t.success, t.arguments) for t in tools] == [
        ("lookup_order", True, {"order_id": "A1"}),
        ("book_visit", True, {"order_id": "A1", "slot": "am"}),
    ]
    assert tools[1].result == {"booked": True, "slot": "am"}
    described = ran.record.snapshot.agent if ran.record.snapshot else None
    assert described is not None and described["model"] == "main-v1"
    assert {"prompt_hash", "tool_schema_hash"} <= set(described)


async def test_a_tool_error_is_fed_back_and_the_model_repairs_its_call(tmp_path: Path) -> None:
    script = [
        calls(("lookup_order", {"order_id": "1"})),
        calls(("lookup_order", {"order_id": "A1"})),
        calls(("book_visit", {"order_id": "A1", "slot": "am"})),
        FakeReply("Booked."),
    ]
    ran = await run(tmp_path, script)

    assert ran.record.verdict == "PASS", ran.record.reason
    told = json.loads(tool_messages(ran.requests[1])[0])
    assert told["error_type"] == "invalid_arguments"
    assert "write `A` then digits" in told["error"]
    tools = ran.trace.tool_calls()
    assert [(t.name, t.success, t.error_type) for t in tools] == [
        ("lookup_order", False, "invalid_arguments"),
        ("lookup_order", True, None),
        ("book_visit", True, None),
    ]


async def test_malformed_arguments_and_an_unknown_tool_are_told_to_the_model(
    tmp_path: Path,
) -> None:
    script = [
        FakeReply(tool_calls=[FakeToolCall("lookup_order", '{"order_id": ')]),
        calls(("cancel_order", {"order_id": "A1"})),
        FakeReply("Sorry."),
    ]
    suite = (
        "suite: s\ncases:\n  - {id: c, input: hi, assertions: [{type: contains, value: Sorry}]}\n"
    )
    ran = await run(tmp_path, script, suite=suite)

    assert ran.record.verdict == "PASS", ran.record.reason
    bad_json = json.loads(tool_messages(ran.requests[1])[0])
    assert bad_json["error_type"] == "invalid_arguments"
    assert "not valid JSON" in bad_json["error"]
    unknown = json.loads(tool_messages(ran.requests[2])[1])
    assert (
        unknown["error"]
        == "there is no tool `cancel_order`; the tools are: lookup_order, book_visit"
    )
    assert [(t.name, t.error_type) for t in ran.trace.tool_calls()] == [
        ("lookup_order", "invalid_arguments"),
        ("cancel_order", "unknown_tool"),
    ]


@pytest.mark.parametrize(("max_turns", "verdict"), [(3, "PASS"), (2, "ERROR")])
async def test_max_turns_bounds_the_model_calls_for_one_user_message(
    tmp_path: Path, max_turns: int, verdict: str
) -> None:
    script = [
        calls(("lookup_order", {"order_id": "A1"})),
        calls(("book_visit", {"order_id": "A1", "slot": "am"})),
        FakeReply("Booked."),
    ]
    ran = await run(tmp_path, script, agent=BOOKER + f"    max_turns: {max_turns}\n")

    assert ran.record.verdict == verdict, ran.record.reason
    if verdict == "ERROR":
        assert ran.record.failure_type == "limit_exceeded"
        assert "after 2 model calls (max_turns: 2)" in (ran.record.error or ran.record.reason)
        assert len(ran.requests) == 2


async def test_each_user_turn_continues_the_same_conversation(tmp_path: Path) -> None:
    suite = """
    suite: s
    cases:
      - id: two-turns
        turns: [Hello, Where is order A1?]
        assertions: [{type: contains, value: shipped}]
    """
    script = [
        FakeReply("Hi! How can I help?"),
        calls(("lookup_order", {"order_id": "A1"})),
        FakeReply("It has shipped."),
    ]
    ran = await run(tmp_path, suite=suite, script=script)

    assert ran.record.verdict == "PASS", ran.record.reason
    assert ran.record.responses == ["Hi! How can I help?", "It has shipped."]
    roles = [m["role"] for m in ran.requests[1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]


async def test_a_sandbox_implementation_reads_the_cases_fixture(tmp_path: Path) -> None:
    (tmp_path / "fixture").mkdir()
    (tmp_path / "fixture" / "policy.txt").write_text("Refunds within 30 days.", encoding="utf-8")
    agent = """
    tools:
      - name: read_file
        parameters: {type: object, properties: {path: {type: string}}, required: [path]}
    implementations: {read_file: sandbox}
    """
    suite = """
    suite: s
    cases:
      - id: refunds
        input: How long do I have for a refund?
        fixture: fixture
        assertions:
          - {type: tool_called, expected: read_file}
          - {type: contains, value: 30 days}
    """
    script = [calls(("read_file", {"path": "policy.txt"})), FakeReply("You have 30 days.")]
    ran = await run(tmp_path, script, agent=agent, suite=suite)

    assert ran.record.verdict == "PASS", ran.record.reason
    assert tool_messages(ran.requests[1]) == ["Refunds within 30 days."]
    [call] = ran.trace.tool_calls()
    assert (call.name, call.success, call.result) == ("read_file", True, "Refunds within 30 days.")


OPENAPI = {
    "openapi": "3.0.0",
    "paths": {
        "/orders/{order_id}": {
            "get": {
                "operationId": "get_order",
                "summary": "Read an order",
                "parameters": [{"name": "order_id", "in": "path", "schema": {"type": "string"}}],
            }
        }
    },
}


@pytest.mark.parametrize("unrecorded", ["error", "fault"])
async def test_recorded_results_answer_recorded_arguments_and_unrecorded_ones_by_choice(
    tmp_path: Path, unrecorded: str
) -> None:
    (tmp_path / "openapi.json").write_text(json.dumps(OPENAPI), encoding="utf-8")
    (tmp_path / "orders.jsonl").write_text(
        json.dumps({"arguments": {"order_id": "A1"}, "result": {"status": "shipped"}}) + "\n",
        encoding="utf-8",
    )
    agent = f"""
    tools: openapi.json
    implementations: {{get_order: "recorded:orders.jsonl"}}
    unrecorded: {unrecorded}
    """
    suite = "suite: s\ncases:\n  - {id: c, input: Orders A1 and B2?, assertions: []}\n"
    script = [
        calls(("get_order", {"order_id": "A1"}), ("get_order", {"order_id": "B2"})),
        FakeReply("A1 shipped."),
    ]
    ran = await run(tmp_path, script, agent=agent, suite=suite)

    assert ran.record.verdict == "PASS", ran.record.reason
    [tool] = ran.requests[0]["tools"]
    assert tool["function"]["name"] == "get_order"
    assert tool["function"]["parameters"]["required"] == ["order_id"]
    hit, miss = tool_messages(ran.requests[1])
    assert json.loads(hit) == {"status": "shipped"}
    first, second = ran.trace.tool_calls()
    assert (first.success, first.result) == (True, {"status": "shipped"})
    if unrecorded == "error":
        told = json.loads(miss)
        assert told["error_type"] == "unrecorded_arguments"
        assert (
            '`get_order` has no recorded result for the arguments {"order_id":"B2"}'
            in (told["error"])
        )
        assert (second.success, second.error_type) == (False, "unrecorded_arguments")
    else:
        assert miss == ""
        assert (second.success, second.error_type) == (False, "empty")
        assert second.span.attributes["seatrial.fault"] == "empty"


async def test_a_rerun_of_a_model_agent_attempt_reproduces_from_the_cassette(
    tmp_path: Path,
) -> None:
    from seatrial import rerun_attempt_async

    script = [
        calls(("lookup_order", {"order_id": "A1"})),
        calls(("book_visit", {"order_id": "A1", "slot": "am"})),
        FakeReply("Booked."),
    ]
    ran = await run(tmp_path, script, cassette=True)
    assert ran.record.verdict == "PASS", ran.record.reason
    with Store.open(f"sqlite:///{tmp_path / 'store.db'}") as store:
        again = await rerun_attempt_async(
            store, f"{ran.done.run_id}:book", config=load_config(tmp_path)
        )
    assert again.mode == "cassette"
    assert again.replayed.verdict == "PASS"
    assert again.reproduced, again.diff.to_dict()


# -- bad configuration: exit 2, naming seatrial.yaml, the line and the fix -------------------


async def expect_refused(root: Path, agent: str, spec: str = "booker") -> AgentSpecError:
    with pytest.raises(AgentSpecError) as caught:
        await run(root, "never asked", agent=agent, spec=spec)
    assert caught.value.exit_code == 2
    assert not (root / "store.db").exists()  # refused before anything was stored
    return caught.value


async def test_an_unknown_model_is_refused_naming_seatrial_yaml_and_the_fix(
    tmp_path: Path,
) -> None:
    error = await expect_refused(tmp_path, BOOKER, spec="model:mian")
    assert "no model `mian` under `models:` in seatrial.yaml (known: main)" in str(error)
    assert "Did you mean `model:main`?" in str(error)


async def test_a_named_agent_with_an_unknown_model_points_at_its_line(tmp_path: Path) -> None:
    async with FakeOpenAI() as upstream:
        write_project(tmp_path, upstream.base_url, BOOKER, BOOKING_SUITE)
    text = (tmp_path / "seatrial.yaml").read_text(encoding="utf-8")
    (tmp_path / "seatrial.yaml").write_text(text.replace("model:main", "model:gpt"), "utf-8")
    with pytest.raises(AgentSpecError) as caught:
        await execute_suite_async(
            tmp_path / "suite.yaml", "booker", config=load_config(tmp_path), db="sqlite://"
        )
    assert f"{tmp_path / 'seatrial.yaml'}:8 (agent `booker`): no model `gpt`" in str(caught.value)


async def test_an_unknown_implementation_kind_is_refused(tmp_path: Path) -> None:
    agent = BOOKER.replace(f"python:{TOOLS_PY}:book_visit", "lambda:book")
    error = await expect_refused(tmp_path, agent)
    assert f"{tmp_path / 'seatrial.yaml'}:8 (agent `booker`)" in str(error)
    assert "`book_visit: lambda:book` is not an implementation; write one of: python:" in str(error)


async def test_a_tool_without_an_implementation_is_refused(tmp_path: Path) -> None:
    agent = "\n".join(line for line in BOOKER.splitlines() if "book_visit:" not in line)
    error = await expect_refused(tmp_path, agent)
    assert "tool book_visit has no implementation; add `implementations: {book_visit:" in str(error)


async def test_an_implementation_for_no_tool_and_a_missing_function_are_refused(
    tmp_path: Path,
) -> None:
    agent = BOOKER + f"      cancel_order: python:{TOOLS_PY}:cancel_order\n"
    error = await expect_refused(tmp_path, agent)
    assert "`implementations` names cancel_order, which is not among the tools" in str(error)
    agent = BOOKER.replace(":book_visit\n", ":book\n")
    error = await expect_refused(tmp_path, agent)
    assert "`book` is not defined in" in str(error)


async def test_model_agent_keys_on_another_kind_of_agent_are_refused(tmp_path: Path) -> None:
    async with FakeOpenAI() as upstream:
        write_project(tmp_path, upstream.base_url, BOOKER, BOOKING_SUITE)
    text = (tmp_path / "seatrial.yaml").read_text(encoding="utf-8")
    text = text.replace("model:main", "http://127.0.0.1:9/chat")
    (tmp_path / "seatrial.yaml").write_text(text, "utf-8")
    with pytest.raises(AgentSpecError) as caught:
        await execute_suite_async(
            tmp_path / "suite.yaml", "booker", config=load_config(tmp_path), db="sqlite://"
        )
    assert "system_prompt, tools, implementations apply to `model:NAME` agents only" in str(
        caught.value
    )


async def test_the_permission_policy_decides_a_model_agents_tool_calls(tmp_path: Path) -> None:
    agent = f"""
    tools:
      - {{name: forecast, parameters: {{type: object, properties: {{city: {{type: string}}}}}}}}
      - {json.dumps(SCHEMAS[1])}
    implementations:
      forecast: python:{TOOLS_PY}:forecast
      book_visit: python:{TOOLS_PY}:book_visit
    """
    suite = """
    suite: s
    cases:
      - id: production
        env: production
        input: Weather in Paris, then book A1 in the morning
        assertions: [{type: permissions_respected}]
    """
    script = [
        calls(("forecast", {"city": "Paris"}), ("book_visit", {"order_id": "A1", "slot": "am"})),
        FakeReply("It is sunny; I may not book in production."),
    ]
    ran = await run(tmp_path, script, agent=agent, suite=suite)

    weather, refused = tool_messages(ran.requests[1])
    assert weather == "sunny in Paris"  # read-only: allowed in production
    assert json.loads(refused)["error_type"] == "permission_denied"
    assert ran.record.final_state is None  # the refused call never ran
    assert [(t.name, t.success) for t in ran.trace.tool_calls()] == [
        ("forecast", True),
        ("book_visit", False),
    ]
    assert ran.record.verdict == "FAIL"  # it tried a write in production


async def test_a_run_with_several_workers_is_not_kept_in_one_process_by_the_gateway(
    tmp_path: Path,
) -> None:
    # The model agent calls its gateway in process: nothing pins the run (issue 22; it used
    # to go through a proxy on this process's loop, and --workers was ignored with a warning).
    # tests/examples/test_booking_unchanged.py runs the example with two workers.
    notices: list[tuple[str, str]] = []
    script = [
        calls(("lookup_order", {"order_id": "A1"})),
        calls(("book_visit", {"order_id": "A1", "slot": "am"})),
        FakeReply("Booked."),
    ]
    ran = await run(tmp_path, script, options=RunOptions(workers=2), notices=notices)

    assert ran.record.verdict == "PASS", ran.record.reason
    assert not any("--workers" in text for _, text in notices), notices


TWO_ANSWERS_SUITE = """
suite: answers
cases:
  - {id: first, input: Book order A1, assertions: [{type: contains, value: Booked}]}
  - {id: second, input: Book order A2, assertions: [{type: contains, value: Booked}]}
"""


async def test_workers_each_with_a_gateway_of_their_own_are_told_rate_limits_hold_per_worker(
    tmp_path: Path,
) -> None:
    notices: list[tuple[str, str]] = []
    async with FakeOpenAI("Booked.") as upstream:
        write_project(tmp_path, upstream.base_url, BOOKER, TWO_ANSWERS_SUITE)
        yaml_file = tmp_path / "seatrial.yaml"
        text = yaml_file.read_text(encoding="utf-8").replace(
            "    price:", "    rpm: 600\n    price:"
        )
        yaml_file.write_text(text, encoding="utf-8")
        done = await execute_suite_async(
            tmp_path / "suite.yaml",
            "booker",
            config=load_config(tmp_path),
            db=f"sqlite:///{tmp_path / 'store.db'}",
            write_report_files=False,
            options=RunOptions(workers=2),
            on_notice=lambda *notice: notices.append(notice),
        )
        asked = len(upstream.requests)

    assert {case.case_id: case.verdict for case in done.report.cases} == {
        "first": "PASS",
        "second": "PASS",
    }
    assert asked == 2
    [note] = [text for level, text in notices if "hold per worker" in text]
    assert "rate limits (rpm/tpm)" in note and "gateway.redis_url" in note, notices


async def test_a_call_past_the_runs_budget_ends_the_attempt_naming_the_budget(
    tmp_path: Path,
) -> None:
    script = [calls(("lookup_order", {"order_id": "A1"})), FakeReply("Booked.")]
    async with FakeOpenAI(script) as upstream:
        write_project(tmp_path, upstream.base_url, BOOKER, BOOKING_SUITE)
        with (tmp_path / "seatrial.yaml").open("a", encoding="utf-8") as file:
            file.write("gateway: {budgets: {run_usd: 0.000001}}\n")
        done = await execute_suite_async(
            tmp_path / "suite.yaml",
            "booker",
            config=load_config(tmp_path),
            db=f"sqlite:///{tmp_path / 'store.db'}",
            write_report_files=False,
        )
        asked = len(upstream.requests)

    # The first call spent past the budget; the gateway refused the second before sending it,
    # and the agent's error says so, with the type the proxy would have answered.
    assert asked == 1
    [case] = done.report.cases
    [attempt] = case.attempts
    assert (attempt.verdict, attempt.failure_type) == ("ERROR", "agent_error")
    assert "budget_exceeded" in attempt.reason and "run_usd" in attempt.reason, attempt.reason
