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

from seatrial.config import load_config
from seatrial.run import RunOptions
from seatrial.store import Store
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


# -- a timed-out attempt (a slow local model past the attempt's deadline) --------------------


@pytest.mark.slow
async def test_a_timed_out_attempt_prints_no_traceback_and_its_rerun_times_out_again(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    from seatrial import rerun_attempt_async

    # The answer would arrive long after the attempt's deadline, as a 2-core CPU model's did
    # (the deadline leaves the agent ample time to send its call, in the rerun too).
    late = FakeReply("Booked A1.", delay_s=60)
    ran = await run(
        tmp_path, late, suite=ANSWER_SUITE, cassette=True, options=RunOptions(timeout_s=4)
    )
    assert (ran.record.verdict, ran.record.failure_type) == ("ERROR", "timeout")
    printed = capfd.readouterr().err + caplog.text
    assert "Traceback" not in printed and "CancelledError" not in printed, printed

    # The cassette keeps nothing that came after the deadline, only that the call was cut
    # off: the rerun times out again instead of turning to PASS.
    [cassette] = (tmp_path / ".seatrial" / "cassettes").glob("*.jsonl")
    [line] = [json.loads(t) for t in cassette.read_text(encoding="utf-8").splitlines()]
    assert line["response"] is None and line["cut_off_after_s"] > 0
    with Store.open(f"sqlite:///{tmp_path / 'store.db'}") as store:
        again = await rerun_attempt_async(
            store, f"{ran.done.run_id}:c", config=load_config(tmp_path)
        )
    assert (again.replayed.verdict, again.replayed.failure_type) == ("ERROR", "timeout")
    assert again.reproduced, again.diff.to_dict()
    printed = capfd.readouterr().err + caplog.text
    assert "Traceback" not in printed and "CancelledError" not in printed, printed
