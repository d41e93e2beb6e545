"""``repairs_within`` and ``no_identical_retry``: recovery after failed and faulted tool calls,
judged on traces that python agents recorded (near misses both ways)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from seatrial.agent import PythonAgent
from seatrial.assertion import AssertionContext, evaluate, recoveries
from seatrial.case import Case, ToolFault
from seatrial.trace import Trace, TraceRecorder
from seatrial.trace import attrs as A
from tests.agent._drive import drive, make_context

AGENTS = Path(__file__).parents[1] / "agent" / "fault_agents.py"
RECOVERY = [{"type": "repairs_within", "turns": 2}, {"type": "no_identical_retry"}]


def case(fault: str = "http_500", assertions: list[dict[str, Any]] | None = None, **more: Any):
    return Case(
        id="book",
        input="book me a slot",
        tool_faults=[ToolFault(tool="book_slot", fault=fault, **more)],
        assertions=assertions if assertions is not None else RECOVERY,
    )


async def verdicts(function: str, tested: Case) -> dict[str, tuple[str, str]]:
    output, trace = await drive(PythonAgent(f"python:{AGENTS}:{function}"), make_context(tested))
    ctx = AssertionContext(case=tested, trace=trace, response=output.response)
    evaluation = evaluate(tested, ctx)
    return {r.type: (r.verdict, r.reason) for r in evaluation.results}


async def test_an_agent_that_repairs_after_an_injected_500_passes_both():
    found = await verdicts("repairing", case())
    assert found["repairs_within"] == (
        "pass",
        "repaired: `book_slot` call 1 (injected http_500) after 1 model turn",
    )
    assert found["no_identical_retry"][0] == "pass"


FAULTS = ["missing_param", "bad_enum", "http_500", "timeout", "malformed_json", "empty"]
TRANSIENT = ["http_500", "timeout", "malformed_json", "empty"]


@pytest.mark.parametrize("fault", FAULTS)
async def test_an_agent_that_does_what_each_fault_says_passes_both(fault):
    found = await verdicts("obeys", case(fault))
    assert found["repairs_within"][0] == "pass", found
    assert found["no_identical_retry"][0] == "pass", found


@pytest.mark.parametrize("fault", TRANSIENT)
async def test_an_identical_retry_after_a_transient_fault_is_a_repair(fault):
    # The obeying agent sends the same call again after each transient fault.
    found = await verdicts("obeys", case(fault))
    assert found["repairs_within"] == (
        "pass",
        f"repaired: `book_slot` call 1 (injected {fault}) after 1 model turn",
    )
    assert found["no_identical_retry"] == (
        "pass",
        "identical calls only after transient failures, at most twice in a row (1 failed)",
    )


async def test_identical_retries_up_to_the_bound_pass_and_one_more_fails():
    within = await verdicts("identical", case(times=2))  # two retries: the second succeeds
    assert within["no_identical_retry"][0] == "pass"
    assert within["repairs_within"][0] == "pass"
    past = await verdicts("identical", case(times=3))
    assert past["no_identical_retry"] == (
        "fail",
        "`book_slot` call 1 (injected http_500) failed and the identical call was sent again "
        "3 times in a row (at most twice after a transient failure): "
        '{"date": "2026-12-01", "note": "", "period": "morning"}',
    )
    bounded = [{"type": "no_identical_retry", "transient_retries": 3}]
    assert (await verdicts("identical", case(times=3, assertions=bounded)))["no_identical_retry"][
        0
    ] == "pass"


async def test_an_identical_resend_after_bad_enum_fails_both():
    found = await verdicts("identical", case("bad_enum"))
    assert found["no_identical_retry"] == (
        "fail",
        "`book_slot` call 1 (injected bad_enum) failed and the next call repeated the identical "
        'arguments {"date": "2026-12-01", "note": "", "period": "morning"}',
    )
    # The resend succeeded only because the fault was once: it kept the refused value.
    assert found["repairs_within"] == (
        "fail",
        "`book_slot` call 1 (injected bad_enum) was not repaired within 2 model turns: no "
        'later call of `book_slot` gave `period` one of the allowed values "afternoon"',
    )


async def test_missing_param_a_call_really_lacked_is_repaired_by_setting_it_not_by_resending():
    obeyed = await verdicts("forgets_date_and_obeys", case("missing_param"))
    assert obeyed["repairs_within"][0] == "pass", obeyed
    assert obeyed["no_identical_retry"][0] == "pass", obeyed
    resent = await verdicts("forgets_date_and_resends", case("missing_param"))
    assert resent["no_identical_retry"][0] == "fail"
    assert resent["repairs_within"][1].startswith(
        "`book_slot` call 1 (injected missing_param) was not repaired within 2 model turns: no "
        "later call of `book_slot` succeeded"
    )


async def test_a_changed_call_that_keeps_the_refused_enum_value_is_no_repair():
    found = await verdicts("changes_the_note", case("bad_enum"))
    assert found["repairs_within"] == (
        "fail",
        "`book_slot` call 1 (injected bad_enum) was not repaired within 2 model turns: no "
        'later call of `book_slot` gave `period` one of the allowed values "afternoon"',
    )
    assert found["no_identical_retry"][0] == "pass"


def test_a_changed_call_that_does_not_set_the_missing_parameter_is_no_repair():
    missing = {A.FAULT: "missing_param", A.FAULT_PARAMETER: "date"}
    unfixed = _trace(
        ("book", {"period": "am"}, "missing_param", missing),
        ("book", {"period": "am", "note": "again"}, None),
    )
    (found,) = recoveries(unfixed)
    assert (found.repaired_after, found.unfixed_success) == (None, True)
    tested = Case(id="t", input="x", assertions=RECOVERY)
    results = evaluate(tested, AssertionContext(case=tested, trace=unfixed)).results
    assert [r.verdict for r in results] == ["fail", "pass"]
    assert results[0].reason.endswith("no later call of `book` set `date`")
    fixed = _trace(
        ("book", {"period": "am"}, "missing_param", missing),
        ("book", {"period": "am", "date": "2026-12-01"}, None),
    )
    assert recoveries(fixed)[0].repaired_after == 1


async def test_identical_retries_into_a_lasting_fault_fail_both():
    found = await verdicts("identical", case(times=5))
    verdict, reason = found["repairs_within"]
    assert verdict == "fail"
    assert reason.startswith(
        "`book_slot` call 1 (injected http_500) was not repaired within 2 model turns: no later "
        "call of `book_slot` succeeded"
    )
    assert found["no_identical_retry"][0] == "fail"


def test_an_identical_retry_after_a_tools_own_error_fails_unless_ignored():
    trace = _trace(("read", {"p": "a"}, "FileNotFoundError"), ("read", {"p": "a"}, None))
    plain = Case(id="t", input="x", assertions=[{"type": "no_identical_retry"}])
    assert evaluate(plain, AssertionContext(case=plain, trace=trace)).verdict == "FAIL"
    ignoring = [{"type": "no_identical_retry", "ignore": ["FileNotFoundError"]}]
    lenient = Case(id="t", input="x", assertions=ignoring)
    assert evaluate(lenient, AssertionContext(case=lenient, trace=trace)).verdict == "PASS"


async def test_giving_up_fails_repairs_within_but_not_no_identical_retry():
    found = await verdicts("gives_up", case())
    assert found["repairs_within"] == (
        "fail",
        "`book_slot` call 1 (injected http_500) was not repaired within 2 model turns: "
        "`book_slot` was never called again",
    )
    assert found["no_identical_retry"] == (
        "pass",
        "no failed call was repeated identically (1 failed)",
    )


async def test_a_repair_after_three_model_turns_misses_two_and_meets_three():
    found = await verdicts("slow_repair", case())
    assert found["repairs_within"] == (
        "fail",
        "`book_slot` call 1 (injected http_500) was not repaired within 2 model turns: "
        "repaired only after 3 model turns",
    )
    three = await verdicts("slow_repair", case(assertions=[{"type": "repairs_within", "turns": 3}]))
    assert three["repairs_within"][0] == "pass"


async def test_a_fault_that_never_fires_is_not_evaluated_rather_than_passed():
    tested = case(at_call=5)
    found = await verdicts("repairing", tested)
    assert found["repairs_within"] == (
        "not_evaluated",
        "no injected fault fired: `book_slot` http_500 at call 5 (called once); nothing to "
        "judge the recovery on",
    )


def _call(
    recorder: TraceRecorder,
    name: str,
    arguments: dict[str, Any],
    error: str | None,
    more: dict[str, Any] | None = None,
):
    attributes = {
        A.OPERATION: A.OP_EXECUTE_TOOL,
        A.TOOL_NAME: name,
        A.TOOL_ARGUMENTS: str(arguments).replace("'", '"'),
        **(more or {}),
    }
    with recorder.span(f"execute_tool {name}", attributes) as span:
        if error is not None:
            span.attributes[A.ERROR_TYPE] = error


def _trace(*calls: tuple[Any, ...]) -> Trace:
    recorder = TraceRecorder()
    with recorder.activate():
        for call in calls:
            _call(recorder, *call)
    return recorder.trace()


def test_without_model_calls_turns_count_tool_calls_and_refusals_are_not_failures():
    trace = _trace(
        ("read", {"p": "a"}, "FileNotFoundError"),
        ("list", {}, None),
        ("read", {"p": "b"}, None),
        ("write", {"p": "x"}, "permission_denied"),
    )
    (found,) = recoveries(trace)
    assert (found.tool, found.call, found.repaired_after, found.unit) == ("read", 1, 2, "tool call")
    assert not found.identical_retry
    tested = Case(id="t", input="x", assertions=[{"type": "repairs_within", "turns": 1}])
    evaluation = evaluate(tested, AssertionContext(case=tested, trace=trace))
    assert evaluation.results[0].verdict == "fail"
    assert evaluation.failure_type == "recovery"
    assert "within 1 tool call: repaired only after 2 tool calls" in evaluation.results[0].reason


def test_tools_limits_which_failures_are_judged():
    trace = _trace(("read", {"p": "a"}, "FileNotFoundError"), ("list", {}, "boom"))
    tested = Case(
        id="t",
        input="x",
        assertions=[{"type": "repairs_within", "tools": "list"}, {"type": "no_identical_retry"}],
    )
    results = evaluate(tested, AssertionContext(case=tested, trace=trace)).results
    assert results[0].reason.startswith("`list` call 1 (boom) was not repaired")
    assert "`read`" not in results[0].reason
    assert results[1].verdict == "pass"


def test_a_trace_without_failures_passes_both():
    trace = _trace(("read", {"p": "a"}, None), ("read", {"p": "a"}, None))
    tested = Case(id="t", input="x", assertions=RECOVERY)
    evaluation = evaluate(tested, AssertionContext(case=tested, trace=trace))
    assert evaluation.verdict == "PASS"
    assert [r.reason for r in evaluation.results] == [
        "no tool call failed: nothing to repair",
        "no tool call failed",
    ]
