"""L1 tool assertions on real agent trajectories: GPT-4o on tau-bench airline (200 trials).

Expectations are computed from the data files themselves: the task's expected actions and
the reward tau-bench gave each trial.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache

from seatrial.trace import Trace
from tests.conftest import bundled_data

from ._traces import TraceBuilder, check, context

DATA = bundled_data("tau-bench")
RUNS = DATA / "gpt-4o-airline.json"
TASKS = DATA / "airline_tasks_test.json"

WRITE_PREFIXES = ("book_", "cancel_", "update_", "send_")
"""tau-bench airline tools that change the database (the reward compares the database)."""


@cache
def runs() -> list[dict]:
    return json.loads(RUNS.read_text(encoding="utf-8"))


@cache
def tasks() -> list[dict]:
    return json.loads(TASKS.read_text(encoding="utf-8"))


def trace_of(run: dict) -> Trace:
    """The trajectory as execute_tool spans, each tagged with the user turn it ran in."""
    results = {
        message["tool_call_id"]: message["content"]
        for message in run["traj"]
        if message.get("role") == "tool"
    }
    build = TraceBuilder("tau-bench-airline")
    turn = -1
    for message in run["traj"]:
        if message.get("role") == "user":
            turn += 1
        for call in message.get("tool_calls") or []:
            output = results.get(call["id"], "")
            build.tool(
                call["function"]["name"],
                json.loads(call["function"]["arguments"]),
                output,
                error="tool_error" if output.startswith("Error") else None,
                turn=turn,
            )
    return build.trace()


def calls_in(run: dict) -> list[tuple[str, dict]]:
    return [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for message in run["traj"]
        for call in message.get("tool_calls") or []
    ]


def call_ids(run: dict) -> list[str]:
    return [call["id"] for message in run["traj"] for call in message.get("tool_calls") or []]


def succeeded(run: dict) -> bool:
    return abs(run["reward"] - 1) <= 1e-6


def test_tool_called_agrees_with_the_trajectory_for_every_expected_action():
    checked = 0
    for run in runs():
        ctx = context(trace_of(run))
        names = {name for name, _ in calls_in(run)}
        for action in tasks()[run["task_id"]]["actions"]:
            result = check("tool_called", ctx, expected=action["name"])
            assert (result.verdict == "pass") == (action["name"] in names), (run["task_id"], action)
            checked += 1
    assert checked > 0


def test_exact_tool_params_pass_only_when_a_call_had_the_task_arguments():
    outcomes = Counter()
    for run in runs():
        ctx = context(trace_of(run))
        calls = calls_in(run)
        for action in tasks()[run["task_id"]]["actions"]:
            if not any(name == action["name"] for name, _ in calls):
                continue
            result = check(
                "tool_params", ctx, tool=action["name"], expected=action["kwargs"], match="exact"
            )
            wanted = any(
                name == action["name"] and args == action["kwargs"] for name, args in calls
            )
            assert (result.verdict == "pass") == wanted, (run["task_id"], action["name"])
            outcomes[result.verdict] += 1
    # The data holds both kinds of trial, so both branches were exercised.
    assert outcomes["pass"] and outcomes["fail"]


def test_every_rewarded_trial_made_each_database_write_the_task_expects():
    rewarded = [run for run in runs() if succeeded(run)]
    assert rewarded
    for run in rewarded:
        ctx = context(trace_of(run))
        for action in tasks()[run["task_id"]]["actions"]:
            if not action["name"].startswith(WRITE_PREFIXES):
                continue
            called = check("tool_called", ctx, expected=action["name"])
            params = check("tool_params", ctx, tool=action["name"], expected=action["kwargs"])
            assert called.verdict == "pass", (run["task_id"], run["trial"], called.reason)
            assert params.verdict == "pass", (run["task_id"], run["trial"], params.reason)


def test_no_loop_flags_exactly_the_trials_that_repeated_a_failing_call():
    flagged = 0
    for run in runs():
        results = {m["tool_call_id"]: m["content"] for m in run["traj"] if m.get("role") == "tool"}
        failing = Counter(
            (name, json.dumps(args, sort_keys=True))
            for (name, args), call_id in zip(calls_in(run), call_ids(run), strict=True)
            if results.get(call_id, "").startswith("Error")
        )
        looped = any(count > 2 for count in failing.values())
        result = check("no_loop", context(trace_of(run)))
        assert (result.verdict == "fail") == looped, run["task_id"]
        flagged += looped
    # Some real trials did loop and most did not: both branches were exercised.
    assert 0 < flagged < len(runs())
