"""Injected tool faults: a case's ``tool_faults`` answered in place of the tool's result.

Every tool call of a Python or ``model:`` agent goes through ``Session.call_tool``; the
session's :class:`FaultPlan` counts the calls of each tool in the attempt, and the call a
fault names never reaches the tool. It is recorded as a failed ``execute_tool`` span with
``seatrial.fault`` (the kind) and ``seatrial.fault.call`` (the call number), and answered.

Two classes of fault, two right answers (``assertion/_l1_recovery.py`` judges them):

- validation errors, ``missing_param`` and ``bad_enum``: a :class:`ToolError` whose message
  names a parameter (``seatrial.fault.parameter``) and what to do with it; the repair is a
  call changed that way. ``missing_param`` names a required parameter the call lacked; when
  the call sent every one, the fault takes the first out of the call (``seatrial.fault.
  removed``): the tool, the trace and a ``model:`` agent's conversation then show the call
  without it, so an identical resend still lacks it. ``bad_enum`` refuses the value the call
  gave an enum parameter and lists the other allowed values (``seatrial.fault.allowed``), or,
  when the call gave none, says so and lists them all;
- transient faults, ``http_500`` and ``timeout`` (a :class:`ToolError` saying the call may be
  sent again), ``malformed_json`` (a text that is not valid JSON) and ``empty`` (an empty
  text): sending the same call again is the repair.

``timeout`` is answered at once (nothing waits): what the agent sees is the tool's timeout
error, and runs stay as fast with faults as without.
"""

from __future__ import annotations

import inspect
import json
import threading
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from seatrial.agent._errors import ToolError
from seatrial.agent._http import HttpAgent
from seatrial.agent._policy import PermissionPolicy
from seatrial.agent._protocol import AgentAdapter
from seatrial.agent._recorded import RecordedAgent
from seatrial.agent._tool import tool_span
from seatrial.case import Case, ToolFault
from seatrial.errors import ConfigError
from seatrial.i18n import gettext as _
from seatrial.trace import TraceRecorder
from seatrial.trace import attrs as A

MALFORMED_JSON = '{"status": "ok", "result": [{"id": 1, "name": '
"""What a ``malformed_json`` fault answers: JSON cut off mid-value."""

TIMEOUT_S = 30
"""The time a ``timeout`` fault's message says the tool waited (nothing waits)."""


_NONE: frozenset[str] = frozenset()


class FaultPlan:
    """The faults of one attempt, and how often each tool has been called so far."""

    def __init__(self, faults: Sequence[ToolFault]) -> None:
        self._faults = tuple(faults)
        # Most cases have no faults: a session of every attempt makes its plan, so the empty
        # one costs no generator and no Counter (a dict counts as well).
        self._tools = frozenset([fault.tool for fault in self._faults]) if faults else _NONE
        self._calls: dict[str, int] = {}
        # A sync agent may call tools from several threads at once (parallel tool calls).
        self._lock = threading.Lock()

    def take(self, tool: str) -> tuple[ToolFault, int] | None:
        """Count one call of ``tool``; the fault due at this call and its number, if any."""
        if tool not in self._tools:
            return None
        with self._lock:
            number = self._calls[tool] = self._calls.get(tool, 0) + 1
        for fault in self._faults:
            if fault.tool == tool and fault.at_call <= number < fault.at_call + fault.times:
                return fault, number
        return None


@dataclass(frozen=True)
class FaultAnswer:
    """What a ``missing_param``, ``bad_enum``, ``http_500`` or ``timeout`` fault answers."""

    message: str
    """The tool's error, specific enough that a model can act on it."""
    parameter: str | None = None
    """The parameter a validation fault names: the repairing call must set it
    (``missing_param``) or give it one of ``allowed`` (``bad_enum``)."""
    allowed: tuple[Any, ...] | None = None
    """``bad_enum``: the values the message allows (never the refused one)."""
    removed: bool = False
    """``missing_param`` on a call that sent every required parameter: the fault took
    ``parameter`` out of the call, so the message is true of the call the tool received."""

    def received(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The call as the tool received it: ``arguments`` without a removed parameter."""
        return {k: v for k, v in arguments.items() if not (self.removed and k == self.parameter)}


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
    sent: Mapping[str, Any] | None = None,
) -> Any:
    """Record the faulted call and answer it: raise its :class:`ToolError` or return its text.

    ``arguments`` are the call's arguments as the tool records them (defaults filled in);
    ``sent`` those the agent passed (default: ``arguments``), which decide what a validation
    fault names. The permission policy decides first: a call the case does not allow is
    refused as usual, whatever fault was planned for it.
    """
    name = fault.tool
    answer = None
    if fault.fault not in ("malformed_json", "empty"):
        answer = fault_answer(fault.fault, name, sent if sent is not None else arguments, schema)
        arguments = answer.received(arguments)
    with tool_span(recorder, name, arguments, event_kind=event_kind) as call:
        span = call.span
        span.attributes[A.FAULT] = fault.fault
        span.attributes[A.FAULT_CALL] = number
        policy.authorize(recorder, name, write=write)
        if answer is None:
            text = MALFORMED_JSON if fault.fault == "malformed_json" else ""
            span.attributes[A.ERROR_TYPE] = fault.fault
            span.status = "error"
            span.status_message = f"injected fault {fault.fault}"
            call.result(text)
            return text
        if answer.parameter is not None:
            span.attributes[A.FAULT_PARAMETER] = answer.parameter
        if answer.allowed is not None:
            span.attributes[A.FAULT_ALLOWED] = _shown(list(answer.allowed))
        if answer.removed:
            span.attributes[A.FAULT_REMOVED] = answer.parameter
        raise ToolError(
            answer.message, fault.fault, arguments=arguments if answer.removed else None
        )


def fault_message(
    kind: str, tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any] | None
) -> str:
    """The error a tool answers for an injected fault of ``kind`` (not the two answered with
    a result), for a call that sent ``arguments``: :func:`fault_answer`'s message."""
    return fault_answer(kind, tool, arguments, schema).message


def fault_answer(
    kind: str, tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any] | None
) -> FaultAnswer:
    """What a tool answers for an injected fault of ``kind`` on a call that sent
    ``arguments``: a message whose repair is a call that differs the way it says."""
    if kind == "missing_param":
        return _missing_param(tool, arguments, schema)
    if kind == "bad_enum":
        return _bad_enum(tool, arguments, schema)
    if kind == "http_500":
        return FaultAnswer(
            f"`{tool}` failed: its upstream service answered HTTP 500 Internal Server Error "
            "and did nothing; the call may be sent again"
        )
    if kind == "timeout":
        return FaultAnswer(
            f"`{tool}` timed out: its upstream service did not answer within {TIMEOUT_S} s "
            "and nothing was done; the call may be sent again"
        )
    raise ValueError(f"no message for fault `{kind}`")


def _missing_param(
    tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any] | None
) -> FaultAnswer:
    """A required parameter the call lacked; when it sent every one, the fault takes one out
    (the first required, else the first sent) and says what the tool received."""
    properties, required = _parts(schema)
    sent = [p for p, value in arguments.items() if value is not None]
    lacked = next((p for p in required if p not in sent), None)
    removed = lacked is None
    name = lacked or next(iter(required), None) or next(iter(sent), None)
    if name is None:
        # Nothing sent and nothing known to be required: the schema's first parameter.
        name, removed = next(iter(properties), None), False
    if name is None:
        return FaultAnswer(
            f"invalid arguments for `{tool}`: a required parameter is missing; call `{tool}` "
            "again with every parameter its schema marks required"
        )
    received = _shown({k: v for k, v in arguments.items() if not (removed and k == name)})
    message = (
        f"invalid arguments for `{tool}`: missing required parameter `{name}`"
        f"{_about(properties.get(name))}; the tool received {received}; call `{tool}` again "
        f"with `{name}` set"
    )
    return FaultAnswer(message, name, removed=removed)


def _bad_enum(
    tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any] | None
) -> FaultAnswer:
    """The value of an enum parameter the call sent, refused, with the other allowed values;
    or an enum parameter it left out, with all of them."""
    properties, _ = _parts(schema)
    enums = {p: s["enum"] for p, s in properties.items() if isinstance(s.get("enum"), list)}
    for name, values in enums.items():
        if arguments.get(name) is None:
            continue
        refused = arguments[name]
        allowed = tuple(v for v in values if not _equal(v, refused))
        if allowed:
            return FaultAnswer(
                f"invalid arguments for `{tool}`: {_shown(refused)} is not an allowed value "
                f"of `{name}`; allowed values: {', '.join(_shown(v) for v in allowed)}; call "
                f"`{tool}` again with one of them",
                name,
                allowed,
            )
    absent = next((p for p, values in enums.items() if arguments.get(p) is None and values), None)
    if absent is not None:
        allowed = tuple(enums[absent])
        return FaultAnswer(
            f"invalid arguments for `{tool}`: `{absent}` needs one of its allowed values and "
            f"the call gave none; allowed values: {', '.join(_shown(v) for v in allowed)}; "
            f"call `{tool}` again with one of them",
            absent,
            allowed,
        )
    other = next(iter(arguments), None) or next(iter(properties), None)
    if other is None:
        return FaultAnswer(
            f"invalid arguments for `{tool}`: a value is not one the tool accepts; check the "
            f"allowed values in `{tool}`'s schema and call it again"
        )
    if other in arguments:
        what = f"the value {_shown(arguments[other])} of `{other}`"
    else:
        what = f"`{other}` (no value was given)"
    return FaultAnswer(
        f"invalid arguments for `{tool}`: {what} is not one the tool accepts; call `{tool}` "
        f"again with another value of `{other}`",
        other,
    )


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


def fault_arguments(signature: inspect.Signature, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A faulted call's arguments as the tool would record them (defaults filled in), also
    when the call lacked a required parameter (the tool was never called to complain)."""
    try:
        bound = signature.bind_partial(**arguments)
    except TypeError:
        return dict(arguments)
    bound.apply_defaults()
    return dict(bound.arguments)


def check_fault_support(adapter: AgentAdapter, cases: Sequence[Case]) -> None:
    """Refuse ``tool_faults`` for agents whose tools Seatrial does not run (HTTP agents run
    their own; recorded sessions already happened): ConfigError, exit 2."""
    if not isinstance(adapter, HttpAgent | RecordedAgent):
        return
    faulted = [case.id for case in cases if case.tool_faults]
    if not faulted:
        return
    kind = (
        _("an HTTP agent runs its own tools")
        if isinstance(adapter, HttpAgent)
        else _("recorded sessions were played before")
    )
    shown = ", ".join(faulted[:5])
    if len(faulted) > 5:
        shown = _("{cases} and {n} more").format(cases=shown, n=len(faulted) - 5)
    raise ConfigError(
        _(
            "case {cases} sets `tool_faults`, but agent `{agent}` cannot take injected "
            "faults: {why}. Run these cases with a python: or model: agent, or remove "
            "`tool_faults` (or inject the fault in the agent's own tool service)"
        ).format(cases=shown, agent=adapter.spec, why=kind)
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


def _equal(left: Any, right: Any) -> bool:
    return _shown(left) == _shown(right)
