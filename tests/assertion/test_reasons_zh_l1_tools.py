"""The reasons of tool_called, tool_not_called, tool_sequence, tool_success and no_loop read in
Chinese, their English is what it was, and a failure names the call it points at."""

from __future__ import annotations

from seatrial.i18n import render

from ._traces import TraceBuilder, check, context


def _zh(result) -> str:
    return render(result.message, language="zh_CN")


def booking():
    build = TraceBuilder()
    query = build.tool("tool_order_query", {"user_id": "u1"})
    first = build.tool("refund", {"order": "A"})
    second = build.tool("refund", {"order": "A"})
    sms = build.tool("send_sms", {"to": "u1"})
    return build.trace(), query, first, second, sms


def test_tool_called_over_its_limit_reads_in_chinese_and_points_at_the_first_call_too_many():
    trace, _, _, second, _ = booking()
    result = check("tool_called", context(trace), expected="refund", max_times=1)
    assert result.reason == (
        "`refund` was called 2 times, at most 1 allowed "
        "(tools called: tool_order_query, refund, refund, send_sms)"
    )
    assert _zh(result) == (
        "`refund` 被调用了 2 次，最多允许 1 次"
        "（实际调用的工具：tool_order_query, refund, refund, send_sms）"
    )
    assert result.span_id == second.span_id


def test_tool_called_over_the_limit_on_several_tools_points_at_the_earliest_call_over():
    trace, _, first, _, sms = booking()
    result = check(
        "tool_called", context(trace), expected=["send_sms", "refund"], min_times=0, max_times=0
    )
    assert result.reason.startswith(
        "`send_sms` was called once, at most 0 allowed; `refund` was called 2 times, at most 0"
    )
    assert result.span_id == first.span_id != sms.span_id


def test_tool_called_at_its_limit_passes_and_points_at_nothing():
    trace, *_ = booking()
    result = check("tool_called", context(trace), expected="refund", max_times=2)
    assert result.verdict == "pass" and result.span_id is None
    assert result.reason == "called `refund` 2 times"
    assert _zh(result) == "已调用 `refund` 2 次"


def test_tool_called_missing_tools_name_no_call_and_say_once_and_none_in_chinese():
    result = check("tool_called", context(), expected=["refund", "send_sms"], min_times=1)
    assert result.reason == (
        "`refund` was called 0 times, expected at least 1; "
        "`send_sms` was called 0 times, expected at least 1 (tools called: none)"
    )
    assert _zh(result) == (
        "`refund` 被调用了 0 次，至少应调用 1 次；"
        "`send_sms` 被调用了 0 次，至少应调用 1 次（实际调用的工具：无）"
    )
    assert result.span_id is None


def test_tool_called_lists_what_each_tool_was_called_in_a_chinese_enumeration():
    trace, *_ = booking()
    result = check("tool_called", context(trace), expected=["send_sms", "refund"])
    assert result.reason == "called `send_sms` once, `refund` 2 times"
    assert _zh(result) == "已调用 `send_sms` 1 次、`refund` 2 次"


def test_tool_not_called_points_at_the_earliest_forbidden_call():
    trace, _, first, _, sms = booking()
    result = check("tool_not_called", context(trace), expected=["send_sms", "refund"])
    assert result.reason == "`send_sms` was called once; `refund` was called 2 times"
    assert _zh(result) == "`send_sms` 被调用了 1 次；`refund` 被调用了 2 次"
    assert result.span_id == first.span_id != sms.span_id


def test_tool_not_called_by_prefix_passes_in_chinese_when_nothing_matches():
    trace, *_ = booking()
    result = check("tool_not_called", context(trace), expected="delete_", match="prefix")
    assert result.verdict == "pass" and result.span_id is None
    assert result.reason == "none of delete_ was called"
    assert _zh(result) == "delete_ 均未被调用"


def test_tool_sequence_exact_points_at_the_first_call_out_of_place():
    trace, _, first, _, _ = booking()
    expected = ["tool_order_query", "send_sms"]
    result = check("tool_sequence", context(trace), expected=expected, mode="exact")
    assert result.reason == (
        "expected exactly tool_order_query → send_sms "
        "(tools called: tool_order_query, refund, refund, send_sms)"
    )
    assert _zh(result) == (
        "预期的调用顺序恰好为 tool_order_query → send_sms"
        "（实际调用的工具：tool_order_query, refund, refund, send_sms）"
    )
    assert result.span_id == first.span_id


def test_tool_sequence_exact_with_a_call_too_few_points_at_nothing():
    trace, *_ = booking()
    expected = ["tool_order_query", "refund", "refund", "send_sms", "notify"]
    result = check("tool_sequence", context(trace), expected=expected, mode="exact")
    assert result.verdict == "fail" and result.span_id is None
    exact = check("tool_sequence", context(trace), expected=expected[:4], mode="exact")
    assert exact.verdict == "pass" and exact.span_id is None
    assert _zh(exact) == ("调用顺序与预期完全一致：tool_order_query → refund → refund → send_sms")


def test_tool_sequence_in_order_names_the_missing_step_in_chinese():
    trace, *_ = booking()
    after = check("tool_sequence", context(trace), expected=["send_sms", "refund"])
    assert after.reason == (
        "expected send_sms → refund: step 2 `refund` was not called after `send_sms` "
        "(tools called: tool_order_query, refund, refund, send_sms)"
    )
    assert _zh(after).startswith(
        "预期顺序为 send_sms → refund：第 2 步 `refund` 没有在 `send_sms` 之后被调用（"
    )
    first = check("tool_sequence", context(trace), expected=["notify", "refund"])
    assert _zh(first).startswith("预期顺序为 notify → refund：第 1 步 `notify` 未被调用（")
    assert after.span_id is None and first.span_id is None


def test_tool_sequence_any_order_reads_in_chinese_both_ways():
    trace, *_ = booking()
    missing = check(
        "tool_sequence", context(trace), expected=["send_sms", "notify"], mode="any_order"
    )
    assert missing.reason.startswith("not called: notify (tools called: ")
    assert _zh(missing).startswith("未调用：notify（实际调用的工具：")
    found = check(
        "tool_sequence", context(trace), expected=["send_sms", "refund"], mode="any_order"
    )
    assert (found.reason, _zh(found)) == ("called send_sms, refund", "已调用 send_sms, refund")


def failing_calls():
    build = TraceBuilder()
    bad = build.tool("create_order", {"time": "tomorrow"}, error="ValidationError")
    good = build.tool("create_order", {"time": "2026-07-02T09:00"})
    lone = build.tool("notify", {}, error="Timeout")
    return build.trace(), bad, good, lone


def test_tool_success_points_at_the_first_failed_call_it_names():
    trace, bad, _, lone = failing_calls()
    result = check("tool_success", context(trace))
    # English changed on purpose: it said "`notify` failed 1 of 1 calls (Timeout)".
    assert result.reason == (
        "`create_order` failed 1 of 2 calls (ValidationError); "
        "the only call of `notify` failed (Timeout)"
    )
    assert _zh(result) == (
        "`create_order` 的 2 次调用中有 1 次失败（ValidationError）；"
        "`notify` 唯一的一次调用失败（Timeout）"
    )
    assert result.span_id == bad.span_id
    only_notify = check("tool_success", context(trace), expected="notify")
    assert only_notify.span_id == lone.span_id


def test_tool_success_last_says_the_only_call_failed_instead_of_the_last_of_one():
    trace, _, _, lone = failing_calls()
    result = check("tool_success", context(trace), mode="last")
    # English changed on purpose: it said "the last of 1 calls of `notify` failed".
    assert result.reason == "the only call of `notify` failed (Timeout)"
    assert _zh(result) == "`notify` 唯一的一次调用失败（Timeout）"
    assert result.span_id == lone.span_id


def test_tool_success_last_after_a_repair_passes_and_a_failed_last_of_many_reads_in_chinese():
    trace, *_ = failing_calls()
    repaired = check("tool_success", context(trace), mode="last", expected="create_order")
    assert repaired.verdict == "pass" and repaired.span_id is None
    assert _zh(repaired) == "每个工具的最后一次调用均成功（create_order）"
    build = TraceBuilder()
    build.tool("pay", {"n": 1})
    last = build.tool("pay", {"n": 2}, error="Declined")
    result = check("tool_success", context(build.trace()), mode="last")
    assert result.reason == "the last of 2 calls of `pay` failed (Declined)"
    assert _zh(result) == "`pay` 的 2 次调用中，最后一次失败（Declined）"
    assert result.span_id == last.span_id


def test_tool_success_on_a_tool_never_called_reads_in_chinese_and_points_at_nothing():
    trace, *_ = failing_calls()
    result = check("tool_success", context(trace), expected=["refund"])
    assert (
        result.reason == "never called: refund (tools called: create_order, create_order, notify)"
    )
    assert _zh(result) == "从未调用：refund（实际调用的工具：create_order, create_order, notify）"
    assert result.span_id is None
    assert _zh(check("tool_success", context())) == "没有调用任何工具"


def looping(repeats: int):
    build = TraceBuilder()
    build.tool("list_directory", {})
    calls = [
        build.tool("read_file", {"path": "docs/design.md"}, error="FileNotFoundError")
        for _ in range(repeats)
    ]
    return build.trace(), calls


def test_no_loop_reads_in_chinese_and_points_at_the_call_it_kept_retrying():
    trace, calls = looping(3)
    result = check("no_loop", context(trace))
    assert result.reason == (
        '`read_file` failed 3 times with the same arguments {"path": "docs/design.md"} '
        "(FileNotFoundError); a failing call may be repeated at most once"
    )
    assert _zh(result) == (
        '`read_file` 以相同参数 {"path": "docs/design.md"} 失败了 3 次'
        "（FileNotFoundError）；失败的调用最多允许重复 1 次"
    )
    assert result.span_id == calls[0].span_id


def test_no_loop_one_retry_passes_and_no_retry_at_all_reads_in_chinese():
    trace, _ = looping(2)
    allowed = check("no_loop", context(trace))
    assert allowed.verdict == "pass" and allowed.span_id is None
    assert (allowed.reason, _zh(allowed)) == (
        "no failing call was repeated more than once",
        "没有失败的调用被重复超过 1 次",
    )
    strict = check("no_loop", context(trace), max_repeats=0)
    assert strict.reason.endswith("; no repeat of a failing call is allowed")
    assert _zh(strict).endswith("；失败的调用不允许重复")
