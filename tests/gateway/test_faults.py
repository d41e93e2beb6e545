"""Fault injection: latency, timeouts, HTTP 429 / 500, empty answers, malformed tool calls."""

from __future__ import annotations

import asyncio
import json

import pytest

from seatrial.errors import ProviderError
from seatrial.gateway._config import FaultSpec, GatewayConfig
from seatrial.gateway._faults import FaultInjector, malformed
from seatrial.gateway._types import ChatRequest, ChatResponse, ChatToolCall, Message, Usage

LOOKUP_TOOL = {
    "type": "function",
    "function": {"name": "get_order", "parameters": {"type": "object", "properties": {}}},
}


def request(case: str = "refund", attempt: int = 1, **fields: object) -> ChatRequest:
    values: dict[str, object] = {
        "messages": [Message(role="user", content="Where is order #12345?")],
        "run_id": "run-1",
        "case_id": case,
        "attempt": attempt,
    }
    values.update(fields)
    return ChatRequest.model_validate(values)


def tool_answer() -> ChatResponse:
    return ChatResponse(
        message=Message(
            role="assistant",
            content=None,
            tool_calls=[
                ChatToolCall(id="call_1", name="get_order", arguments='{"order_id": "12345"}')
            ],
        ),
        usage=Usage(input_tokens=50, output_tokens=12),
        model="gpt4o",
        finish_reason="tool_calls",
    )


def test_a_fault_applies_only_to_its_model_case_and_call_number() -> None:
    spec = FaultSpec(kind="http_500", model="gpt4o", case_id="refund", call=2)
    faults = FaultInjector([spec])
    assert faults.pick(request(), "gpt4o", 2) == spec
    assert faults.pick(request(), "gpt4o", 1) is None
    assert faults.pick(request(), "claude", 2) is None
    assert faults.pick(request(case="cancel"), "gpt4o", 2) is None


def test_the_first_matching_fault_wins() -> None:
    specific = FaultSpec(kind="empty", case_id="refund")
    general = FaultSpec(kind="latency", latency_ms=5)
    faults = FaultInjector([specific, general])
    assert faults.pick(request(), "gpt4o", 1) == specific
    assert faults.pick(request(case="cancel"), "gpt4o", 1) == general


def test_probabilistic_faults_are_reproducible_with_the_seed_and_roughly_that_often() -> None:
    spec = FaultSpec(kind="http_429", probability=0.25)
    calls = [(request(case=f"c{i % 40}", attempt=i // 40 + 1), i % 3 + 1) for i in range(1200)]

    def picks(seed: int) -> list[bool]:
        faults = FaultInjector([spec], seed=seed)
        return [faults.pick(r, "gpt4o", n) is not None for r, n in calls]

    first = picks(seed=7)
    assert first == picks(seed=7)
    assert first != picks(seed=8)
    assert 0.18 < sum(first) / len(first) < 0.32
    assert all(
        FaultInjector([spec.model_copy(update={"probability": 1.0})]).pick(r, "m", n)
        for r, n in calls[:50]
    )
    assert not any(
        FaultInjector([spec.model_copy(update={"probability": 0.0})]).pick(r, "m", n)
        for r, n in calls[:50]
    )


def test_the_same_call_gets_the_same_fault_however_attempts_interleave() -> None:
    spec = FaultSpec(kind="timeout", probability=0.5)
    forward, backward = FaultInjector([spec], seed=3), FaultInjector([spec], seed=3)
    order = [(request(attempt=a), n) for a in range(1, 6) for n in range(1, 6)]
    got = {(r.attempt, n): forward.pick(r, "m", n) for r, n in order}
    assert got == {(r.attempt, n): backward.pick(r, "m", n) for r, n in reversed(order)}


def test_calls_are_numbered_per_attempt_from_one() -> None:
    faults = FaultInjector([])
    assert [faults.call_number(request(attempt=1)) for _ in range(3)] == [1, 2, 3]
    assert faults.call_number(request(attempt=2)) == 1
    assert faults.call_number(request(case="cancel")) == 1
    assert not faults.active


@pytest.mark.parametrize(
    ("kind", "error_kind", "status"),
    [("http_429", "rate_limited", 429), ("http_500", "server_error", 500)],
)
async def test_http_faults_fail_the_call_as_a_retryable_provider_error(
    kind: str, error_kind: str, status: int
) -> None:
    with pytest.raises(ProviderError) as failed:
        await FaultInjector([]).before_call(FaultSpec.model_validate({"kind": kind}))
    assert failed.value.kind == error_kind
    assert failed.value.status == status
    assert failed.value.retryable is True
    assert "injected fault" in str(failed.value) and f"HTTP {status}" in str(failed.value)


async def test_a_timeout_fault_hangs_then_fails_as_a_timed_out_call() -> None:
    hung = asyncio.Event()

    async def watch() -> None:
        await asyncio.sleep(0)
        hung.set()

    watcher = asyncio.create_task(watch())
    with pytest.raises(ProviderError) as failed:
        await FaultInjector([]).before_call(FaultSpec(kind="timeout", latency_ms=20))
    await watcher
    assert hung.is_set()  # the fault yielded to the loop while it hung
    assert failed.value.kind == "timeout" and failed.value.retryable is True
    assert "20 ms" in str(failed.value)


async def test_a_latency_fault_delays_and_then_lets_the_call_go_ahead() -> None:
    faults = FaultInjector([])
    ticks = 0

    async def count() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    counter = asyncio.create_task(count())
    await faults.before_call(FaultSpec(kind="latency", latency_ms=15))
    counter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await counter
    assert ticks > 1
    answer = faults.after_call(FaultSpec(kind="latency", latency_ms=15), tool_answer())
    assert answer.message == tool_answer().message
    assert answer.fault == "latency"


def test_an_empty_fault_leaves_no_text_and_no_tool_calls() -> None:
    answer = FaultInjector([]).after_call(FaultSpec(kind="empty"), tool_answer())
    assert answer.message.content == ""
    assert answer.tool_calls == []
    assert answer.finish_reason == "stop"
    assert answer.fault == "empty"
    assert answer.usage == tool_answer().usage


def test_a_malformed_tool_call_fault_breaks_the_arguments_json() -> None:
    answer = FaultInjector([]).after_call(FaultSpec(kind="malformed_tool_call"), tool_answer())
    [call] = answer.tool_calls
    assert call.name == "get_order" and call.id == "call_1"
    assert call.arguments.startswith('{"order_id": "12345"')
    with pytest.raises(json.JSONDecodeError):
        json.loads(call.arguments)
    assert answer.fault == "malformed_tool_call"


def test_a_malformed_tool_call_fault_on_a_text_answer_adds_a_broken_call() -> None:
    text = ChatResponse(message=Message(role="assistant", content="It ships today."), model="m")
    answer = FaultInjector([]).after_call(
        FaultSpec(kind="malformed_tool_call"), text, request(tools=[LOOKUP_TOOL])
    )
    [call] = answer.tool_calls
    assert call.name == "get_order"
    assert answer.finish_reason == "tool_calls"
    with pytest.raises(json.JSONDecodeError):
        json.loads(call.arguments)


@pytest.mark.parametrize("arguments", ['{"a": 1}', "{}", "", "}", "[1, 2]", "12", "not json"])
def test_malformed_arguments_never_parse(arguments: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads(malformed(arguments))


def test_faults_come_from_the_gateway_section_of_the_config() -> None:
    config = GatewayConfig.model_validate(
        {
            "faults": [{"kind": "http_429", "call": 1}, {"kind": "empty", "probability": 0.5}],
            "fault_seed": 11,
        }
    )
    faults = FaultInjector(config.faults, seed=config.fault_seed)
    assert faults.active
    picked = faults.pick(request(), "gpt4o", 1)
    assert picked is not None and picked.kind == "http_429"
