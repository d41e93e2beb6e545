"""Cases from production traces: the user's turns, recorded tool results, and assertions
proposed from what happened, each marked to keep or drop; the written file loads as a suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seatrial.case import load_suite
from seatrial.dataset import Proposal, ProposedCase, case_from_trace, write_case_file
from seatrial.errors import InputError
from seatrial.trace import (
    Span,
    Trace,
    normalize_trace,
    trace_from_tools_called,
    traces_from_otlp,
)
from seatrial.trace import attrs as A
from tests.dataset._production_traces import agent, chat, export, tool

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def proposals(proposed: ProposedCase) -> dict[str, Proposal]:
    return {p.id: p for p in proposed.proposals}


def tools_trace(calls: list[dict[str, Any]], messages: list[str] | None = None) -> Trace:
    return trace_from_tools_called(calls, messages=messages or ["帮我查订单 ORD20240701"])


def test_the_user_turns_and_tool_results_come_from_the_trace() -> None:
    trace = tools_trace(
        [{"name": "search_order", "input": {"order_id": "ORD20240701"}, "output": []}],
        messages=["帮我查订单 ORD20240701", "还是查不到吗"],
    )

    proposed = case_from_trace(trace)

    assert proposed.case.turns[0].content == "帮我查订单 ORD20240701"
    assert proposed.case.user_turns == ["帮我查订单 ORD20240701", "还是查不到吗"]
    assert proposed.case.kind == "multi_turn"
    [recorded] = proposed.case.metadata["recorded_tool_results"]
    assert recorded["tool"] == "search_order" and recorded["result"] == []
    assert proposed.case.metadata["trace_id"] == trace.trace_id
    assert proposed.case.source == "replay"


def test_genai_input_messages_give_each_user_message_once() -> None:
    spans = [
        chat(TRACE_ID, "c1", 10, "第一句"),
        tool(TRACE_ID, "b1", 300, "lookup", {"order_id": "A12345678"}, {"ok": True}),
    ]
    second = chat(TRACE_ID, "c2", 400, "第二句")
    messages = json.loads(second["attributes"][-1]["value"]["stringValue"])
    messages.insert(1, {"role": "user", "parts": [{"type": "text", "content": "第一句"}]})
    second["attributes"][-1]["value"]["stringValue"] = json.dumps(messages)
    [trace] = traces_from_otlp(export(agent(TRACE_ID, [*spans, second])))

    assert case_from_trace(trace).case.user_turns == ["第一句", "第二句"]


def test_openinference_input_value_on_the_agent_span_is_the_user_turn() -> None:
    root = Span(
        trace_id=TRACE_ID,
        span_id="a1",
        name="agent",
        start_time_unix_nano=1,
        end_time_unix_nano=2,
        attributes={"openinference.span.kind": "AGENT", "input.value": "退订单 ORD20240701"},
    )
    assert case_from_trace(Trace(trace_id=TRACE_ID, spans=[root])).case.input == (
        "退订单 ORD20240701"
    )


def test_a_trace_without_a_user_message_cannot_become_a_case() -> None:
    with pytest.raises(InputError, match="records no user message"):
        case_from_trace(trace_from_tools_called([{"name": "ping"}]))


def test_tools_called_and_their_key_arguments_are_proposed_ids_not_free_text() -> None:
    trace = tools_trace(
        [
            {
                "name": "search_order",
                "input": {"order_id": "ORD20240701", "note": "user is upset, call back later"},
                "output": {"tracking_no": "SF773012345678"},
            },
            {
                "name": "notify",
                "input": {"tracking_no": "SF773012345678", "phone": "<PHONE_1>", "urgent": True},
            },
        ],
        messages=["订单 ORD20240701 到哪了？电话 <PHONE_1>"],
    )

    found = proposals(case_from_trace(trace))

    assert found["called-tools"].assertion["expected"] == ["search_order", "notify"]
    assert found["called-tools"].keep
    said = found["params:search_order"]
    assert said.keep and said.assertion["expected"] == {"order_id": "ORD20240701"}
    assert found["params:notify"].assertion["expected"] == {"phone": "<PHONE_1>"}
    supplied = found["params:notify:recorded"]
    assert not supplied.keep and supplied.assertion["expected"] == {"tracking_no": "SF773012345678"}
    assert not found["tool-order"].keep


def test_a_failing_call_repeated_with_the_same_arguments_proposes_no_loop() -> None:
    read = {"name": "read_file", "input": {"path": "config.yaml"}, "success": False}
    proposed = case_from_trace(tools_trace([read, read, read]))
    found = proposals(proposed)

    assert found["no-loop"].keep and "failed 3 times" in found["no-loop"].why
    # The loop's repeats are not counted into the limit: one call, plus the margin.
    assert found["observed-limits"].assertion["tool_calls"] == 3
    assert not found["tools-succeed"].keep
    assert "no-loop" in {spec.id for spec in proposed.case.assertions}


def test_failures_with_different_arguments_or_a_repaired_call_are_no_loop() -> None:
    different = [
        {"name": "read_file", "input": {"path": "a.yaml"}, "success": False},
        {"name": "read_file", "input": {"path": "b.yaml"}, "success": False},
    ]
    repaired = [
        {"name": "read_file", "input": {"path": "a.yaml"}, "success": False},
        {"name": "read_file", "input": {"path": "config/a.yaml"}},
    ]
    assert "no-loop" not in proposals(case_from_trace(tools_trace(different)))
    found = proposals(case_from_trace(tools_trace(repaired)))
    assert "no-loop" not in found and "tools-succeed" not in found


def test_a_refused_permission_proposes_that_it_is_respected_and_never_tried() -> None:
    trace = tools_trace(
        [
            {"name": "search_order", "input": {"order_id": "ORD20240701"}},
            {
                "name": "refund",
                "input": {"order_id": "ORD20240701"},
                "permission": {"scope": "once", "decision": "denied"},
                "success": False,
                "error_type": "permission_denied",
            },
        ]
    )
    found = proposals(case_from_trace(trace))

    assert found["permissions"].keep
    assert found["not-called:denied"].assertion["expected"] == ["refund"]
    assert "no-loop" not in found and "tools-succeed" not in found


def test_a_denied_tool_that_was_also_allowed_is_not_proposed_as_never_called() -> None:
    write = {"name": "write_file", "input": {"path": "a.txt"}}
    denied = {**write, "success": False, "error_type": "permission_denied"}
    found = proposals(case_from_trace(tools_trace([write, denied])))
    assert "permissions" in found and "not-called:denied" not in found


def test_limits_come_from_the_observed_counts_with_a_margin() -> None:
    calls = [{"name": f"step_{n}", "input": {}} for n in range(6)]
    trace = tools_trace(calls)
    for n in range(4):
        trace.spans.append(
            Span(
                trace_id=trace.trace_id,
                span_id=f"m{n}",
                name="chat gpt-4o",
                start_time_unix_nano=n,
                attributes={A.OPERATION: A.OP_CHAT, A.INPUT_TOKENS: 100, A.OUTPUT_TOKENS: 10},
            )
        )
    found = proposals(case_from_trace(trace))

    limits = found["observed-limits"].assertion
    assert (limits["tool_calls"], limits["model_calls"]) == (9, 6)
    assert found["observed-limits"].keep
    assert found["observed-tokens"].assertion["tokens"] == 880
    assert not found["observed-tokens"].keep


def test_the_written_file_loads_with_kept_assertions_on_and_the_others_commented(
    tmp_path: Path,
) -> None:
    read = {"name": "read_file", "input": {"path": "x"}, "success": False}
    trace = tools_trace(
        [{"name": "search_order", "input": {"order_id": "ORD20240701"}}, read, read]
    )
    proposed = case_from_trace(trace, case_id="loop-1")

    path = write_case_file(proposed, tmp_path / "loop.yaml")

    suite = load_suite(path)
    [case] = suite.cases
    assert case.id == "loop-1"
    kept = [p.id for p in proposed.proposals if p.keep]
    assert [spec.id for spec in case.assertions] == kept
    assert [item["id"] for item in case.metadata["proposed"]] == [p.id for p in proposed.proposals]
    text = path.read_text("utf-8")
    for proposal in proposed.proposals:
        if proposal.keep:
            assert f"# proposed: {proposal.why} — keep or delete this line block" in text
        else:
            assert f"#   id: {proposal.id}" in text  # written, commented out
    with pytest.raises(InputError, match="--force"):
        write_case_file(proposed, path)
    write_case_file(proposed, path, overwrite=True)


def test_a_trace_with_no_successful_tool_writes_a_case_that_still_loads(tmp_path: Path) -> None:
    proposed = case_from_trace(tools_trace([]))
    assert proposed.proposals == []
    path = write_case_file(proposed, tmp_path / "quiet.yaml")
    assert load_suite(path).cases[0].assertions == []


def _root() -> Span:
    return Span(
        trace_id=TRACE_ID,
        span_id="a" * 16,
        name="conversation",
        start_time_unix_nano=0,
        end_time_unix_nano=100,
    )


def _span(span_id: str, start: int, attributes: dict[str, Any], parent: str = "a" * 16) -> Span:
    return Span(
        trace_id=TRACE_ID,
        span_id=span_id,
        parent_span_id=parent,
        name="ChatCompletion",
        start_time_unix_nano=start,
        end_time_unix_nano=start + 5,
        attributes=attributes,
    )


def _openinference_inputs(*messages: tuple[str, str]) -> dict[str, Any]:
    attributes: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o"}
    for index, (role, content) in enumerate(messages):
        attributes[f"llm.input_messages.{index}.message.role"] = role
        attributes[f"llm.input_messages.{index}.message.content"] = content
    return attributes


def _openllmetry_inputs(*messages: tuple[str, str]) -> dict[str, Any]:
    attributes: dict[str, Any] = {"llm.request.type": "chat", "gen_ai.request.model": "gpt-4o"}
    for index, (role, content) in enumerate(messages):
        attributes[f"gen_ai.prompt.{index}.role"] = role
        attributes[f"gen_ai.prompt.{index}.content"] = content
    return attributes


@pytest.mark.parametrize("spelling", [_openinference_inputs, _openllmetry_inputs])
def test_normalized_spans_give_each_user_turn_once_and_a_repeated_turn_twice(
    spelling: Any,
) -> None:
    # The user said "好的" twice, in turns 2 and 3: both are turns. Normalization writes
    # gen_ai.input.messages beside the source attributes; neither may be read twice.
    first = [("user", "退订单 ORD1"), ("assistant", "确定吗?")]
    second = [*first, ("user", "好的"), ("assistant", "要退到原卡吗?")]
    third = [*second, ("user", "好的")]
    trace = normalize_trace(
        Trace(
            trace_id=TRACE_ID,
            spans=[
                _root(),
                _span("1" * 16, 10, spelling(*first[:1])),
                _span("2" * 16, 20, spelling(*second[:3])),
                _span("3" * 16, 30, spelling(*third)),
            ],
        )
    )
    assert trace.spans[1].attributes[A.INPUT_MESSAGES]  # normalization did write it

    assert case_from_trace(trace).case.user_turns == ["退订单 ORD1", "好的", "好的"]


def test_a_single_span_whose_user_says_the_same_thing_twice_keeps_both() -> None:
    span = _span("1" * 16, 10, _openinference_inputs(("user", "在吗"), ("user", "在吗")))
    trace = normalize_trace(Trace(trace_id=TRACE_ID, spans=[_root(), span]))

    assert case_from_trace(trace).case.user_turns == ["在吗", "在吗"]


def test_openllmetry_indexed_tool_calls_are_proposed_and_their_results_recorded() -> None:
    asked = _openllmetry_inputs(("user", "查订单 ORD20240701"))
    asked |= {
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.finish_reason": "tool_calls",
        "gen_ai.completion.0.tool_calls.0.id": "call_9",
        "gen_ai.completion.0.tool_calls.0.name": "search_order",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"order_id": "ORD20240701"}',
    }
    answered = _openllmetry_inputs(("user", "查订单 ORD20240701"))
    answered |= {
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.tool_calls.0.id": "call_9",
        "gen_ai.prompt.1.tool_calls.0.name": "search_order",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"order_id": "ORD20240701"}',
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.tool_call_id": "call_9",
        "gen_ai.prompt.2.content": '{"status": "已发货"}',
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "已发货",
    }
    trace = normalize_trace(
        Trace(
            trace_id=TRACE_ID,
            spans=[_root(), _span("1" * 16, 10, asked), _span("2" * 16, 20, answered)],
        )
    )

    proposed = case_from_trace(trace)

    assert proposed.case.user_turns == ["查订单 ORD20240701"]
    assert proposals(proposed)["called-tools"].assertion["expected"] == ["search_order"]
    assert proposed.case.metadata["recorded_tool_results"] == [
        {
            "tool": "search_order",
            "arguments": {"order_id": "ORD20240701"},
            "success": True,
            "result": {"status": "已发货"},
        }
    ]
