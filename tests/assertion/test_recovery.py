"""``repairs_within`` and ``no_identical_retry``: recovery after failed and faulted tool calls,
judged on traces that python agents recorded (near misses both ways)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from seatrial.agent import PythonAgent
from seatrial.assertion import AssertionContext, evaluate, recoveries
from seatrial.case import Case, ToolFault
from seatrial.i18n import render
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


def _results(trace: Trace, assertions: list[dict[str, Any]], **more: Any):
    tested = Case(id="t", input="x", assertions=assertions, **more)
    return evaluate(tested, AssertionContext(case=tested, trace=trace)).results


def test_an_unrepaired_validation_fault_reads_in_chinese_and_points_at_the_failed_call():
    missing = {A.FAULT: "missing_param", A.FAULT_PARAMETER: "date"}
    unfixed = _trace(
        ("book", {"period": "am"}, "missing_param", missing),
        ("book", {"period": "am", "note": "again"}, None),
    )
    failed = unfixed.tool_calls()[0].span.span_id
    (result,) = _results(unfixed, [{"type": "repairs_within", "turns": 2}])
    assert result.reason == (
        "`book` call 1 (injected missing_param) was not repaired within 2 tool calls: no later "
        "call of `book` set `date`"
    )
    assert render(result.message, language="zh_CN") == (
        "`book` 第 1 次调用（注入的 missing_param）未在 2 次工具调用内修复："
        "之后对 `book` 的调用都没有设置 `date`"
    )
    assert result.span_id == failed
    fixed = _trace(
        ("book", {"period": "am"}, "missing_param", missing),
        ("book", {"period": "am", "date": "2026-12-01"}, None),
    )
    (repaired,) = _results(fixed, [{"type": "repairs_within", "turns": 2}])
    assert (repaired.verdict, repaired.span_id) == ("pass", None)
    assert render(repaired.message, language="zh_CN") == (
        "已修复：`book` 第 1 次调用（注入的 missing_param），1 次工具调用后修复"
    )


def test_a_repair_one_turn_too_late_reads_in_chinese():
    trace = _trace(
        ("read", {"p": "a"}, "FileNotFoundError"), ("list", {}, None), ("read", {}, None)
    )
    (result,) = _results(trace, [{"type": "repairs_within", "turns": 1}])
    assert result.reason == (
        "`read` call 1 (FileNotFoundError) was not repaired within 1 tool call: repaired only "
        "after 2 tool calls"
    )
    assert render(result.message, language="zh_CN") == (
        "`read` 第 1 次调用（FileNotFoundError）未在 1 次工具调用内修复：过了 2 次工具调用才修复"
    )
    assert result.span_id == trace.tool_calls()[0].span.span_id


def test_an_identical_retry_reads_in_chinese_with_its_arguments_as_sent():
    trace = _trace(
        ("list", {}, None), ("read", {"p": "a"}, "FileNotFoundError"), ("read", {"p": "a"}, None)
    )
    (result,) = _results(trace, [{"type": "no_identical_retry"}])
    assert result.reason == (
        "`read` call 1 (FileNotFoundError) failed and the next call repeated the identical "
        'arguments {"p": "a"}'
    )
    assert render(result.message, language="zh_CN") == (
        '`read` 第 1 次调用（FileNotFoundError）失败后，下一次调用原样重复了参数 {"p": "a"}'
    )
    assert result.span_id == trace.tool_calls()[1].span.span_id
    (ignored,) = _results(trace, [{"type": "no_identical_retry", "ignore": ["FileNotFoundError"]}])
    assert (ignored.verdict, ignored.span_id) == ("pass", None)
    assert render(ignored.message, language="zh_CN") == (
        "只在临时性故障后重发相同的调用，最多连续 2 次（失败 1 次）"
    )


def test_one_identical_retry_too_many_after_a_timeout_reads_in_chinese():
    calls = [("read", {"p": "a"}, "timeout") for _ in range(3)] + [("read", {"p": "a"}, None)]
    trace = _trace(*calls)
    (result,) = _results(trace, [{"type": "no_identical_retry"}])
    assert result.reason == (
        "`read` call 1 (timeout) failed and the identical call was sent again 3 times in a row "
        '(at most twice after a transient failure): {"p": "a"}'
    )
    assert render(result.message, language="zh_CN") == (
        "`read` 第 1 次调用（timeout）失败后，相同的调用又连续重发了 3 次"
        '（临时性故障后最多允许 2 次）：{"p": "a"}'
    )
    assert result.span_id == trace.tool_calls()[0].span.span_id
    (enough,) = _results(trace, [{"type": "no_identical_retry", "transient_retries": 3}])
    assert enough.verdict == "pass"


def test_a_planned_fault_that_never_fired_reads_in_chinese():
    trace = _trace(("book_slot", {"slot": 1}, None))
    planned = [ToolFault(tool="book_slot", fault="http_500", at_call=5)]
    (result,) = _results(trace, [{"type": "no_identical_retry"}], tool_faults=planned)
    assert result.verdict == "not_evaluated"
    assert render(result.message, language="zh_CN") == (
        "注入的故障都没有触发：`book_slot` 第 5 次调用注入 http_500（实际调用了 1 次）；"
        "无从评估恢复情况"
    )
