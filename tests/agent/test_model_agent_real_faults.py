"""``model:`` agents against a server that answers as real small models did on llama.cpp.

Qwen2.5-Coder 0.5B/1.5B and SmolLM2-135M on llama.cpp's server wrote tool calls the server
could not parse (HTTP 500 "... does not match the expected ... format"), wrote tool calls as
text in their reply, and sent arguments outside a tool's schema. Each is the model's failure,
recorded as such, never a harness ERROR, a retried deterministic request or a Python
TypeError.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seatrial.testing import UNPARSABLE_TOOL_CALL, FakeReply
from tests.agent.test_model_agent import BOOKER, KEY_ENV, calls, run, tool_messages

DETERMINISTIC = BOOKER + "    temperature: 0\n    seed: 42\n"
ANSWER_SUITE = """
suite: s
cases:
  - id: c
    input: What is the status of order A1?
    assertions: [{type: contains, value: A1}]
"""
BOOKING = {"order_id": "A1", "slot": "am"}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-model-agent")


async def test_a_tool_call_its_server_cannot_parse_fails_the_attempt_once_unretried(
    tmp_path: Path,
) -> None:
    ran = await run(
        tmp_path, FakeReply(status=500, error=UNPARSABLE_TOOL_CALL), agent=DETERMINISTIC
    )

    # The model's failure: FAIL with its own type, not ERROR agent_error (a crash).
    assert (ran.record.verdict, ran.record.failure_type) == (
        "FAIL",
        "malformed_tool_call",
    ), ran.record.reason
    assert "could not parse" in ran.record.reason
    assert "does not match the expected peg-native format" in ran.record.reason
    # A seeded temperature-0 request gets the same output again: sent once, not three times.
    assert len(ran.requests) == 1
    [failed] = ran.trace.tool_calls()
    assert (failed.success, failed.error_type) == (False, "malformed_tool_call")


async def test_a_plain_server_error_is_still_retried_and_the_answer_then_counts(
    tmp_path: Path,
) -> None:
    script = [
        FakeReply(status=500, error="slot unavailable, try again"),
        calls(("book_visit", BOOKING)),
        FakeReply("Booked A1."),
    ]
    ran = await run(tmp_path, script, agent=DETERMINISTIC)

    assert ran.record.verdict == "PASS", ran.record.reason
    assert len(ran.requests) == 3  # the transient 500 retried once by the gateway


@pytest.mark.parametrize(
    "reply",
    [
        '{"name": "book_visit", "arguments": {"order_id": "A1", "slot": "am"}}',
        'Booking now:\n```json\n{"name": "book_visit", "arguments": {"order_id": "A1", '
        '"slot": "am"}}\n```',
        '<tool_call>\n{"name": "book_visit", "arguments": {"order_id": "A1", "slot": "am"}}\n'
        "</tool_call>",
    ],
    ids=["bare", "fenced", "tagged"],
)
async def test_a_tool_call_written_as_text_is_a_failed_call_not_the_answer(
    tmp_path: Path, reply: str
) -> None:
    ran = await run(tmp_path, reply)

    assert (ran.record.verdict, ran.record.failure_type) == ("FAIL", "malformed_tool_call")
    assert "`book_visit` as text" in ran.record.reason
    assert ran.record.final_state is None  # the tool never ran
    [failed] = ran.trace.tool_calls()
    assert (failed.name, failed.success, failed.error_type) == (
        "book_visit",
        False,
        "malformed_tool_call",
    )
    assert failed.arguments == BOOKING
    assert len(ran.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        '{"order_id": "A1", "status": "shipped"}',
        '```json\n{"name": "lookup_orders", "arguments": {"order_id": "A1"}}\n```',
        'Order A1: {"name": "张三", "arguments": {}}',
    ],
    ids=["a-record", "a-tool-it-does-not-have", "json-in-prose"],
)
async def test_json_that_is_no_call_of_the_agents_tools_stays_the_answer(
    tmp_path: Path, reply: str
) -> None:
    ran = await run(tmp_path, reply, suite=ANSWER_SUITE)

    assert ran.record.verdict == "PASS", ran.record.reason
    assert ran.record.response == reply
    assert ran.trace.tool_calls() == []


@pytest.mark.parametrize(
    ("arguments", "told"),
    [
        ({**BOOKING, "amount": 5}, "unexpected argument `amount`"),
        ({"order_id": "A1"}, "missing required argument `slot`"),
        ({"order_id": "A1", "slot": "noon"}, '`slot`: "noon" is not an allowed value'),
    ],
    ids=["extra", "missing", "bad-enum"],
)
async def test_arguments_outside_the_schema_are_told_to_the_model_before_the_tool_runs(
    tmp_path: Path, arguments: dict[str, object], told: str
) -> None:
    script = [
        calls(("book_visit", arguments)),
        calls(("book_visit", BOOKING)),
        FakeReply("Booked A1."),
    ]
    ran = await run(tmp_path, script)

    assert ran.record.verdict == "PASS", ran.record.reason
    error = json.loads(tool_messages(ran.requests[1])[0])
    assert error["error_type"] == "invalid_arguments"
    assert told in error["error"]
    # The message names what the tool takes, so the model can repair its call.
    assert '`order_id` (string, required), `slot` (one of "am", "pm", required)' in error["error"]
    assert "TypeError" not in error["error"]
    assert [(t.name, t.success, t.error_type) for t in ran.trace.tool_calls()] == [
        ("book_visit", False, "invalid_arguments"),
        ("book_visit", True, None),
    ]
