"""How a ``model:`` agent's tool calls are answered: its ``implementations``.

``python:MODULE_OR_FILE:FUNCTION`` calls a function with the call's arguments;
``sandbox`` is the sandbox tool of the same name on the case's fixture (``read_file`` ...);
``recorded:FILE.jsonl`` answers from recorded results keyed on the canonical JSON of the
arguments. Every call is recorded as an ``execute_tool`` span, and every call passes through
:meth:`Session.call_tool_async`, where the permission policy (and fault injection) apply.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from seatrial.agent._errors import ToolError
from seatrial.agent._model_tools import argument_problems
from seatrial.agent._python import PythonAgent
from seatrial.agent._sandbox import SANDBOX_TOOLS
from seatrial.agent._session import Session
from seatrial.agent._tool import registered_tool, tool_span
from seatrial.errors import AgentSpecError
from seatrial.i18n import gettext as _
from seatrial.trace import attrs as A

Unrecorded = Literal["error", "fault"]
"""What a recorded tool answers to arguments it has no result for."""

KINDS = ("python:MODULE_OR_FILE:FUNCTION", "sandbox", "recorded:FILE.jsonl")

Bind = Callable[[Session], Callable[..., Any] | None]
"""Given the attempt's session, the callable it puts in ``session.tools`` (None: the session
already answers that name, as for sandbox tools)."""


def canonical(arguments: Any) -> str:
    """The key recorded results are looked up by: JSON, keys sorted, no spaces, UTF-8."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Implementation:
    """One tool's implementation, checked; ``bind`` makes it for an attempt."""

    tool: str
    kind: str
    bind: Bind


def implementation(
    tool: str, spec: str, *, base_dir: Path, unrecorded: Unrecorded, where: str
) -> Implementation:
    """The implementation ``spec`` of ``tool``, loaded and checked now (exit 2 when bad)."""
    spec = spec.strip()
    if spec == "sandbox":
        if tool not in SANDBOX_TOOLS:
            raise AgentSpecError(
                _(
                    "{where}: `{tool}: sandbox` names no sandbox tool (sandbox tools: {tools}); "
                    "name the tool after one, or give it a python: or recorded: implementation"
                ).format(where=where, tool=tool, tools=", ".join(SANDBOX_TOOLS))
            )
        return Implementation(tool, "sandbox", lambda session: None)
    if spec.startswith("python:"):
        function = _load_function(spec, base_dir, where)
        return Implementation(tool, "python", functools.partial(_bind_python, tool, function))
    if spec.startswith("recorded:"):
        file = Path(spec.removeprefix("recorded:"))
        file = file if file.is_absolute() else base_dir / file
        table = _read_recorded(file, tool, where)
        bind = functools.partial(_bind_recorded, tool, table, file, unrecorded)
        return Implementation(tool, "recorded", bind)
    raise AgentSpecError(
        _("{where}: `{tool}: {spec}` is not an implementation; write one of: {kinds}").format(
            where=where, tool=tool, spec=spec, kinds=", ".join(KINDS)
        )
    )


def _load_function(spec: str, base_dir: Path, where: str) -> Callable[..., Any]:
    try:
        # The python agent's loader: same module and file rules, same error messages.
        return PythonAgent(spec, base_dir=base_dir)._load()
    except AgentSpecError as exc:
        raise AgentSpecError(f"{where}: {exc}") from exc


def check_arguments(tool: str, session: Session, arguments: dict[str, Any]) -> None:
    """Refuse arguments outside the tool's schema before its implementation runs: a failed
    call (``invalid_arguments``) whose message names each problem and the parameters, never
    the Python TypeError of a function called with an argument it lacks. Runs after the
    session's fault injection, so a ``tool_faults`` call number counts every call made."""
    schema = session.tool_schemas.get(tool)
    problems = argument_problems(schema, arguments) if schema is not None else None
    if problems is not None:
        with tool_span(session.recorder, tool, arguments):
            raise ToolError(problems, "invalid_arguments")


def _checked(tool: str, function: Callable[..., Any], session: Session) -> Callable[..., Any]:
    """``function`` (which records its own span) behind :func:`check_arguments`."""
    # wraps: the session reads the tool's signature (its defaults) through __wrapped__.
    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def checked_async(**arguments: Any) -> Any:
            check_arguments(tool, session, arguments)
            return await function(**arguments)

        return checked_async

    @functools.wraps(function)
    def checked(**arguments: Any) -> Any:
        check_arguments(tool, session, arguments)
        return function(**arguments)

    return checked


def _bind_python(tool: str, function: Callable[..., Any], session: Session) -> Callable[..., Any]:
    info = registered_tool(getattr(function, "__name__", ""))
    read_only = False
    if info is not None and info.function is function:
        read_only = info.read_only
        plain = getattr(function, "__wrapped__", function)
        if info.name == tool and "session" not in inspect.signature(plain).parameters:
            return _checked(tool, function, session)  # it records its own span, by this name
        function = plain
    wants_session = "session" in inspect.signature(function).parameters
    extra = {"session": session} if wants_session else {}
    recorder = session.recorder

    if inspect.iscoroutinefunction(function):

        async def call_async(**arguments: Any) -> Any:
            check_arguments(tool, session, arguments)
            with tool_span(recorder, tool, arguments) as span:
                session.policy.authorize(recorder, tool, write=not read_only)
                result = await function(**arguments, **extra)
                span.result(result)
                return result

        return call_async

    def call(**arguments: Any) -> Any:
        check_arguments(tool, session, arguments)
        with tool_span(recorder, tool, arguments) as span:
            session.policy.authorize(recorder, tool, write=not read_only)
            result = function(**arguments, **extra)
            span.result(result)
            return result

    return call


@dataclass(frozen=True)
class _Recorded:
    result: Any = None
    error: str | None = None


def _read_recorded(file: Path, tool: str, where: str) -> dict[str, _Recorded]:
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AgentSpecError(
            _(
                "{where}: cannot read recorded results {file}: {error}; fix the path "
                "(relative to the folder of seatrial.yaml)"
            ).format(where=where, file=file, error=exc.strerror or exc)
        ) from exc
    table: dict[str, _Recorded] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AgentSpecError(
                _("{file}:{line}: not JSON: {error}").format(file=file, line=number, error=exc.msg)
            ) from exc
        if not isinstance(entry, dict) or "arguments" not in entry:
            raise AgentSpecError(
                _("{file}:{line}: write one JSON object a line: {example}").format(
                    file=file,
                    line=number,
                    example='{"arguments": {...}, "result": ...} '
                    '(or "error": "message"; optional "tool")',
                )
            )
        if entry.get("tool", tool) != tool:
            continue  # one file may hold several tools' results
        error = entry.get("error")
        table[canonical(entry["arguments"])] = _Recorded(
            entry.get("result"), str(error) if error is not None else None
        )
    return table


def _bind_recorded(
    tool: str, table: dict[str, _Recorded], file: Path, unrecorded: Unrecorded, session: Session
) -> Callable[..., Any]:
    recorder = session.recorder

    def call(**arguments: Any) -> Any:
        check_arguments(tool, session, arguments)
        with tool_span(recorder, tool, arguments) as span:
            # A recorded answer changes nothing anywhere: read-only for the policy.
            session.policy.authorize(recorder, tool, write=False)
            key = canonical(arguments)
            found = table.get(key)
            if found is not None and found.error is not None:
                raise ToolError(found.error, "recorded_error")
            if found is not None:
                span.result(found.result)
                return found.result
            if unrecorded == "error":
                raise ToolError(
                    f"`{tool}` has no recorded result for the arguments {key} "
                    f"(recorded in {file.name})",
                    "unrecorded_arguments",
                )
            # Answered as an injected `empty` fault is (agent/_faults.py): a failed call.
            span.span.attributes[A.FAULT] = "empty"
            span.span.attributes[A.ERROR_TYPE] = "empty"
            span.span.status = "error"
            span.span.status_message = f"no recorded result for {key}: injected fault empty"
            span.result("")
            return ""

    return call
