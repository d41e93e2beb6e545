"""Injected tool faults: a case's ``tool_faults`` answered in place of the tool's result.

Every tool call of a Python or ``model:`` agent goes through ``Session.call_tool``; the
session's :class:`FaultPlan` counts the calls of each tool in the attempt, and the call a
fault names never reaches the tool. It is recorded as a failed ``execute_tool`` span with
``seatrial.fault`` (the kind) and ``seatrial.fault.call`` (the call number), and answered:

- ``missing_param``, ``bad_enum``, ``http_500``, ``timeout``: a :class:`ToolError` with a
  specific message (the parameter, the allowed values, the upstream status), so a model can
  repair its call rather than retry blindly;
- ``malformed_json``: a text that is not valid JSON; ``empty``: an empty text.

``timeout`` is answered at once (nothing waits): what the agent sees is the tool's timeout
error, and runs stay as fast with faults as without.
"""

from __future__ import annotations

import inspect
import json
import threading
import typing
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from seatrial.agent._errors import ToolError
from seatrial.agent._http import HttpAgent
from seatrial.agent._policy import PermissionPolicy
from seatrial.agent._protocol import AgentAdapter
from seatrial.agent._recorded import RecordedAgent
from seatrial.agent._tool import tool_span
from seatrial.case import Case, ToolFault
from seatrial.errors import ConfigError
from seatrial.trace import TraceRecorder
from seatrial.trace import attrs as A

MALFORMED_JSON = '{"status": "ok", "result": [{"id": 1, "name": '
"""What a ``malformed_json`` fault answers: JSON cut off mid-value."""

TIMEOUT_S = 30
"""The time a ``timeout`` fault's message says the tool waited (nothing waits)."""


class FaultPlan:
    """The faults of one attempt, and how often each tool has been called so far."""

    def __init__(self, faults: Sequence[ToolFault]) -> None:
        self._faults = tuple(faults)
        self._tools = frozenset(fault.tool for fault in self._faults)
        self._calls: Counter[str] = Counter()
        # A sync agent may call tools from several threads at once (parallel tool calls).
        self._lock = threading.Lock()

    def take(self, tool: str) -> tuple[ToolFault, int] | None:
        """Count one call of ``tool``; the fault due at this call and its number, if any."""
        if tool not in self._tools:
            return None
        with self._lock:
            self._calls[tool] += 1
            number = self._calls[tool]
        for fault in self._faults:
            if fault.tool == tool and fault.at_call <= number < fault.at_call + fault.times:
                return fault, number
        return None


def inject(
    fault: ToolFault,
    number: int,
    arguments: dict[str, Any],
    *,
    recorder: TraceRecorder,
    policy: PermissionPolicy,
    schema: Mapping[str, Any] | None,
    write: bool,
    event_kind: str | None = None,
) -> Any:
    """Record the faulted call and answer it: raise its :class:`ToolError` or return its text.

    The permission policy decides first: a call the case does not allow is refused as
    usual, whatever fault was planned for it.
    """
    name = fault.tool
    with tool_span(recorder, name, arguments, event_kind=event_kind) as call:
        span = call.span
        span.attributes[A.FAULT] = fault.fault
        span.attributes[A.FAULT_CALL] = number
        policy.authorize(recorder, name, write=write)
        if fault.fault in ("malformed_json", "empty"):
            answer = MALFORMED_JSON if fault.fault == "malformed_json" else ""
            span.attributes[A.ERROR_TYPE] = fault.fault
            span.status = "error"
            span.status_message = f"injected fault {fault.fault}"
            call.result(answer)
            return answer
        raise ToolError(fault_message(fault.fault, name, arguments, schema), fault.fault)


def fault_message(
    kind: str, tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any] | None
) -> str:
    """The error a tool answers for an injected fault of ``kind`` (not the two answered with
    a result): specific enough that a model can act on it."""
    properties, required = _parts(schema)
    if kind == "missing_param":
        # The parameter "went missing": one the call passed if the schema requires it.
        name = next((p for p in required if p in arguments), None) or next(iter(required), None)
        name = name or next(iter(properties), None) or next(iter(arguments), None)
        if name is None:
            return (
                f"invalid arguments for `{tool}`: a required parameter is missing; call "
                f"`{tool}` again with every parameter its schema marks required"
            )
        about = _about(properties.get(name))
        return (
            f"invalid arguments for `{tool}`: missing required parameter `{name}`{about}; "
            f"call `{tool}` again with `{name}` set"
        )
    if kind == "bad_enum":
        enums = {p: s["enum"] for p, s in properties.items() if isinstance(s.get("enum"), list)}
        name = next((p for p in enums if p in arguments), None) or next(iter(enums), None)
        if name is not None:
            given = _shown(arguments[name]) if name in arguments else "the value given"
            allowed = ", ".join(_shown(value) for value in enums[name])
            return (
                f"invalid arguments for `{tool}`: {given} is not an allowed value of "
                f"`{name}`; allowed values: {allowed}; call `{tool}` again with one of them"
            )
        name = next(iter(arguments), None) or next(iter(properties), None)
        what = f"`{name}`" if name is not None else "a parameter"
        given = f"{_shown(arguments[name])} " if name is not None and name in arguments else ""
        return (
            f"invalid arguments for `{tool}`: the value {given}of {what} is not one the tool "
            f"accepts; check the allowed values in `{tool}`'s schema and call it again"
        )
    if kind == "http_500":
        return (
            f"`{tool}` failed: its upstream service answered HTTP 500 Internal Server Error "
            "and did nothing; check the arguments before calling again"
        )
    if kind == "timeout":
        return (
            f"`{tool}` timed out: its upstream service did not answer within {TIMEOUT_S} s "
            "and nothing was done"
        )
    raise ValueError(f"no message for fault `{kind}`")


def parameters_schema(schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The JSON schema of a tool's parameters, from an OpenAI tool entry
    (``{type: function, function: {parameters}}``), a function entry (``{name,
    parameters}``), an MCP tool (``{name, inputSchema}``) or the parameters schema itself."""
    if not isinstance(schema, Mapping):
        return None
    function = schema.get("function")
    if isinstance(function, Mapping):
        schema = function
    for key in ("parameters", "inputSchema", "input_schema"):
        inner = schema.get(key)
        if isinstance(inner, Mapping):
            return dict(inner)
    return dict(schema) if "properties" in schema else None


def signature_schema(function: Callable[..., Any]) -> dict[str, Any] | None:
    """A parameters schema read off a Python function: parameters without a default are
    required, a ``Literal[...]`` annotation is an enum."""
    try:
        signature = inspect.signature(function, eval_str=True)
    except (TypeError, ValueError, NameError):
        return None
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in signature.parameters.items():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        entry: dict[str, Any] = {}
        if typing.get_origin(parameter.annotation) is typing.Literal:
            entry["enum"] = list(typing.get_args(parameter.annotation))
        properties[name] = entry
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
    if not properties:
        return None
    return {"type": "object", "properties": properties, "required": required}


def check_fault_support(adapter: AgentAdapter, cases: Sequence[Case]) -> None:
    """Refuse ``tool_faults`` for agents whose tools Seatrial does not run (HTTP agents run
    their own; recorded sessions already happened): ConfigError, exit 2."""
    if not isinstance(adapter, HttpAgent | RecordedAgent):
        return
    faulted = [case.id for case in cases if case.tool_faults]
    if not faulted:
        return
    kind = (
        "an HTTP agent runs its own tools"
        if isinstance(adapter, HttpAgent)
        else ("recorded sessions were played before")
    )
    shown = ", ".join(faulted[:5]) + (f" and {len(faulted) - 5} more" if len(faulted) > 5 else "")
    raise ConfigError(
        f"case {shown} sets `tool_faults`, but agent `{adapter.spec}` cannot take injected "
        f"faults: {kind}. Run these cases with a python: or model: agent, or remove "
        "`tool_faults` (or inject the fault in the agent's own tool service)"
    )


def _parts(schema: Mapping[str, Any] | None) -> tuple[dict[str, dict[str, Any]], list[str]]:
    parameters = parameters_schema(schema) or {}
    raw = parameters.get("properties")
    properties = {
        str(k): dict(v) if isinstance(v, Mapping) else {}
        for k, v in (raw.items() if isinstance(raw, Mapping) else ())
    }
    required = parameters.get("required")
    return properties, [str(p) for p in required] if isinstance(required, list) else []


def _about(schema: Mapping[str, Any] | None) -> str:
    if not schema:
        return ""
    parts = [str(schema["type"])] if isinstance(schema.get("type"), str) else []
    if isinstance(schema.get("description"), str) and schema["description"]:
        parts.append(str(schema["description"]))
    return f" ({': '.join(parts)})" if parts else ""


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
