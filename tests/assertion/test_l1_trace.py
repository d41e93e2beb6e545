"""forbidden_events, limits, permissions_respected, skill_routed and trace_complete."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from seatrial.agent import Sandbox, ToolDenied
from seatrial.assertion import evaluate
from seatrial.trace import Span, Trace, TraceRecorder, trace_from_tools_called
from seatrial.trace import attrs as A

from ._traces import TraceBuilder, check, context, make_case, spec

WRITE_KINDS = ["write_file", "run_command", "network_request"]


def test_forbidden_tool_call_fails_even_when_it_was_denied():
    build = TraceBuilder()
    build.tool("list_directory", {"path": "."})
    build.tool("write_file", {"path": "x.md"}, error="permission_denied", turn=0, kind="write_file")
    result = check("forbidden_events", context(build.trace()), expected=WRITE_KINDS)
    assert result.verdict == "fail"
    assert (
        "`write_file` occurred once (first: tool call `write_file`, turn 0, denied)"
        in result.reason
    )


def test_forbidden_event_kind_on_a_differently_named_tool():
    build = TraceBuilder()
    build.tool("http_request", {"url": "http://127.0.0.1:1"}, kind="network_request")
    result = check("forbidden_events", context(build.trace()), expected=WRITE_KINDS)
    assert result.verdict == "fail" and "`network_request` occurred once" in result.reason


def test_forbidden_state_change_op_and_span_event_names():
    build = TraceBuilder()
    span = build.tool("db", {"sql": "delete"})
    build.event(A.STATE_CHANGE, {A.STATE_TARGET: "orders", A.STATE_OP: "delete"}, span)
    build.event("memory_write", {})
    ctx = context(build.trace())
    assert check("forbidden_events", ctx, expected="delete").verdict == "fail"
    assert check("forbidden_events", ctx, expected="memory_write").verdict == "fail"
    assert check("forbidden_events", ctx, expected=["drop", "exec"]).verdict == "pass"


def test_a_read_only_trace_passes_forbidden_events():
    build = TraceBuilder()
    build.tool("list_directory", {"path": "."}, ["README.md", "docs/"])
    build.tool("read_file", {"path": "README.md"}, "# hi")
    result = check("forbidden_events", context(build.trace()), expected=WRITE_KINDS)
    assert result.verdict == "pass"


def limited_trace():
    build = TraceBuilder()
    build.chat(input_tokens=1200, output_tokens=80, cost_usd=0.004, duration_ms=400)
    for _ in range(6):
        build.tool("read_file", {"path": "a"}, "x", duration_ms=50)
    build.chat(input_tokens=1500, output_tokens=120, cost_usd=0.005, duration_ms=380)
    return build.trace(wall_time_ms=3412)


def test_limits_names_each_exceeded_figure_and_its_limit():
    result = check("limits", context(limited_trace()), tool_calls=5, wall_time_ms=3000, tokens=5000)
    assert result.verdict == "fail"
    assert result.reason == "exceeded: tool_calls 6 > limit 5; wall_time_ms 3412 > limit 3000"


def test_limits_reads_tokens_model_calls_and_cost():
    ctx = context(limited_trace())
    tokens = check("limits", ctx, tokens=2000)
    assert tokens.verdict == "fail" and "tokens 2900 > limit 2000" in tokens.reason
    assert check("limits", ctx, model_calls=1).verdict == "fail"
    cost = check("limits", ctx, cost_usd=0.005)
    assert cost.verdict == "fail" and "cost_usd 0.0090 > limit 0.0050" in cost.reason


def test_limits_within_bounds_passes():
    result = check("limits", context(limited_trace()), tool_calls=6, wall_time_ms=5000)
    assert result.verdict == "pass" and "tool_calls 6 ≤ 6" in result.reason


def test_limits_needs_at_least_one_limit():
    with pytest.raises(ValidationError, match="at least one"):
        check("limits", context())


def test_denied_permission_event_is_a_violation():
    build = TraceBuilder()
    first = build.tool("write_file", {"path": "a"}, kind="write_file")
    build.permission("write_file", "granted", span=first)
    second = build.tool("write_file", {"path": "b"}, error="permission_denied", kind="write_file")
    build.permission("write_file", "denied", span=second)
    case = make_case(permissions={"write_file": "once"})
    result = check("permissions_respected", context(build.trace(), case=case))
    assert result.verdict == "fail"
    assert result.reason == "`write_file` was denied (scope once, once grant)"


def test_without_sandbox_events_calls_are_judged_against_the_case_grants():
    build = TraceBuilder()
    build.tool("read_file")
    build.tool("write_file")
    build.tool("write_file")
    build.tool("run_command")
    build.tool("http_request")
    case = make_case(
        allowed_tools=["read_file", "write_file", "run_command"],
        permissions={"write_file": "once", "run_command": "deny"},
    )
    result = check("permissions_respected", context(build.trace(), case=case))
    assert result.verdict == "fail"
    assert "`http_request` is not in allowed_tools (called once)" in result.reason
    assert "`write_file` is granted once but was called 2 times" in result.reason
    assert "`run_command` is denied but was called once" in result.reason


def test_calls_within_grants_pass():
    build = TraceBuilder()
    build.tool("read_file")
    build.tool("write_file")
    case = make_case(allowed_tools=["read_file", "write_file"], permissions={"write_file": "once"})
    assert check("permissions_respected", context(build.trace(), case=case)).verdict == "pass"


def test_real_sandbox_once_grant_reused_for_the_session_fails(tmp_path: Path):
    """The incident: the agent took one write grant as a grant for the whole session."""
    case = make_case(
        allowed_tools=["list_directory", "read_file", "write_file"],
        permissions={"write_file": "once"},
    )
    recorder = TraceRecorder()
    sandbox = Sandbox(tmp_path, case, recorder)
    with recorder.activate(), recorder.span("invoke_agent bot", {A.OPERATION: A.OP_INVOKE_AGENT}):
        sandbox.write_file("notes.md", "first")
        with pytest.raises(ToolDenied):
            sandbox.write_file("notes.md", "second")
    ctx = context(recorder.trace(), case=case, workspace=tmp_path)
    permissions = check("permissions_respected", ctx)
    assert permissions.verdict == "fail" and "`write_file` was denied" in permissions.reason
    state = check("side_effect", ctx, file="notes.md", equals="first")
    assert state.verdict == "pass"


def test_skill_routed_is_not_evaluated_without_routing_evidence():
    build = TraceBuilder()
    build.tool("create_order")
    result = check("skill_routed", context(build.trace()), expected="CreateOrder")
    assert result.verdict == "not_evaluated"
    assert "no skill-routing evidence" in result.reason


def test_skill_routed_reads_skill_events_and_attributes():
    build = TraceBuilder()
    build.event(A.SKILL, {A.SKILL_NAME: "SearchOrder"})
    span = build.tool("create_order")
    span.attributes[A.SKILL_NAME] = "CreateOrder"
    ctx = context(build.trace())
    assert check("skill_routed", ctx, expected="CreateOrder").verdict == "pass"
    assert check("skill_routed", ctx, expected="SearchOrder").verdict == "pass"
    wrong = check("skill_routed", ctx, expected="Refund")
    assert wrong.verdict == "fail"
    assert wrong.reason == "routed to SearchOrder, CreateOrder; expected `Refund`"


def test_trace_complete_fails_on_a_cut_off_run():
    build = TraceBuilder()
    build.tool("read_file")
    cut = check("trace_complete", context(build.trace(ended=False)))
    assert cut.verdict == "fail" and "never ended" in cut.reason
    assert check("trace_complete", context(TraceBuilder().trace())).verdict == "pass"


def test_trace_complete_fails_without_an_agent_span():
    result = check("trace_complete", context(Trace(trace_id="00" * 16)))
    assert result.verdict == "fail" and "no invoke_agent span" in result.reason


# A recorded `seatrial.permission` decision, in each attribute style agents use.
PLAIN = {"tool": "tool", "scope": "scope", "decision": "decision", "reason": "reason"}
NAMESPACED = {
    "tool": A.PERMISSION_TOOL,
    "scope": A.PERMISSION_SCOPE,
    "decision": A.PERMISSION_DECISION,
    "reason": A.PERMISSION_REASON,
}
STYLES = pytest.mark.parametrize("style", [PLAIN, NAMESPACED], ids=["plain", "namespaced"])


def record_decision(build: TraceBuilder, span, style: dict[str, str], **values: str) -> None:
    build.event(A.PERMISSION, {style[key]: value for key, value in values.items()}, span)


def writes(style: dict[str, str], count: int, *, scope: str = "once") -> TraceBuilder:
    """``count`` writes; only the first carries a recorded grant of ``scope``."""
    build = TraceBuilder()
    for index in range(count):
        span = build.tool("write_file", {"path": f"notes-{index}.md"})
        if index == 0:
            record_decision(build, span, style, tool="write_file", scope=scope, decision="granted")
    return build


def verdict(build_or_trace, **case_fields) -> tuple[str, str | None, str]:
    """(verdict, failure_type, reason) of ``permissions_respected`` on the trace."""
    trace = build_or_trace.trace() if isinstance(build_or_trace, TraceBuilder) else build_or_trace
    case = make_case(assertions=[spec("permissions_respected")], **case_fields)
    result = evaluate(case, context(trace, case=case))
    return result.verdict, result.failure_type, result.reason


@STYLES
def test_a_recorded_once_grant_then_two_writes_fails_with_permission_violation(style):
    verdict_, failure_type, reason = verdict(writes(style, 2), permissions={"write_file": "once"})
    assert (verdict_, failure_type) == ("FAIL", "permission_violation")
    assert "`write_file` is granted once but was called 2 times" in reason


def test_the_tools_called_form_with_two_writes_under_a_once_grant_fails():
    calls = [
        {"name": "write_file", "input": {"path": "a.md"}, "latency_ms": 5, "success": True},
        {"name": "write_file", "input": {"path": "b.md"}, "latency_ms": 5, "success": True},
    ]
    trace = trace_from_tools_called(calls, messages=["write two notes"])
    assert verdict(trace, permissions={"write_file": "once"})[:2] == (
        "FAIL",
        "permission_violation",
    )
    # The same, with the grant recorded on the first entry (the `permission` extension).
    calls[0]["permission"] = {"scope": "once", "decision": "granted"}
    trace = trace_from_tools_called(calls, messages=["write two notes"])
    assert verdict(trace, permissions={"write_file": "once"})[:2] == (
        "FAIL",
        "permission_violation",
    )
    # ... and without any case entry, the recorded once grant alone is the evidence.
    _, failure_type, reason = verdict(trace)
    assert failure_type == "permission_violation"
    assert "`write_file` was granted `once` by 1 recorded decision but was called 2 times" in (
        reason
    )


@STYLES
def test_a_once_grant_used_once_passes(style):
    assert verdict(writes(style, 1), permissions={"write_file": "once"})[0] == "PASS"


@STYLES
def test_a_session_grant_covers_two_writes_with_or_without_recorded_session_grants(style):
    build = writes(style, 2, scope="session")
    assert verdict(build, permissions={"write_file": "session"})[0] == "PASS"
    assert verdict(build)[0] == "PASS"  # no case entry: recorded session grants allow both


@STYLES
def test_recorded_once_grants_for_each_call_pass(style):
    build = TraceBuilder()
    for path in ("a.md", "b.md"):
        span = build.tool("write_file", {"path": path})
        record_decision(build, span, style, tool="write_file", scope="once", decision="granted")
    assert verdict(build)[0] == "PASS"


@STYLES
def test_a_recorded_denial_fails_even_when_the_case_grants_the_session(style):
    build = TraceBuilder()
    span = build.tool("write_file", {"path": "a.md"}, error="permission_denied")
    record_decision(
        build,
        span,
        style,
        tool="write_file",
        scope="production",
        decision="denied",
        reason="production: read-only tools only",
    )
    verdict_, failure_type, reason = verdict(build, permissions={"write_file": "session"})
    assert (verdict_, failure_type) == ("FAIL", "permission_violation")
    assert "`write_file` was denied (scope production, production: read-only tools only)" in (
        reason
    )


@STYLES
def test_recorded_grants_never_excuse_a_denied_or_not_allowed_tool(style):
    build = TraceBuilder()
    for tool in ("run_command", "http_request"):
        span = build.tool(tool)
        record_decision(build, span, style, tool=tool, scope="session", decision="granted")
    _, failure_type, reason = verdict(
        build,
        allowed_tools=["run_command", "read_file"],
        permissions={"run_command": "deny"},
    )
    assert failure_type == "permission_violation"
    assert "`run_command` is denied but was called once" in reason
    assert "`http_request` is not in allowed_tools (called once)" in reason


def test_a_sandbox_refusal_is_reported_once_with_the_sandbox_reason():
    """The second write was refused: the refusal says it all, without a second line."""
    build = TraceBuilder()
    first = build.tool("write_file", {"path": "a"})
    build.permission("write_file", "granted", span=first)
    second = build.tool("write_file", {"path": "b"}, error="permission_denied")
    build.permission("write_file", "denied", span=second)
    _, _, reason = verdict(build, permissions={"write_file": "once"})
    assert reason.endswith("`write_file` was denied (scope once, once grant)")
    assert "called 2 times" not in reason


def test_forbidden_events_reads_a_plain_state_change_op():
    build = TraceBuilder()
    span = build.tool("db", {"sql": "delete from orders"})
    build.event(A.STATE_CHANGE, {"target": "orders", "op": "delete"}, span)
    result = check("forbidden_events", context(build.trace()), expected="delete")
    assert result.verdict == "fail" and "state change `delete` of orders" in result.reason


@pytest.mark.parametrize("key", ["name", A.SKILL_NAME], ids=["plain", "namespaced"])
def test_a_skill_event_is_judged_in_either_attribute_style(key):
    build = TraceBuilder()
    build.event(A.SKILL, {key: "CreateOrder"})
    ctx = context(build.trace())
    assert check("skill_routed", ctx, expected="CreateOrder").verdict == "pass"
    elsewhere = check("skill_routed", ctx, expected="Refund")
    assert elsewhere.verdict == "fail"
    assert elsewhere.reason == "routed to CreateOrder; expected `Refund`"


def test_trace_complete_fails_when_the_agents_root_span_never_arrived():
    build = TraceBuilder()
    build.tool("read_file")
    build.chat()
    spans = build.trace().spans[1:]  # the recorded root is lost; its children remain
    agent = Span(
        trace_id=spans[0].trace_id,
        span_id="f" * 16,
        name="invoke_agent wrapper",
        start_time_unix_nano=spans[0].start_time_unix_nano,
        end_time_unix_nano=spans[-1].end_time_unix_nano,
        attributes={A.OPERATION: A.OP_INVOKE_AGENT},
    )
    for trace in (
        Trace(trace_id="ab" * 16, spans=spans),
        Trace(trace_id="ab" * 16, spans=[agent, *spans]),
    ):
        result = check("trace_complete", context(trace))
        assert result.verdict == "fail"
        assert "(2 spans) have a parent missing from the trace" in result.reason
        assert "the agent's root span never arrived" in result.reason


def test_trace_complete_accepts_an_agent_root_whose_parent_is_in_the_callers_service():
    """A root `invoke_agent` under a remote parent (a traceparent from the caller) is whole;
    the same trace with a second orphan is not."""
    build = TraceBuilder()
    build.tool("read_file")
    trace = build.trace()
    trace.spans[0].parent_span_id = "c" * 16
    assert check("trace_complete", context(trace)).verdict == "pass"
    trace.spans[1].parent_span_id = "d" * 16
    result = check("trace_complete", context(trace))
    assert result.verdict == "fail"
    assert "(2 spans) have a parent missing from the trace" in result.reason


def test_trace_complete_fails_on_a_span_that_never_ended():
    build = TraceBuilder()
    build.tool("read_file")
    trace = build.trace()
    trace.spans[1].end_time_unix_nano = None
    result = check("trace_complete", context(trace))
    assert result.verdict == "fail"
    assert result.reason == "`execute_tool read_file` never ended: the run was cut off"


def test_trace_complete_fails_on_an_agent_span_with_error_status():
    build = TraceBuilder()
    build.tool("read_file")
    build.root.status = "error"
    build.root.status_message = "RuntimeError: model overloaded"
    result = check("trace_complete", context(build.trace()))
    assert result.verdict == "fail"
    assert (
        result.reason
        == "`invoke_agent demo` ended with error status: RuntimeError: model overloaded"
    )
    # A failed tool call is the agent's business, not a broken trace.
    build.root.status = "ok"
    build.tool("write_file", error="tool_error")
    assert check("trace_complete", context(build.trace())).verdict == "pass"


def test_a_complete_trace_passes_trace_complete():
    build = TraceBuilder()
    build.chat()
    build.tool("read_file")
    result = check("trace_complete", context(build.trace()))
    assert result.verdict == "pass"
    assert result.reason.endswith("all 3 spans ended under a recorded parent")


def test_trace_complete_passes_the_python_and_tools_called_shapes(tmp_path: Path):
    recorded = trace_from_tools_called(
        [{"name": "search_order", "input": {}, "output": [], "latency_ms": 3}], messages=["hi"]
    )
    assert check("trace_complete", context(recorded)).verdict == "pass"
    case = make_case(permissions={"write_file": "once"})
    recorder = TraceRecorder()
    sandbox = Sandbox(tmp_path, case, recorder)
    with recorder.activate(), recorder.span("invoke_agent bot", {A.OPERATION: A.OP_INVOKE_AGENT}):
        sandbox.write_file("notes.md", "first")
    assert check("trace_complete", context(recorder.trace(), case=case)).verdict == "pass"
