"""tool_params' reasons read in Chinese, their English is what it was, and a failure names the
call whose arguments are wrong."""

from __future__ import annotations

from seatrial.i18n import render

from ._traces import TraceBuilder, check, context


def _zh(result) -> str:
    return render(result.message, language="zh_CN")


def orders(*slots: str):
    build = TraceBuilder()
    build.tool("tool_order_query", {"user_id": "u1"})
    calls = [build.tool("create_order", {"slot": slot, "city": "SH"}) for slot in slots]
    return build.trace(), calls


def test_a_wrong_argument_of_the_last_call_reads_in_chinese_and_points_at_that_call():
    trace, calls = orders("tonight", "tomorrow")
    result = check(
        "tool_params",
        context(trace),
        tool="create_order",
        expected={"slot": "tonight"},
        call="last",
    )
    assert (
        result.reason == 'call 2 of 2 of `create_order`: `slot`: expected "tonight", got "tomorrow"'
    )
    assert _zh(result) == (
        '`create_order` 的第 2 次调用（共 2 次）：`slot`：应为 "tonight"，实际为 "tomorrow"'
    )
    assert result.span_id == calls[1].span_id


def test_all_calls_point_at_the_first_bad_one_and_pass_when_every_one_matches():
    trace, calls = orders("tonight", "tomorrow", "noon")
    every = check(
        "tool_params", context(trace), tool="create_order", expected={"city": "SH"}, call="all"
    )
    assert every.verdict == "pass" and every.span_id is None
    assert _zh(every) == "`create_order` 的 3 次调用参数全部符合预期"
    result = check(
        "tool_params",
        context(trace),
        tool="create_order",
        expected={"slot": "tomorrow"},
        call="all",
    )
    assert result.span_id == calls[0].span_id


def test_no_matching_call_lists_the_first_three_and_how_many_more_in_chinese():
    trace, calls = orders("a", "b", "c", "d", "e")
    result = check("tool_params", context(trace), tool="create_order", expected={"slot": "z"})
    assert result.reason == (
        "no call of `create_order` had the expected arguments: "
        'call 1: `slot`: expected "z", got "a"; call 2: `slot`: expected "z", got "b"; '
        'call 3: `slot`: expected "z", got "c"; and 2 more'
    )
    assert _zh(result) == (
        "`create_order` 没有一次调用的参数符合预期："
        '第 1 次调用：`slot`：应为 "z"，实际为 "a"；第 2 次调用：`slot`：应为 "z"，实际为 "b"；'
        '第 3 次调用：`slot`：应为 "z"，实际为 "c"；另有 2 项'
    )
    assert result.span_id == calls[0].span_id


def test_any_call_passes_naming_the_call_that_matched_in_chinese():
    trace, _ = orders("a", "b", "c")
    result = check("tool_params", context(trace), tool="create_order", expected={"slot": "b"})
    assert result.verdict == "pass" and result.span_id is None
    assert (result.reason, _zh(result)) == (
        "call 2 of 3 of `create_order` matched",
        "`create_order` 的第 2 次调用（共 3 次）参数符合预期",
    )


def test_the_only_call_matching_says_so_instead_of_all_1_calls():
    trace, _ = orders("tonight")
    result = check(
        "tool_params", context(trace), tool="create_order", expected={"slot": "tonight"}, call="all"
    )
    # English changed on purpose: it said "all 1 calls of `create_order` matched".
    assert result.reason == "the only call of `create_order` matched"
    assert _zh(result) == "`create_order` 唯一的一次调用参数符合预期"
    first = check(
        "tool_params",
        context(trace),
        tool="create_order",
        expected={"slot": "tonight"},
        call="first",
    )
    assert _zh(first) == "`create_order` 的第一次调用参数符合预期"


def test_a_tool_never_called_reads_in_chinese_and_points_at_nothing():
    trace, _ = orders()
    result = check("tool_params", context(trace), tool="create_order", expected={"slot": "x"})
    assert result.reason == "`create_order` was never called (tools called: tool_order_query)"
    assert _zh(result) == "`create_order` 从未被调用（实际调用的工具：tool_order_query）"
    assert result.failure_type == "tool_not_called" and result.span_id is None


def test_regex_mismatches_read_in_chinese():
    trace, _ = orders("tomorrow")
    ctx = context(trace)
    wrong = check(
        "tool_params",
        ctx,
        tool="create_order",
        expected={"slot": "^to"},
        match="regex",
        call="first",
    )
    assert wrong.verdict == "pass"
    bad = check(
        "tool_params",
        ctx,
        tool="create_order",
        expected={"slot": "^9"},
        match="regex",
        call="first",
    )
    assert bad.reason == 'call 1 of 1 of `create_order`: `slot`: "tomorrow" does not match /^9/'
    assert _zh(bad) == '`create_order` 的第 1 次调用（共 1 次）：`slot`："tomorrow" 不匹配 /^9/'
    nested = check(
        "tool_params",
        ctx,
        tool="create_order",
        expected={"city": {"zip": "1"}},
        match="regex",
        call="first",
    )
    assert nested.reason.endswith('`city`: expected an object, got "SH"')
    assert _zh(nested).endswith('`city`：应为对象，实际为 "SH"')
    gone = check(
        "tool_params", ctx, tool="create_order", expected={"zip": "1"}, match="regex", call="first"
    )
    assert _zh(gone).endswith("缺少 `zip`")


def test_a_json_schema_error_keeps_the_validators_words_and_says_where_in_chinese():
    trace, _ = orders("tomorrow")
    schema = {"type": "object", "properties": {"slot": {"enum": ["tonight"]}}}
    result = check(
        "tool_params",
        context(trace),
        tool="create_order",
        expected=schema,
        match="json_schema",
        call="first",
    )
    assert result.reason == (
        "call 1 of 1 of `create_order`: 'tomorrow' is not one of ['tonight'] at `slot`"
    )
    assert _zh(result) == (
        "`create_order` 的第 1 次调用（共 1 次）："
        "'tomorrow' is not one of ['tonight']（位置：`slot`）"
    )
    whole = check(
        "tool_params",
        context(trace),
        tool="create_order",
        expected={"type": "object", "required": ["zip"]},
        match="json_schema",
        call="first",
    )
    assert _zh(whole).endswith("：'zip' is a required property")
