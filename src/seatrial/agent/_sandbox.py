"""Sandbox tools: file, command and HTTP tools confined to an attempt's workspace.

Each call is checked by the attempt's :class:`PermissionPolicy` and recorded as an
``execute_tool`` span. Write-class calls carry ``seatrial.event.kind`` (``write_file``,
``run_command``, ``network_request``) and, when they succeed, a ``seatrial.state_change``
event, so L1 assertions can check forbidden events and side effects on the trace.
"""

from __future__ import annotations

import inspect
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

from seatrial.agent._errors import ToolError
from seatrial.agent._policy import WRITE_TOOLS, PermissionPolicy
from seatrial.agent._tool import ToolCallSpan, tool_span
from seatrial.case import Case
from seatrial.trace import TraceRecorder
from seatrial.trace import attrs as A

SANDBOX_TOOLS = ("list_directory", "read_file", "write_file", "run_command", "http_request")
"""The sandbox's tool names, as agents call them."""

EVENT_KINDS = {
    "write_file": "write_file",
    "run_command": "run_command",
    "http_request": "network_request",
}
"""``seatrial.event.kind`` of each write-class tool, for ``forbidden_events``."""

T = TypeVar("T")

_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key"})
_OUTSIDE = "path_outside_workspace"


def _redacted(headers: dict[str, str] | None) -> dict[str, str] | None:
    if headers is None:
        return None
    return {k: ("***" if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()}


class Sandbox:
    """The sandbox tools of one attempt, confined to ``workspace``."""

    def __init__(
        self,
        workspace: Path,
        case: Case,
        recorder: TraceRecorder,
        policy: PermissionPolicy | None = None,
    ) -> None:
        self.workspace = Path(workspace).resolve()
        self.case = case
        self.recorder = recorder
        self.policy = policy or PermissionPolicy(case)

    # -- the tools ---------------------------------------------------------------------

    def list_directory(self, path: str = ".") -> list[dict[str, str]]:
        """The entries of a workspace folder sorted by name: ``{name, type: file|directory}``."""

        def run(call: ToolCallSpan) -> list[dict[str, str]]:
            folder = self._resolve(path)
            return [
                {"name": p.name, "type": "directory" if p.is_dir() else "file"}
                for p in sorted(folder.iterdir(), key=lambda p: p.name)
            ]

        return self._call("list_directory", {"path": path}, run)

    def read_file(self, path: str) -> str:
        """The text of a workspace file (UTF-8; undecodable bytes replaced)."""

        def run(call: ToolCallSpan) -> str:
            return self._resolve(path).read_text(encoding="utf-8", errors="replace")

        return self._call("read_file", {"path": path}, run)

    def write_file(self, path: str, content: str) -> dict[str, Any]:
        """Create or replace a workspace file (folders are made as needed)."""

        def run(call: ToolCallSpan) -> dict[str, Any]:
            target = self._resolve(path)
            op = "modify" if target.exists() else "create"
            target.parent.mkdir(parents=True, exist_ok=True)
            data = content.encode("utf-8")
            target.write_bytes(data)
            relative = target.relative_to(self.workspace).as_posix()
            self._state_change(relative, op)
            return {"path": relative, "op": op, "bytes": len(data)}

        return self._call("write_file", {"path": path, "content": content}, run)

    def run_command(self, command: str, timeout_s: float = 10) -> dict[str, Any]:
        """Run a shell command in the workspace folder; a non-zero exit marks the span failed.

        The command runs with the workspace as its folder and ``HOME`` and a minimal
        environment (no secrets of the Seatrial process); it is not a jail.
        """

        def run(call: ToolCallSpan) -> dict[str, Any]:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(self.workspace),
                "LANG": os.environ.get("LANG", "C.UTF-8"),
            }
            process = subprocess.Popen(
                command,
                shell=True,
                cwd=self.workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            try:
                stdout, stderr = process.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired as exc:
                # Kill the whole process group: a shell's children would outlive it otherwise.
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
                raise ToolError(
                    f"command timed out after {timeout_s:g} s: {command}", "timeout"
                ) from exc
            self._state_change(command, "exec")
            result = {"exit_code": process.returncode, "stdout": stdout, "stderr": stderr}
            if process.returncode != 0:
                call.span.attributes[A.ERROR_TYPE] = "nonzero_exit"
                call.span.status = "error"
                call.span.status_message = f"exit code {process.returncode}"
            return result

        return self._call("run_command", {"command": command, "timeout_s": timeout_s}, run)

    def http_request(
        self,
        method: str,
        url: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Send an HTTP request; an answer of 400 or more marks the span failed."""

        def run(call: ToolCallSpan) -> dict[str, Any]:
            content = body if isinstance(body, str | bytes) else None
            payload = None if body is None or content is not None else body
            try:
                with httpx.Client(timeout=10) as client:
                    response = client.request(
                        method.upper(), url, content=content, json=payload, headers=headers
                    )
            except httpx.HTTPError as exc:
                raise ToolError(
                    f"{method.upper()} {url} failed: {exc}", type(exc).__name__
                ) from exc
            self._state_change(f"{method.upper()} {url}", "request")
            if response.status_code >= 400:
                call.span.attributes[A.ERROR_TYPE] = str(response.status_code)
                call.span.status = "error"
                call.span.status_message = f"HTTP {response.status_code}"
            return {
                "status": response.status_code,
                "headers": dict(response.headers),
                "body": response.text,
            }

        arguments = {"method": method, "url": url, "body": body, "headers": _redacted(headers)}
        return self._call("http_request", arguments, run)

    def call(self, name: str, **arguments: Any) -> Any:
        """Call a sandbox tool by name, as an agent's tool-call message names it."""
        method: Callable[..., Any] | None = getattr(self, name) if name in SANDBOX_TOOLS else None
        problem = None
        if method is None:
            problem = ToolError(
                f"unknown sandbox tool `{name}`; sandbox tools: {', '.join(SANDBOX_TOOLS)}",
                "unknown_tool",
            )
        else:
            try:
                inspect.signature(method).bind(**arguments)
            except TypeError as exc:
                problem = ToolError(f"bad arguments for `{name}`: {exc}", "invalid_arguments")
        if problem is not None:
            with tool_span(self.recorder, name, arguments, event_kind=EVENT_KINDS.get(name)):
                self.policy.authorize(self.recorder, name, write=name in WRITE_TOOLS)
                raise problem
        assert method is not None
        return method(**arguments)

    # -- machinery -----------------------------------------------------------------------

    def _call(self, name: str, arguments: dict[str, Any], run: Callable[[ToolCallSpan], T]) -> T:
        with tool_span(self.recorder, name, arguments, event_kind=EVENT_KINDS.get(name)) as call:
            self.policy.authorize(self.recorder, name, write=name in WRITE_TOOLS)
            try:
                result = run(call)
            except OSError as exc:
                reason = exc.strerror or str(exc)
                raise ToolError(
                    f"{name} {arguments.get('path', '')}: {reason}".strip(), type(exc).__name__
                ) from exc
            call.result(result)
            return result

    def _resolve(self, path: str) -> Path:
        """A path inside the workspace; ``..``, absolute paths and escaping links are refused."""
        target = (self.workspace / path).resolve()
        if not target.is_relative_to(self.workspace):
            raise ToolError(f"`{path}` is outside the workspace; use a path inside it", _OUTSIDE)
        return target

    def _state_change(self, target: str, op: str) -> None:
        self.recorder.event(A.STATE_CHANGE, {A.STATE_TARGET: target, A.STATE_OP: op})
