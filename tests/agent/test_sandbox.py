"""Sandbox tools: confinement to the workspace, the permission policy, and what is recorded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from seatrial.agent import Sandbox, ToolDenied, ToolError, prepare_workspace
from seatrial.case import Case
from seatrial.testing import AgentServer
from seatrial.trace import Trace, TraceRecorder
from seatrial.trace import attrs as A


@pytest.fixture
def fixture_dir(tmp_path: Path) -> Path:
    root = tmp_path / "three-files"
    (root / "docs").mkdir(parents=True)
    (root / "README.md").write_text("# Project\n", encoding="utf-8")
    (root / "docs" / "design.md").write_text("design\n", encoding="utf-8")
    (root / "notes.txt").write_text("notes\n", encoding="utf-8")
    return root


def sandbox_for(workspace: Path, **case_fields) -> Sandbox:
    case = Case(id="sample", input="do it", **case_fields)
    return Sandbox(workspace, case, TraceRecorder())


def trace_of(sandbox: Sandbox) -> Trace:
    return sandbox.recorder.trace()


def permission_events(sandbox: Sandbox) -> list[dict]:
    return [e.attributes for _, e in trace_of(sandbox).events(A.PERMISSION)]


def test_each_attempt_gets_a_fresh_copy_of_the_fixture_removed_afterwards(fixture_dir):
    case = Case(id="read-only-001", input="list", fixture=str(fixture_dir))
    with prepare_workspace(case) as first:
        (first.path / "README.md").write_text("changed", encoding="utf-8")
        first_path = first.path
    with prepare_workspace(case) as second:
        assert (second.path / "README.md").read_text(encoding="utf-8") == "# Project\n"
        assert second.path != first_path
    assert not first_path.exists() and not second.path.exists()
    assert (fixture_dir / "README.md").read_text(encoding="utf-8") == "# Project\n"


def test_a_case_without_fixture_gets_an_empty_workspace():
    with prepare_workspace(Case(id="c", input="x")) as workspace:
        assert workspace.fixture is None
        assert list(workspace.path.iterdir()) == []


def test_read_tools_list_and_read_inside_the_workspace(fixture_dir):
    with prepare_workspace(Case(id="c", input="x", fixture=str(fixture_dir))) as workspace:
        sandbox = sandbox_for(workspace.path, allowed_tools=["list_directory", "read_file"])
        assert sandbox.list_directory() == [
            {"name": "README.md", "type": "file"},
            {"name": "docs", "type": "directory"},
            {"name": "notes.txt", "type": "file"},
        ]
        assert sandbox.list_directory("docs") == [{"name": "design.md", "type": "file"}]
        assert sandbox.call("read_file", path="docs/design.md") == "design\n"
    calls = trace_of(sandbox).tool_calls()
    assert [(c.name, c.arguments, c.success) for c in calls] == [
        ("list_directory", {"path": "."}, True),
        ("list_directory", {"path": "docs"}, True),
        ("read_file", {"path": "docs/design.md"}, True),
    ]
    assert [entry["name"] for entry in calls[0].result] == ["README.md", "docs", "notes.txt"]
    # Read-only tools within allowed_tools need no permission event.
    assert permission_events(sandbox) == []


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/hostname", "docs/../../x"])
def test_paths_outside_the_workspace_are_refused_and_recorded(tmp_path, path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandbox = sandbox_for(workspace)
    with pytest.raises(ToolError) as caught:
        sandbox.read_file(path)
    assert caught.value.error_type == "path_outside_workspace"
    (call,) = trace_of(sandbox).tool_calls()
    assert call.error_type == "path_outside_workspace"


def test_a_symlink_escaping_the_workspace_is_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read", encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.symlink(secret, workspace / "link.txt")
    sandbox = sandbox_for(workspace, permissions={"write_file": "session"})
    with pytest.raises(ToolError, match="outside the workspace"):
        sandbox.read_file("link.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        sandbox.write_file("link.txt", "overwritten")
    assert secret.read_text(encoding="utf-8") == "do not read"


def test_a_missing_file_is_a_tool_error_of_its_kind(tmp_path):
    sandbox = sandbox_for(tmp_path)
    with pytest.raises(ToolError) as caught:
        sandbox.read_file("nope.md")
    assert caught.value.error_type == "FileNotFoundError"
    (call,) = trace_of(sandbox).tool_calls()
    assert (call.success, call.error_type) == (False, "FileNotFoundError")


def test_a_once_grant_allows_one_write_and_records_the_denied_second(tmp_path):
    sandbox = sandbox_for(tmp_path, permissions={"write_file": "once"})
    sandbox.write_file("a.txt", "first")
    with pytest.raises(ToolDenied) as caught:
        sandbox.write_file("b.txt", "second")
    assert caught.value.scope == "once"
    assert not (tmp_path / "b.txt").exists()
    events = permission_events(sandbox)
    assert [(e[A.PERMISSION_SCOPE], e[A.PERMISSION_DECISION]) for e in events] == [
        ("once", "granted"),
        ("once", "denied"),
    ]
    calls = trace_of(sandbox).tool_calls()
    assert [c.error_type for c in calls] == [None, "permission_denied"]
    assert all(c.span.attributes[A.EVENT_KIND] == "write_file" for c in calls)


def test_session_grants_every_write_and_deny_refuses_all(tmp_path):
    granted = sandbox_for(tmp_path, permissions={"write_file": "session"})
    for i in range(3):
        granted.write_file(f"f{i}.txt", "x")
    assert [e[A.PERMISSION_DECISION] for e in permission_events(granted)] == ["granted"] * 3
    refused = sandbox_for(tmp_path, permissions={"run_command": "deny"})
    with pytest.raises(ToolDenied, match="permissions.run_command is deny"):
        refused.run_command("echo hi")


def test_production_refuses_every_write_tool(tmp_path):
    sandbox = sandbox_for(tmp_path, env="production", permissions={"write_file": "session"})
    assert sandbox.list_directory() == []
    for name, arguments in [
        ("write_file", {"path": "x.txt", "content": "x"}),
        ("run_command", {"command": "touch y"}),
        ("http_request", {"method": "GET", "url": "http://127.0.0.1:9/"}),
    ]:
        with pytest.raises(ToolDenied, match="production: read-only tools only"):
            sandbox.call(name, **arguments)
    assert list(tmp_path.iterdir()) == []
    assert {e[A.PERMISSION_DECISION] for e in permission_events(sandbox)} == {"denied"}


def test_a_tool_not_in_allowed_tools_is_denied(tmp_path):
    sandbox = sandbox_for(tmp_path, allowed_tools=["list_directory", "read_file"])
    with pytest.raises(ToolDenied) as caught:
        sandbox.write_file("x.txt", "x")
    assert caught.value.scope == "allowed_tools"
    (event,) = permission_events(sandbox)
    assert event[A.PERMISSION_TOOL] == "write_file"
    assert event[A.PERMISSION_DECISION] == "denied"


def test_writes_record_state_changes_create_then_modify(tmp_path):
    sandbox = sandbox_for(tmp_path)
    assert sandbox.write_file("out/report.md", "v1") == {
        "path": "out/report.md",
        "op": "create",
        "bytes": 2,
    }
    sandbox.write_file("out/report.md", "v2")
    changes = [e.attributes for _, e in trace_of(sandbox).events(A.STATE_CHANGE)]
    assert [(c[A.STATE_TARGET], c[A.STATE_OP]) for c in changes] == [
        ("out/report.md", "create"),
        ("out/report.md", "modify"),
    ]
    assert (tmp_path / "out" / "report.md").read_text(encoding="utf-8") == "v2"


def test_run_command_runs_in_the_workspace_and_a_failure_shows_in_the_span(tmp_path):
    sandbox = sandbox_for(tmp_path)
    result = sandbox.run_command("pwd && echo $HOME")
    assert result["exit_code"] == 0
    assert result["stdout"].split() == [str(tmp_path.resolve())] * 2
    failed = sandbox.run_command("exit 3")
    assert failed["exit_code"] == 3
    calls = trace_of(sandbox).tool_calls()
    assert [(c.success, c.error_type) for c in calls] == [(True, None), (False, "nonzero_exit")]
    assert [e.attributes[A.STATE_OP] for _, e in trace_of(sandbox).events(A.STATE_CHANGE)] == [
        "exec",
        "exec",
    ]


def test_a_command_past_its_timeout_is_killed(tmp_path):
    sandbox = sandbox_for(tmp_path)
    with pytest.raises(ToolError) as caught:
        sandbox.run_command("sleep 30", timeout_s=0.2)
    assert caught.value.error_type == "timeout"


def test_http_request_is_a_network_request_with_secrets_redacted(tmp_path):
    with AgentServer(lambda request: "pong") as server:
        sandbox = sandbox_for(tmp_path)
        answer = sandbox.http_request(
            "post", server.url, body={"message": "ping"}, headers={"Authorization": "Bearer k"}
        )
        assert server.requests[0].headers["authorization"] == "Bearer k"
    assert answer["status"] == 200
    (call,) = trace_of(sandbox).tool_calls()
    assert call.span.attributes[A.EVENT_KIND] == "network_request"
    assert call.arguments["headers"] == {"Authorization": "***"}
    (change,) = [e.attributes for _, e in trace_of(sandbox).events(A.STATE_CHANGE)]
    assert change == {A.STATE_TARGET: f"POST {server.url}", A.STATE_OP: "request"}


def test_unknown_tools_and_bad_arguments_are_recorded_tool_errors(tmp_path):
    sandbox = sandbox_for(tmp_path)
    with pytest.raises(ToolError) as unknown:
        sandbox.call("delete_everything")
    with pytest.raises(ToolError) as bad:
        sandbox.call("read_file", filename="README.md")
    assert (unknown.value.error_type, bad.value.error_type) == ("unknown_tool", "invalid_arguments")
    assert [c.error_type for c in trace_of(sandbox).tool_calls()] == [
        "unknown_tool",
        "invalid_arguments",
    ]
