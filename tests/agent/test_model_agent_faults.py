"""Injected tool faults with a ``model:`` agent, through the gateway to a scripted model: what
the model is told, and how repairs_within and no_identical_retry judge what it did next."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from seatrial._execute import execute_suite_async
from seatrial.config import load_config
from seatrial.errors import ConfigError
from seatrial.store import Store
from seatrial.testing import FakeOpenAI, FakeReply, FakeToolCall

KEY_ENV = "SEATRIAL_TEST_FAULT_AGENT_KEY"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "book_visit",
            "description": "Book a cleaning visit.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "description": "the order"},
                    "slot": {"type": "string", "enum": ["am", "pm"]},
                },
                "required": ["order_id", "slot"],
            },
        },
    }
]
SUITE = """
suite: faults
cases:
  - id: book
    input: Book a morning visit for order A1
    tool_faults:
      - {{tool: book_visit, fault: {fault}, at_call: 1}}
    assertions:
      - {{type: repairs_within, turns: 1}}
      - {{type: no_identical_retry}}
"""


def book(**arguments: Any) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall("book_visit", arguments)])


PLAIN = "def book_visit(order_id, slot):\n    return {'booked': order_id, 'slot': slot}\n"


async def run(
    root: Path,
    script: list[FakeReply],
    fault: str,
    agent: str = "booker",
    tools_py: str = PLAIN,
    name: str = "book_visit",
) -> Any:
    (root / "tools.json").write_text(json.dumps(TOOLS).replace("book_visit", name), "utf-8")
    (root / "tools.py").write_text(tools_py, encoding="utf-8")
    suite = textwrap.dedent(SUITE.format(fault=fault)).replace("book_visit", name)
    (root / "suite.yaml").write_text(suite, encoding="utf-8")
    async with FakeOpenAI(script) as upstream:
        (root / "seatrial.yaml").write_text(
            f"models:\n  main:\n    model: main-v1\n    base_url: {upstream.base_url}\n"
            f"    api_key_env: {KEY_ENV}\n"
            "agents:\n  booker:\n    spec: model:main\n    tools: tools.json\n"
            f"    implementations: {{{name}: 'python:{root / 'tools.py'}:{name}'}}\n"
            "  remote: http://127.0.0.1:9/chat\n",
            encoding="utf-8",
        )
        done = await execute_suite_async(
            root / "suite.yaml",
            agent,
            config=load_config(root),
            db=f"sqlite:///{root / 'store.db'}",
            write_report_files=False,
        )
        requests = [r.body for r in upstream.requests]
    with Store.open(f"sqlite:///{root / 'store.db'}") as store:
        [record] = store.attempts(done.run_id)
        trace = store.attempt_trace(done.run_id, "book", 1)
    return record, trace, requests


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-faults")


async def test_a_model_that_repairs_after_an_injected_500_passes(tmp_path):
    script = [
        book(order_id="A1", slot="am"),
        book(order_id="A1", slot="pm"),
        FakeReply("Booked for the afternoon."),
    ]
    record, trace, requests = await run(tmp_path, script, "http_500")
    assert record.verdict == "PASS", record.reason
    told = json.loads(requests[1]["messages"][-1]["content"])
    assert told["error_type"] == "http_500"
    assert "upstream service answered HTTP 500" in told["error"]
    calls = trace.tool_calls()
    assert [(c.success, c.span.attributes.get("seatrial.fault")) for c in calls] == [
        (False, "http_500"),
        (True, None),
    ]
    assert calls[1].result == {"booked": "A1", "slot": "pm"}


async def test_a_model_that_retries_the_identical_call_after_a_500_passes(tmp_path):
    script = [book(order_id="A1", slot="am"), book(order_id="A1", slot="am"), FakeReply("Done.")]
    record, _, _ = await run(tmp_path, script, "http_500")
    assert record.verdict == "PASS", record.reason


async def test_a_model_that_resends_the_refused_value_fails_both(tmp_path):
    script = [book(order_id="A1", slot="am"), book(order_id="A1", slot="am"), FakeReply("Done.")]
    record, _, _ = await run(tmp_path, script, "bad_enum")
    assert record.verdict == "FAIL"
    assert record.failure_type == "recovery"
    results = {r.type: r for r in record.assertions}
    assert results["repairs_within"].verdict == "fail"
    assert results["no_identical_retry"].reason == (
        "`book_visit` call 1 (injected bad_enum) failed and the next call repeated the identical "
        'arguments {"order_id": "A1", "slot": "am"}'
    )


async def test_missing_param_shows_the_model_its_call_without_the_parameter(tmp_path):
    # The model sent both required parameters; the fault takes order_id out, and the model's
    # conversation shows the call the tool received.
    obeyed = [book(order_id="A1", slot="am"), book(slot="am", order_id="A1"), FakeReply("ok")]
    (tmp_path / "obeys").mkdir()
    (tmp_path / "blind").mkdir()
    record, trace, requests = await run(tmp_path / "obeys", obeyed, "missing_param")
    assert record.verdict == "PASS", record.reason
    [assistant] = [m for m in requests[1]["messages"] if m["role"] == "assistant"]
    shown = json.loads(assistant["tool_calls"][0]["function"]["arguments"])
    assert shown == {"slot": "am"}
    told = json.loads(requests[1]["messages"][-1]["content"])["error"]
    assert told == (
        "invalid arguments for `book_visit`: missing required parameter `order_id` (string: "
        'the order); the tool received {"slot": "am"}; call `book_visit` again with `order_id` '
        "set"
    )
    assert trace.tool_calls()[0].arguments == {"slot": "am"}
    # Resending the call as the conversation shows it still lacks order_id: no repair.
    blind = [book(order_id="A1", slot="am"), book(slot="am"), FakeReply("Done.")]
    record, _, _ = await run(tmp_path / "blind", blind, "missing_param")
    results = {r.type: r.verdict for r in record.assertions}
    assert results == {"repairs_within": "fail", "no_identical_retry": "fail"}


async def test_the_model_is_told_the_schemas_parameter_and_allowed_values(tmp_path):
    script = [book(order_id="A1", slot="am"), FakeReply("Sorry, I could not book it.")]
    record, _, requests = await run(tmp_path, script, "bad_enum")
    told = json.loads(requests[1]["messages"][-1]["content"])
    assert told["error"] == (
        'invalid arguments for `book_visit`: "am" is not an allowed value of `slot`; allowed '
        'values: "pm"; call `book_visit` again with one of them'
    )
    assert record.verdict == "FAIL"
    assert record.reason.startswith("repairs_within: `book_visit` call 1 (injected bad_enum)")
    assert "`book_visit` was never called again" in record.reason


async def test_tool_faults_against_an_http_agent_stop_the_run_before_anything_runs(tmp_path):
    with pytest.raises(ConfigError, match="case book sets `tool_faults`, but agent") as raised:
        await run(tmp_path, [], "timeout", agent="remote")
    assert "an HTTP agent runs its own tools" in str(raised.value)
    assert raised.value.exit_code == 2


REGISTERED = """
import seatrial

@seatrial.tool(read_only=True)
def reserve_visit(order_id, slot, note=""):
    return {"booked": order_id, "slot": slot}
"""


async def test_an_identical_retry_of_a_registered_tool_with_defaults_reads_identical(tmp_path):
    script = [
        FakeReply(tool_calls=[FakeToolCall("reserve_visit", {"order_id": "A1", "slot": "am"})]),
        FakeReply(tool_calls=[FakeToolCall("reserve_visit", {"order_id": "A1", "slot": "am"})]),
        FakeReply("Done."),
    ]
    record, trace, _ = await run(
        tmp_path, script, "bad_enum", tools_py=REGISTERED, name="reserve_visit"
    )
    first, second = trace.tool_calls()
    assert first.arguments == second.arguments == {"order_id": "A1", "slot": "am", "note": ""}
    assert (first.success, second.success) == (False, True)
    results = {r.type: r.verdict for r in record.assertions}
    assert results == {"repairs_within": "fail", "no_identical_retry": "fail"}
