"""tool_params: subset, exact, regex and JSON-schema matching over the calls of a tool."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ._traces import TraceBuilder, check, context

ORDER = {"service_type": "清洁服务", "time_slot": "tomorrow_morning", "address": {"city": "SH"}}


def order_trace(*calls):
    build = TraceBuilder()
    build.tool("tool_order_query", {"user_id": "u1"})
    for arguments in calls:
        build.tool("create_order", arguments, {"order_id": "ORD1"})
    return build.trace()


def test_expected_params_match_a_subset_of_the_call_arguments():
    ctx = context(order_trace(ORDER))
    result = check(
        "tool_params",
        ctx,
        tool="create_order",
        params={"service_type": "清洁服务", "time_slot": "tomorrow_morning"},
    )
    assert result.verdict == "pass"


def test_subset_mismatch_names_the_argument_and_both_values():
    ctx = context(order_trace(ORDER))
    result = check("tool_params", ctx, tool="create_order", expected={"time_slot": "tonight"})
    assert result.verdict == "fail"
    assert '`time_slot`: expected "tonight", got "tomorrow_morning"' in result.reason


def test_subset_reaches_into_nested_objects():
    ctx = context(order_trace(ORDER))
    ok = check("tool_params", ctx, tool="create_order", expected={"address": {"city": "SH"}})
    bad = check("tool_params", ctx, tool="create_order", expected={"address": {"zip": "1"}})
    assert ok.verdict == "pass"
    assert bad.verdict == "fail" and "`address.zip` is missing" in bad.reason


def test_exact_rejects_an_extra_argument():
    ctx = context(order_trace(ORDER))
    wanted = {k: v for k, v in ORDER.items() if k != "address"}
    result = check("tool_params", ctx, tool="create_order", expected=wanted, match="exact")
    assert result.verdict == "fail" and "`address` was not expected" in result.reason
    assert (
        check("tool_params", ctx, tool="create_order", expected=ORDER, match="exact").verdict
        == "pass"
    )


def test_a_boolean_is_not_the_number_one():
    ctx = context(order_trace({"insurance": 1}))
    result = check("tool_params", ctx, tool="create_order", expected={"insurance": True})
    assert result.verdict == "fail"


def test_regex_searches_each_argument_text():
    ctx = context(order_trace({"date": "2026-07-02", "seats": 2}))
    ok = check(
        "tool_params",
        ctx,
        tool="create_order",
        match="regex",
        expected={"date": r"^2026-07-\d\d$", "seats": r"^[1-4]$"},
    )
    bad = check("tool_params", ctx, tool="create_order", match="regex", expected={"seats": "^9"})
    assert ok.verdict == "pass"
    assert bad.verdict == "fail" and "does not match /^9/" in bad.reason


def test_json_schema_reports_the_violation():
    schema = {
        "type": "object",
        "required": ["service_type", "time_slot"],
        "properties": {"time_slot": {"enum": ["tomorrow_morning", "tomorrow_afternoon"]}},
    }
    ok = check(
        "tool_params",
        context(order_trace(ORDER)),
        tool="create_order",
        match="json_schema",
        expected=schema,
    )
    bad = check(
        "tool_params",
        context(order_trace({"service_type": "x", "time_slot": "now"})),
        tool="create_order",
        match="json_schema",
        expected=schema,
    )
    assert ok.verdict == "pass"
    assert bad.verdict == "fail" and "time_slot" in bad.reason


def test_call_selects_which_calls_must_match():
    ctx = context(order_trace({"time_slot": "bad"}, {"time_slot": "tomorrow_morning"}))
    expected = {"time_slot": "tomorrow_morning"}
    assert check("tool_params", ctx, tool="create_order", expected=expected).verdict == "pass"
    assert (
        check("tool_params", ctx, tool="create_order", expected=expected, call="last").verdict
        == "pass"
    )
    first = check("tool_params", ctx, tool="create_order", expected=expected, call="first")
    every = check("tool_params", ctx, tool="create_order", expected=expected, call="all")
    assert first.verdict == "fail" and "call 1 of 2" in first.reason
    assert every.verdict == "fail" and "call 1 of 2" in every.reason


def test_any_call_failing_lists_each_mismatch():
    ctx = context(order_trace({"time_slot": "a"}, {"time_slot": "b"}))
    result = check("tool_params", ctx, tool="create_order", expected={"time_slot": "c"})
    assert result.verdict == "fail"
    assert "call 1:" in result.reason and "call 2:" in result.reason


def test_tool_never_called_is_tool_not_called():
    result = check("tool_params", context(order_trace()), tool="create_order", expected={"a": 1})
    assert result.verdict == "fail"
    assert result.failure_type == "tool_not_called"
    assert "`create_order` was never called (tools called: tool_order_query)" == result.reason


@pytest.mark.parametrize(
    "params",
    [
        {"tool": "t"},
        {"tool": "t", "expected": {"a": 1}, "params": {"a": 1}},
        {"tool": "t", "expected": {"a": "("}, "match": "regex"},
        {"tool": "t", "expected": {"type": "no-such-type"}, "match": "json_schema"},
        {"tool": "t", "expected": ["a"], "match": "subset"},
    ],
)
def test_invalid_parameters_are_rejected_at_load_time(params):
    with pytest.raises(ValidationError):
        check("tool_params", context(), **params)
