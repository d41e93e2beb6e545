"""The trace checks' reasons read in Chinese, and their fails point at the span that broke them:
forbidden_events, limits, permissions_respected, skill_routed, trace_complete."""

from __future__ import annotations

from seatrial.i18n import render
from seatrial.trace import Trace
from seatrial.trace import attrs as A

from ._traces import TraceBuilder, check, context, make_case


def zh(result) -> str:
    return render(result.message, language="zh_CN")


def test_a_forbidden_call_reads_in_chinese_and_points_at_its_first_occurrence():
    build = TraceBuilder()
    build.tool("list_directory", {"path": "."})
    first = build.tool("write_file", {"path": "a.md"}, error="permission_denied", turn=0)
    build.tool("write_file", {"path": "b.md"})
    result = check("forbidden_events", context(build.trace()), expected=["write_file"])
    assert result.reason == (
        "forbidden: `write_file` occurred 2 times (first: tool call `write_file`, turn 0, denied)"
    )
    assert zh(result) == (
        "出现了禁止的操作：`write_file` 出现了 2 次"
        "（首次：工具调用 `write_file`，轮次 0，已被拒绝）"
    )
    assert result.span_id == first.span_id


def test_forbidden_kinds_each_named_in_chinese_and_a_clean_trace_points_nowhere():
    build = TraceBuilder()
    span = build.tool("db", {"sql": "delete"})
    build.event(A.STATE_CHANGE, {A.STATE_TARGET: "orders", A.STATE_OP: "delete"}, span)
    result = check("forbidden_events", context(build.trace()), expected=["delete", "exec"])
    assert zh(result) == (
        "出现了禁止的操作：`delete` 出现了 1 次（首次：orders 的状态变更 `delete`）"
    )
    assert result.span_id == span.span_id
    clean = check("forbidden_events", context(build.trace()), expected=["exec", "drop"])
    assert (clean.verdict, clean.span_id) == ("pass", None)
    assert zh(clean) == "exec, drop 均未出现"


def test_limits_in_chinese_point_at_the_first_tool_call_past_the_limit():
    build = TraceBuilder()
    calls = [build.tool("read_file", {"path": str(n)}) for n in range(4)]
    result = check("limits", context(build.trace()), tool_calls=2)
    assert result.reason == "exceeded: tool_calls 4 > limit 2"
    assert zh(result) == "超出限制：tool_calls 为 4，超过上限 2"
    assert result.span_id == calls[2].span_id
    at_limit = check("limits", context(build.trace()), tool_calls=4)
    assert at_limit.verdict == "pass" and at_limit.span_id is None
    assert zh(at_limit) == "未超出限制：tool_calls 4 ≤ 4"


def test_a_token_limit_points_at_the_model_call_that_crossed_it():
    build = TraceBuilder()
    build.chat(input_tokens=800, output_tokens=100)
    crossing = build.chat(input_tokens=900, output_tokens=100)
    last = build.chat(input_tokens=500, output_tokens=50)
    result = check("limits", context(build.trace()), tokens=1000)
    assert result.span_id == crossing.span_id
    # Exactly at the limit is within it: the next call is the one that crosses.
    assert check("limits", context(build.trace()), tokens=1900).span_id == last.span_id


def test_wall_time_over_its_limit_points_at_the_agent_span():
    build = TraceBuilder()
    build.tool("read_file")
    trace = build.trace(wall_time_ms=3412)
    result = check("limits", context(trace), wall_time_ms=3000)
    assert result.span_id == build.root.span_id
    assert zh(result) == "超出限制：wall_time_ms 为 3412，超过上限 3000"


def test_a_call_beyond_a_once_grant_reads_in_chinese_and_points_at_the_second_call():
    build = TraceBuilder()
    build.tool("refund", {"order": "A1"})
    second = build.tool("refund", {"order": "A2"})
    case = make_case(permissions={"refund": "once"})
    result = check("permissions_respected", context(build.trace(), case=case))
    assert result.reason == "`refund` is granted once but was called 2 times"
    assert zh(result) == "`refund` 只授权一次，却被调用了 2 次"
    assert result.span_id == second.span_id
    one = TraceBuilder()
    one.tool("refund", {"order": "A1"})
    passed = check("permissions_respected", context(one.trace(), case=case))
    assert passed.reason == "1 tool call stayed within the case's grants"
    assert zh(passed) == "1 次工具调用均未超出用例的授权"
    assert passed.span_id is None


def test_a_refusal_the_sandbox_recorded_keeps_its_reason_as_written_in_chinese():
    build = TraceBuilder()
    build.tool("read_file")
    refused = build.tool("write_file", {"path": "x"})
    build.event(
        A.PERMISSION,
        {
            A.PERMISSION_TOOL: "write_file",
            A.PERMISSION_DECISION: "denied",
            A.PERMISSION_SCOPE: "session",
            A.PERMISSION_REASON: "outside the workspace",
        },
        refused,
    )
    case = make_case(allowed_tools=["read_file"])
    result = check("permissions_respected", context(build.trace(), case=case))
    assert result.reason == "`write_file` was denied (scope session, outside the workspace)"
    assert zh(result) == "`write_file` 被拒绝（范围 session，outside the workspace）"
    assert result.span_id == refused.span_id


def test_tools_outside_allowed_tools_and_denied_tools_each_in_chinese_first_one_marked():
    build = TraceBuilder()
    shell = build.tool("shell", {"cmd": "ls"})
    build.tool("delete_user", {"id": 1})
    build.tool("delete_user", {"id": 2})
    case = make_case(
        allowed_tools=["shell", "delete_user", "read_file"],
        permissions={"shell": "deny", "delete_user": "deny"},
    )
    result = check("permissions_respected", context(build.trace(), case=case))
    assert result.reason == (
        "`shell` is denied but was called once; `delete_user` is denied but was called 2 times"
    )
    assert zh(result) == (
        "`shell` 已被禁用，却仍被调用了 1 次；`delete_user` 已被禁用，却仍被调用了 2 次"
    )
    assert result.span_id == shell.span_id
    outside = check(
        "permissions_respected", context(build.trace(), case=make_case(allowed_tools=["shell"]))
    )
    assert zh(outside) == "`delete_user` 不在 allowed_tools 中（被调用了 2 次）"


def test_calls_beyond_recorded_once_grants_read_in_chinese():
    build = TraceBuilder()
    first = build.tool("pay", {"amount": 1})
    build.permission("pay", "granted", "once", first)
    beyond = build.tool("pay", {"amount": 2})
    result = check("permissions_respected", context(build.trace()))
    assert result.reason == "`pay` was granted `once` by 1 recorded decision but was called 2 times"
    assert zh(result) == "trace 记录了 1 次对 `pay` 的 `once` 授权，它却被调用了 2 次"
    assert result.span_id == beyond.span_id


def test_wrong_routing_reads_in_chinese_and_points_at_the_routing_span():
    build = TraceBuilder()
    build.tool("lookup")
    router = build.tool("route")
    router.attributes[A.SKILL_NAME] = "billing"
    result = check("skill_routed", context(build.trace()), expected="refunds")
    assert result.reason == "routed to billing; expected `refunds`"
    assert zh(result) == "路由到了 billing；预期是 `refunds`"
    assert result.span_id == router.span_id
    right = check("skill_routed", context(build.trace()), expected="billing")
    assert (zh(right), right.span_id) == ("已路由到 `billing`", None)
    unknown = check("skill_routed", context(TraceBuilder().trace()), expected="billing")
    assert unknown.verdict == "not_evaluated"
    assert zh(unknown).startswith("trace 中没有技能路由的依据")


def test_an_open_span_reads_in_chinese_and_is_the_span_marked():
    build = TraceBuilder()
    build.tool("read_file")
    trace = build.trace(ended=False)
    result = check("trace_complete", context(trace))
    assert result.reason == "`invoke_agent demo` never ended: the run was cut off"
    assert zh(result) == "`invoke_agent demo` 没有结束：运行被中途切断"
    assert result.span_id == build.root.span_id


def test_spans_whose_parent_is_missing_read_in_chinese_and_the_first_is_marked():
    build = TraceBuilder()
    calls = [build.tool(f"t{n}") for n in range(5)]
    spans = [s for s in build.trace().spans if s.span_id != build.root.span_id]
    result = check("trace_complete", context(Trace(trace_id="ab" * 16, spans=spans)))
    assert result.reason.startswith(
        "the trace has no invoke_agent span (5 spans): the agent's run was not recorded; "
        "`execute_tool t0`, `execute_tool t1`, `execute_tool t2` and 2 more (5 spans) have a "
        "parent missing from the trace"
    )
    assert zh(result).startswith(
        "trace 中没有 invoke_agent span（共 5 个 span）：智能体的运行没有被记录下来；"
        "`execute_tool t0`, `execute_tool t1`, `execute_tool t2`，另有 2 个（5 个 span）的父 "
        "span 不在 trace 中"
    )
    assert result.span_id == calls[0].span_id
    lone = check("trace_complete", context(Trace(trace_id="ab" * 16, spans=spans[:1])))
    assert lone.reason.startswith("the trace has no invoke_agent span (1 span): ")
    assert lone.reason.endswith(
        " `execute_tool t0` has a parent missing from the trace (span id "
        f"{build.root.span_id}): the agent's root span never arrived "
        "(a crash or a lost export)"
    )


def test_a_failed_agent_span_reads_in_chinese_with_its_status_message_as_written():
    build = TraceBuilder()
    build.tool("read_file")
    build.root.status = "error"
    build.root.status_message = "RuntimeError: boom"
    result = check("trace_complete", context(build.trace()))
    assert result.reason == "`invoke_agent demo` ended with error status: RuntimeError: boom"
    assert zh(result) == "`invoke_agent demo` 以错误状态结束：RuntimeError: boom"
    assert result.span_id == build.root.span_id


def test_a_whole_trace_passes_in_chinese_and_points_nowhere():
    build = TraceBuilder()
    build.tool("read_file")
    result = check("trace_complete", context(build.trace()))
    assert result.reason == (
        "`invoke_agent demo` ended after 10 ms; all 2 spans ended under a recorded parent"
    )
    assert (
        zh(result)
        == "`invoke_agent demo` 运行 10 ms 后结束；2 个 span 均已结束，没有缺失父 span 的"
    )
    assert result.span_id is None
    alone = check("trace_complete", context(TraceBuilder().trace()))
    assert alone.reason == "`invoke_agent demo` ended after 0 ms; it is the trace's only span"


def test_a_cost_limit_points_at_the_span_whose_cost_crossed_it():
    build = TraceBuilder()
    first = build.chat(cost_usd=0.004)
    build.tool("read_file")
    second = build.chat(cost_usd=0.005)
    trace = build.trace()
    assert check("limits", context(trace), cost_usd=0.003).span_id == first.span_id
    at_first = check("limits", context(trace), cost_usd=0.004)
    assert at_first.span_id == second.span_id
    assert render(at_first.message, language="zh_CN") == (
        "超出限制：cost_usd 为 0.0090，超过上限 0.0040"
    )
    assert check("limits", context(trace), cost_usd=0.0095).span_id is None


def test_a_refusal_by_seatrials_own_policy_quotes_its_reason_in_chinese():
    build = TraceBuilder()
    refused = build.tool("write_file", {"path": "NOTES.md"}, error="permission_denied", turn=1)
    build.event(
        A.PERMISSION,
        {
            A.PERMISSION_TOOL: "write_file",
            A.PERMISSION_DECISION: "denied",
            A.PERMISSION_SCOPE: "once",
            A.PERMISSION_REASON: "a once grant allows one call and it was used",
        },
        refused,
    )
    result = check("permissions_respected", context(build.trace()))
    assert result.reason == (
        "`write_file` was denied (scope once, a once grant allows one call and it was used)"
    )
    assert zh(result) == "`write_file` 被拒绝（范围 once，一次性授权只能调用一次，已经用掉了）"
    assert result.span_id == refused.span_id
