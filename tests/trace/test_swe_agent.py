"""SWE-agent trajectories (real .traj files from SWE-agent's repository) read as traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seatrial.trace import Trace, TraceFormatError, decode_attribute, read_trace_file
from seatrial.trace import attrs as A
from seatrial.trace._swe_agent import matches, read
from tests.conftest import bundled_data

CLASSIC = "swe-agent/gpt4_pydicom-1458.traj.json"
FUNCTION_CALLING = "swe-agent/marshmallow-1867.function_calling.traj.json"
HISTORY_ONLY = "swe-agent/function_calling_simple.traj.json"
PREDICTIONS = "swe-agent/gpt4_all_preds.jsonl"


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(bundled_data(name).read_text(encoding="utf-8"))
    return data


def _turns(trace: Trace) -> list[str]:
    return [str(event.value(A.TURN_MESSAGE)) for _, event in trace.events(A.TURN)]


def _assistant_turns(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in document["history"] if m["role"] == "assistant" and not m.get("is_demo")]


def test_each_classic_step_is_a_tool_named_by_the_commands_first_word():
    document = _load(CLASSIC)
    (trace,) = read(document)
    steps = document["trajectory"]
    calls = trace.tool_calls()
    assert [c.name for c in calls] == [step["action"].split()[0] for step in steps]
    assert [c.arguments for c in calls] == [{"command": step["action"]} for step in steps]
    assert [c.span.attributes[A.TOOL_RESULT] for c in calls] == [s["observation"] for s in steps]
    assert {c.name for c in calls} >= {"create", "edit", "open", "python", "submit"}


def test_each_step_has_a_model_turn_carrying_its_thought():
    document = _load(CLASSIC)
    (trace,) = read(document)
    chats = trace.model_calls()
    assert len(chats) == len(document["trajectory"])
    said = decode_attribute(chats[0].span.attributes[A.OUTPUT_MESSAGES])
    assert said[0]["parts"][0] == {"type": "text", "content": document["trajectory"][0]["thought"]}
    assert said[0]["parts"][1]["type"] == "tool_call"


def test_the_issue_is_the_user_turn_and_demonstrations_are_left_out():
    document = _load(CLASSIC)
    (trace,) = read(document)
    first_real = next(
        m["content"] for m in document["history"] if m["role"] == "user" and not m.get("is_demo")
    )
    assert _turns(trace) == [first_real]
    assert "DEMONSTRATION" not in _turns(trace)[0]


def test_info_goes_on_the_root_with_tokens_and_cost():
    document = _load(CLASSIC)
    (trace,) = read(document)
    stats = document["info"]["model_stats"]
    root = trace.spans[0]
    assert root.operation == "invoke_agent" and root.status == "ok"
    assert root.attributes["swe_agent.exit_status"] == document["info"]["exit_status"]
    assert root.attributes["swe_agent.submission"] == document["info"]["submission"]
    assert root.attributes[A.INPUT_TOKENS] == stats["tokens_sent"]
    assert root.attributes[A.OUTPUT_TOKENS] == stats["tokens_received"]
    assert trace.cost_usd() == pytest.approx(stats["instance_cost"])
    assert decode_attribute(root.attributes["swe_agent.model_stats"]) == stats


def test_function_calling_steps_use_the_recorded_tool_calls():
    document = _load(FUNCTION_CALLING)
    (trace,) = read(document)
    recorded = [m["tool_calls"][0] for m in _assistant_turns(document)]
    calls = trace.tool_calls()
    assert [c.name for c in calls] == [r["function"]["name"] for r in recorded]
    assert [c.arguments for c in calls] == [
        json.loads(r["function"]["arguments"]) for r in recorded
    ]
    assert [c.span.attributes[A.TOOL_CALL_ID] for c in calls] == [r["id"] for r in recorded]
    observations = [step["observation"] for step in document["trajectory"]]
    assert [c.span.attributes[A.TOOL_RESULT] for c in calls] == observations
    assert {c.name for c in calls} >= {"bash", "edit", "submit"}


def test_function_calling_steps_take_their_recorded_duration_and_model():
    document = _load(FUNCTION_CALLING)
    (trace,) = read(document)
    durations = [call.span.duration_ms for call in trace.tool_calls()]
    expected = [float(step["execution_time"]) * 1000 for step in document["trajectory"]]
    assert durations == pytest.approx(expected, abs=0.001)
    model = document["replay_config"]["agent"]["model"]["name"]
    assert {call.model for call in trace.model_calls()} == {model}
    starts = [span.start_time_unix_nano for span in trace.spans]
    assert starts == sorted(starts)


def test_a_trajectory_with_history_only_is_read_from_its_messages():
    document = _load(HISTORY_ONLY)
    (trace,) = read(document)
    recorded = [m["tool_calls"][0] for m in _assistant_turns(document)]
    answers = {
        m["tool_call_ids"][0]: m["content"] for m in document["history"] if m["role"] == "tool"
    }
    calls = trace.tool_calls()
    assert [c.name for c in calls] == [r["function"]["name"] for r in recorded]
    assert [c.span.attributes[A.TOOL_RESULT] for c in calls] == [answers[r["id"]] for r in recorded]
    assert len(_turns(trace)) == 1 and _turns(trace)[0].startswith("We're currently solving")


def test_a_run_that_did_not_submit_is_an_error_trace():
    document = _load(CLASSIC)
    document["info"] = {**document["info"], "exit_status": "exit_cost"}
    root = read(document)[0].spans[0]
    assert (root.status, root.attributes[A.ERROR_TYPE]) == ("error", "exit_cost")
    document["info"]["exit_status"] = "submitted (exit_cost)"
    assert read(document)[0].spans[0].status == "ok"


def test_an_empty_command_is_a_model_turn_without_a_tool_call():
    document = _load(CLASSIC)
    document["trajectory"][0]["action"] = "  \n"
    (trace,) = read(document)
    assert len(trace.tool_calls()) == len(document["trajectory"]) - 1
    assert len(trace.model_calls()) == len(document["trajectory"])


def test_reading_the_same_file_twice_gives_the_same_trace_and_span_ids():
    once, again = read(_load(CLASSIC)), read(_load(CLASSIC))
    assert once[0].trace_id == again[0].trace_id
    assert [s.span_id for s in once[0].spans] == [s.span_id for s in again[0].spans]
    assert once[0].trace_id != read(_load(FUNCTION_CALLING))[0].trace_id


def test_trajectories_match_and_the_predictions_file_does_not():
    for name in (CLASSIC, FUNCTION_CALLING, HISTORY_ONLY):
        assert matches(_load(name))
    lines = bundled_data(PREDICTIONS).read_text(encoding="utf-8").splitlines()
    predictions = [json.loads(line) for line in lines if line.strip()]
    assert not matches(predictions)
    assert not matches({"messages": [{"role": "user", "content": "hi"}]})
    assert not matches({"history": [{"role": "user", "content": "hi"}]})


@pytest.mark.parametrize("name", [CLASSIC, FUNCTION_CALLING, HISTORY_ONLY])
def test_the_real_files_are_detected_through_read_trace_file(name):
    found = read_trace_file(bundled_data(name))
    assert found.format == "swe-agent"
    assert len(found.traces) == 1 and found.traces[0].tool_calls()


def test_a_broken_step_is_refused_naming_the_place_not_the_value(tmp_path: Path):
    document = _load(CLASSIC)
    document["trajectory"][3]["action"] = {"secret": "13800138000"}
    path = tmp_path / "broken.traj"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(TraceFormatError) as caught:
        read_trace_file(path)
    message = str(caught.value)
    assert str(path) in message and "trajectory[3].action" in message
    assert "13800138000" not in message


@pytest.mark.parametrize(
    ("change", "place"),
    [
        (lambda d: d["trajectory"][0].update(execution_time="slow"), "execution_time"),
        (lambda d: d["info"]["model_stats"].update(tokens_sent=-1), "model_stats.tokens_sent"),
        (lambda d: d["history"].append("13800138000"), "history[26]"),
        (lambda d: d.update(info=["13800138000"]), "info"),
    ],
)
def test_malformed_trajectories_are_refused_with_the_place(change, place):
    document = _load(CLASSIC)
    change(document)
    with pytest.raises(TraceFormatError) as caught:
        read(document)
    assert place in str(caught.value) and "13800138000" not in str(caught.value)
