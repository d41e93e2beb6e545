"""tool_called, tool_not_called, tool_sequence, tool_success and no_loop on recorded traces."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from seatrial.trace import TraceRecorder
from seatrial.trace import attrs as A

from ._traces import TraceBuilder, check, context


def booking_trace():
    build = TraceBuilder()
    build.tool("tool_order_query", {"user_id": "u1"}, {"orders": []})
    build.tool("tool_order_create", {"service_type": "清洁服务"}, {"order_id": "ORD1001"})
    build.tool("send_sms", {"to": "u1"}, {"ok": True})
    return build.trace()


def test_tool_called_passes_when_the_tool_ran():
    result = check("tool_called", context(booking_trace()), expected="send_sms")
    assert result.verdict == "pass"


def test_tool_called_fails_naming_the_tools_that_did_run():
    result = check("tool_called", context(booking_trace()), expected="create_order")
    assert result.verdict == "fail"
    assert result.failure_type is None  # the type's own: tool_not_called
    assert "`create_order` was called 0 times" in result.reason
    assert "tool_order_query, tool_order_create, send_sms" in result.reason


def test_tool_called_by_prefix_accepts_any_tool_of_the_family():
    ctx = context(booking_trace())
    assert check("tool_called", ctx, expected="tool_order", match="prefix").verdict == "pass"
    assert check("tool_called", ctx, expected="tool_order").verdict == "fail"


def test_tool_called_with_a_list_needs_every_tool():
    ctx = context(booking_trace())
    assert check("tool_called", ctx, expected=["send_sms", "tool_order_query"]).verdict == "pass"
    result = check("tool_called", ctx, expected=["send_sms", "refund"])
    assert result.verdict == "fail" and "`refund`" in result.reason


def test_tool_called_more_than_max_times_is_a_wrong_tool_failure():
    build = TraceBuilder()
    for _ in range(3):
        build.tool("search", {"q": "x"})
    result = check("tool_called", context(build.trace()), expected="search", max_times=2)
    assert result.verdict == "fail"
    assert result.failure_type == "wrong_tool"
    assert "called 3 times, at most 2 allowed" in result.reason


def test_tool_called_min_times_counts_calls():
    build = TraceBuilder()
    build.tool("search")
    result = check("tool_called", context(build.trace()), expected="search", min_times=2)
    assert result.verdict == "fail" and "called once, expected at least 2" in result.reason


def test_tool_called_rejects_max_below_min():
    with pytest.raises(ValidationError, match="max_times"):
        check("tool_called", context(), expected="x", min_times=3, max_times=1)


def test_tool_not_called_fails_on_a_forbidden_call():
    result = check("tool_not_called", context(booking_trace()), expected=["refund", "send_sms"])
    assert result.verdict == "fail"
    assert result.reason == "`send_sms` was called once"


def test_tool_not_called_passes_when_none_ran():
    result = check("tool_not_called", context(booking_trace()), expected="refund")
    assert result.verdict == "pass"


def test_tool_sequence_in_order_allows_calls_in_between():
    ctx = context(booking_trace())
    result = check("tool_sequence", ctx, expected=["tool_order_query", "send_sms"])
    assert result.verdict == "pass"


def test_tool_sequence_in_order_names_the_step_out_of_order():
    ctx = context(booking_trace())
    result = check("tool_sequence", ctx, expected=["send_sms", "tool_order_create"])
    assert result.verdict == "fail"
    assert "step 2 `tool_order_create` was not called after `send_sms`" in result.reason


def test_tool_sequence_exact_rejects_extra_calls():
    ctx = context(booking_trace())
    names = ["tool_order_query", "tool_order_create", "send_sms"]
    assert check("tool_sequence", ctx, expected=names, mode="exact").verdict == "pass"
    result = check("tool_sequence", ctx, expected=names[:2], mode="exact")
    assert result.verdict == "fail"


def test_tool_sequence_any_order_counts_repeated_names():
    ctx = context(booking_trace())
    assert (
        check(
            "tool_sequence", ctx, expected=["send_sms", "tool_order_query"], mode="any_order"
        ).verdict
        == "pass"
    )
    result = check("tool_sequence", ctx, expected=["send_sms", "send_sms"], mode="any_order")
    assert result.verdict == "fail" and "not called: send_sms" in result.reason


def repaired_trace():
    build = TraceBuilder()
    build.tool("create_order", {"time": "tomorrow"}, error="ValidationError")
    build.tool("create_order", {"time": "2026-07-02T09:00"}, {"order_id": "ORD1"})
    build.tool("notify", {})
    return build.trace()


def test_tool_success_all_fails_on_any_failed_call():
    result = check("tool_success", context(repaired_trace()))
    assert result.verdict == "fail"
    assert result.reason == "`create_order` failed 1 of 2 calls (ValidationError)"


def test_tool_success_last_accepts_a_repaired_call():
    result = check("tool_success", context(repaired_trace()), mode="last")
    assert result.verdict == "pass"


def test_tool_success_on_a_tool_never_called_is_tool_not_called():
    result = check("tool_success", context(repaired_trace()), expected="refund")
    assert result.verdict == "fail" and result.failure_type == "tool_not_called"


def test_tool_success_limited_to_named_tools_ignores_others():
    result = check("tool_success", context(repaired_trace()), expected="notify")
    assert result.verdict == "pass"


def rereads_missing_file(repeats: int):
    """After a model change the agent re-reads a missing file again and again."""
    recorder = TraceRecorder()
    with recorder.span("invoke_agent docs-bot", {A.OPERATION: A.OP_INVOKE_AGENT}):
        with recorder.span(
            "execute_tool list_directory",
            {A.OPERATION: A.OP_EXECUTE_TOOL, A.TOOL_NAME: "list_directory"},
        ):
            pass
        for _ in range(repeats):
            span = recorder.start_span(
                "execute_tool read_file",
                {
                    A.OPERATION: A.OP_EXECUTE_TOOL,
                    A.TOOL_NAME: "read_file",
                    A.TOOL_ARGUMENTS: {"path": "docs/design.md"},
                },
            )
            recorder.end_span(span, error="FileNotFoundError", message="docs/design.md")
    return recorder.trace()


def test_no_loop_catches_a_repeated_failing_read():
    result = check("no_loop", context(rereads_missing_file(repeats=6)))
    assert result.verdict == "fail"
    assert "`read_file` failed 6 times with the same arguments" in result.reason
    assert "docs/design.md" in result.reason
    assert "FileNotFoundError" in result.reason


def test_no_loop_allows_one_retry_by_default():
    assert check("no_loop", context(rereads_missing_file(repeats=2))).verdict == "pass"
    assert check("no_loop", context(rereads_missing_file(repeats=3))).verdict == "fail"


def test_no_loop_max_repeats_zero_forbids_any_retry():
    result = check("no_loop", context(rereads_missing_file(repeats=2)), max_repeats=0)
    assert result.verdict == "fail"


def test_no_loop_ignores_retries_with_different_arguments():
    build = TraceBuilder()
    for path in ("a.md", "b.md", "c.md", "d.md"):
        build.tool("read_file", {"path": path}, error="FileNotFoundError")
    assert check("no_loop", context(build.trace())).verdict == "pass"
