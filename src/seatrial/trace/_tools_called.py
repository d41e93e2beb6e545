"""The agent protocol's ``tools_called`` list and ``usage`` as OTel GenAI spans.

The HTTP adapter records them into the live attempt; the replay adapter builds a whole trace
from them. Both go through here so the same session yields the same spans, and so the same
verdicts, whichever way it arrived.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from seatrial.trace import _attrs as A
from seatrial.trace._recorder import TraceRecorder, attribute_json
from seatrial.trace._span import Span, SpanEvent, Trace

TOOL_ERROR = "tool_error"
"""``error.type`` of a tool call the agent reported with ``success: false``."""


def encode_json(value: Any) -> str:
    """Tool arguments and results as JSON text, keys sorted so equal calls compare equal."""
    return attribute_json(value)


def _entries(tools_called: Any) -> list[Mapping[str, Any]]:
    if tools_called is None:
        return []
    if not isinstance(tools_called, list):
        raise ValueError(f"`tools_called` must be a list, got {type(tools_called).__name__}")
    for i, entry in enumerate(tools_called):
        if not isinstance(entry, Mapping):
            raise ValueError(f"tools_called[{i}] must be an object, got {entry!r}"[:200])
        if not isinstance(entry.get("name"), str) or not entry["name"]:
            raise ValueError(f"tools_called[{i}] needs a `name` (the tool's name)")
        permission = entry.get("permission")
        if permission is not None and not isinstance(permission, Mapping):
            raise ValueError(
                f"tools_called[{i}].permission must be an object such as "
                f'{{"scope": "once", "decision": "granted"}}, got {permission!r}'[:200]
            )
        latency = entry.get("latency_ms", 0)
        if latency is not None and not _is_amount(latency):
            wrong = f"{latency!r}"[:100]
            raise ValueError(
                f"tools_called[{i}].latency_ms must be a number >= 0 and finite, got {wrong}"
            )
    return list(tools_called)


_LARGEST = 2**63 - 1
"""The largest amount (milliseconds, tokens) a report or a store's integer column can hold."""


def _is_amount(value: Any) -> bool:
    """A number that is finite, not negative and storable: JSON also allows ``1e400``
    (infinity), ``NaN`` and integers of any size, which no clock or token count is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return 0 <= value <= _LARGEST  # False for NaN too


def _turn_of(entry: Mapping[str, Any], default: int | None) -> int | None:
    turn = entry.get("turn", default)
    return int(turn) if isinstance(turn, int) and not isinstance(turn, bool) else default


def _permission_event(entry: Mapping[str, Any], at: int) -> SpanEvent | None:
    """An entry's ``permission`` (a Seatrial extension) as a ``seatrial.permission`` event.

    The keys may be plain (``scope``) or namespaced (``seatrial.permission.scope``) like any
    event attribute; the tool defaults to the entry's ``name``.
    """
    permission = entry.get("permission")
    if permission is None:
        return None
    attributes = {key: A.event_value(permission, key) for key in A.EVENT_ATTRIBUTES[A.PERMISSION]}
    attributes[A.PERMISSION_TOOL] = attributes[A.PERMISSION_TOOL] or entry["name"]
    return SpanEvent(
        name=A.PERMISSION,
        time_unix_nano=at,
        attributes={key: value for key, value in attributes.items() if value is not None},
    )


def record_tools_called(
    recorder: TraceRecorder,
    tools_called: Any,
    *,
    start_time_unix_nano: int,
    end_time_unix_nano: int | None = None,
    turn_index: int | None = None,
) -> list[Span]:
    """Add one ``execute_tool`` span per reported call, under the recorder's current span.

    The calls are laid end to end from ``start_time_unix_nano`` using each ``latency_ms``.
    When ``end_time_unix_nano`` is given and the latencies add up to more than that window
    (the agent's clock is not ours), they are scaled down to fit inside it.
    """
    entries = _entries(tools_called)
    latencies = [float(e.get("latency_ms") or 0) * 1e6 for e in entries]
    total = sum(latencies)
    scale = 1.0
    if end_time_unix_nano is not None and total > end_time_unix_nano - start_time_unix_nano > 0:
        scale = (end_time_unix_nano - start_time_unix_nano) / total
    cursor = start_time_unix_nano
    spans = []
    for index, (entry, latency) in enumerate(zip(entries, latencies, strict=True)):
        name = entry["name"]
        turn = _turn_of(entry, turn_index)
        attributes: dict[str, Any] = {
            A.OPERATION: A.OP_EXECUTE_TOOL,
            A.TOOL_NAME: name,
            A.TOOL_CALL_ID: str(
                entry.get("id") or f"call_{turn if turn is not None else 0}_{index}"
            ),
            A.TOOL_ARGUMENTS: encode_json(entry.get("input", entry.get("arguments", {}))),
        }
        if "output" in entry or "result" in entry:
            attributes[A.TOOL_RESULT] = encode_json(entry.get("output", entry.get("result")))
        if turn is not None:
            attributes[A.TURN_INDEX] = turn
        span = recorder.start_span(f"execute_tool {name}", attributes)
        span.start_time_unix_nano = cursor
        decision = _permission_event(entry, cursor)
        if decision is not None:
            span.events.append(decision)
        cursor += int(latency * scale)
        span.end_time_unix_nano = cursor
        if entry.get("success", True) is False:
            span.attributes[A.ERROR_TYPE] = str(entry.get("error_type") or TOOL_ERROR)
            span.status = "error"
            span.status_message = str(entry.get("error") or "the agent reported success: false")[
                :200
            ]
        else:
            span.status = "ok"
        spans.append(span)
    return spans


def _tokens(usage: Mapping[str, Any], *names: str) -> int:
    for name in names:
        value = usage.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not _is_amount(value):
                raise ValueError(
                    f"usage.{name} must be a number >= 0 and finite, got {value!r}"[:200]
                )
            return int(value)
    return 0


def add_usage(span: Span, usage: Any) -> None:
    """Add the protocol's ``usage`` to a span's ``gen_ai.usage.*`` tokens (summing over turns)."""
    if usage is None:
        return
    if not isinstance(usage, Mapping):
        raise ValueError(f"`usage` must be an object, got {type(usage).__name__}")
    input_tokens = _tokens(usage, "prompt_tokens", "input_tokens")
    output_tokens = _tokens(usage, "completion_tokens", "output_tokens")
    span.attributes[A.INPUT_TOKENS] = int(span.attributes.get(A.INPUT_TOKENS) or 0) + input_tokens
    span.attributes[A.OUTPUT_TOKENS] = (
        int(span.attributes.get(A.OUTPUT_TOKENS) or 0) + output_tokens
    )


def trace_from_tools_called(
    tools_called: Any,
    *,
    usage: Any = None,
    agent_name: str = "agent",
    messages: Sequence[str] | None = None,
    conversation_id: str | None = None,
    trace_id: str | None = None,
    start_time_unix_nano: int | None = None,
) -> Trace:
    """A whole trace from a ``tools_called`` list: the shape the HTTP adapter records.

    One root ``invoke_agent {agent_name}`` span carrying the summed ``usage`` and a
    ``seatrial.turn`` event per user message, with one ``execute_tool`` child per call.
    A call's ``turn`` key (an extension) gives its turn index; with a single message every
    call belongs to turn 0.
    """
    recorder = TraceRecorder(trace_id)
    start = start_time_unix_nano if start_time_unix_nano is not None else time.time_ns()
    root_attributes: dict[str, Any] = {A.OPERATION: A.OP_INVOKE_AGENT, A.AGENT_NAME: agent_name}
    if conversation_id:
        root_attributes[A.CONVERSATION_ID] = conversation_id
    with recorder.span(f"invoke_agent {agent_name}", root_attributes) as root:
        root.start_time_unix_nano = start
        for index, message in enumerate(messages or ()):
            recorder.event(A.TURN, {A.TURN_INDEX: index, A.TURN_MESSAGE: message})
            root.events[-1].time_unix_nano = start
        default_turn = 0 if messages is not None and len(messages) == 1 else None
        spans = record_tools_called(
            recorder, tools_called, start_time_unix_nano=start, turn_index=default_turn
        )
        add_usage(root, usage)
    root.end_time_unix_nano = max([start, *(s.end_time_unix_nano or start for s in spans)])
    return Trace(trace_id=recorder.trace_id, spans=[root, *spans])
