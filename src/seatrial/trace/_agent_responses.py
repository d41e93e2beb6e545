"""The agent protocol's responses, as an agent logs them, as traces: one session, one trace.

A record is a response of the agent protocol (docs/agents.md): ``session_id``, ``response``,
``trace_id``, ``tools_called[{name, input, output, latency_ms, success}]``, ``usage``; or a
``{"request": {...}, "response": {...}}`` pair, whose request's ``message`` is the user turn.
The records of one ``session_id`` are its turns in file order. They become the trace the HTTP
adapter records during a run (the same code, ``record_tools_called``): an ``invoke_agent``
root with a ``seatrial.turn`` event per turn and the summed ``usage``, and an
``execute_tool`` span per reported call, tagged with its turn. See docs/ingestion.md.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any

from seatrial.i18n import gettext as _
from seatrial.trace import _attrs as A
from seatrial.trace._conversation import CONVERSATION_STEP_NS, content_id, with_stable_ids
from seatrial.trace._format_error import TraceFormatError
from seatrial.trace._recorder import TraceRecorder
from seatrial.trace._span import SpanEvent, Trace
from seatrial.trace._tools_called import add_usage, record_tools_called

FORMAT = "tools-called"
DEFAULT_AGENT = "agent"
_TRACE_ID = re.compile(r"^[0-9a-fA-F]{32}$")


def matches(data: Any) -> bool:
    """A protocol response (``tools_called``, or a text ``response`` with a ``session_id``),
    or a request/response pair holding one; a list is judged by its first record."""
    first = data[0] if isinstance(data, list) and data else data
    if not isinstance(first, Mapping):
        return False
    response = first.get("response")
    if isinstance(first.get("request"), Mapping) and isinstance(response, Mapping):
        first = response
    return "tools_called" in first or (
        isinstance(first.get("response"), str) and "session_id" in first
    )


def read(data: Any, *, start_ns: int | None = None) -> list[Trace]:
    """One trace per session, sessions in the order they first appear.

    The protocol records how long each call took, not when: each session starts at
    ``start_ns`` (the moment the file is read when not given) after the previous one, its
    turns and calls laid end to end by their ``latency_ms``.
    """
    if isinstance(data, list):
        records, prefix = data, "[{}]"
    else:
        records, prefix = [data], ""
    sessions: dict[str, list[tuple[str, Mapping[str, Any], str | None]]] = {}
    for index, record in enumerate(records):
        where = prefix.format(index)
        response, message = _split(record, where)
        session = response.get("session_id")
        if session is not None and not isinstance(session, str | int):
            raise TraceFormatError(_("{where}.session_id: expected a string").format(where=where))
        key = f"session:{session}" if session is not None else f"record:{index}"
        sessions.setdefault(key, []).append((where, response, message))
    cursor = start_ns if start_ns is not None else time.time_ns()
    traces = []
    for turns in sessions.values():
        trace = _session_trace(turns, cursor)
        traces.append(trace)
        cursor = (trace.spans[0].end_time_unix_nano or cursor) + CONVERSATION_STEP_NS
    return traces


def _split(record: Any, where: str) -> tuple[Mapping[str, Any], str | None]:
    """The response of a record and the user's message, when the record logged it."""
    if not isinstance(record, Mapping):
        raise TraceFormatError(
            _("{where}: expected an agent response (an object)").format(where=where)
        )
    request = record.get("request")
    response = record.get("response")
    if isinstance(request, Mapping) and isinstance(response, Mapping):
        message = request.get("message")
        if message is not None and not isinstance(message, str):
            raise TraceFormatError(
                _("{where}.request.message: expected the user's message (text)").format(where=where)
            )
        return response, message
    message = record.get("message")
    if message is not None and not isinstance(message, str):
        raise TraceFormatError(
            _("{where}.message: expected the user's message (text)").format(where=where)
        )
    return record, message


def _session_trace(turns: list[tuple[str, Mapping[str, Any], str | None]], start: int) -> Trace:
    first = turns[0][1]
    session = first.get("session_id")
    trace_id = _trace_id(turns, session)
    agent = _agent(first)
    recorder = TraceRecorder(trace_id)
    attributes: dict[str, Any] = {A.OPERATION: A.OP_INVOKE_AGENT, A.AGENT_NAME: agent}
    if session is not None:
        attributes[A.CONVERSATION_ID] = str(session)
    replies = []
    cursor = start
    with recorder.span(f"invoke_agent {agent}", attributes) as root:
        root.start_time_unix_nano = start
        for index, (where, response, message) in enumerate(turns):
            turn: dict[str, Any] = {A.TURN_INDEX: index}
            if message is not None:
                turn[A.TURN_MESSAGE] = message
            root.events.append(SpanEvent(name=A.TURN, time_unix_nano=cursor, attributes=turn))
            try:
                spans = record_tools_called(
                    recorder,
                    response.get("tools_called"),
                    start_time_unix_nano=cursor,
                    turn_index=index,
                )
                add_usage(root, response.get("usage"))
            except ValueError as exc:
                raise TraceFormatError(_located(where, exc)) from None
            reply = response.get("response")
            if reply is not None and not isinstance(reply, str):
                raise TraceFormatError(
                    _("{where}.response: expected the agent's reply (text)").format(where=where)
                )
            replies.append(reply or "")
            cursor = (
                max([cursor, *(s.end_time_unix_nano or cursor for s in spans)])
                + CONVERSATION_STEP_NS
            )
        if any(replies):
            root.attributes[A.OUTPUT_MESSAGES] = _replies(replies)
    root.end_time_unix_nano = cursor
    return with_stable_ids(recorder.trace(), trace_id)


def _trace_id(turns: list[tuple[str, Mapping[str, Any], str | None]], session: Any) -> str:
    """The agent's own trace id (so its exported spans join this trace), else a derived one."""
    for _where, response, _message in turns:
        reported = response.get("trace_id")
        if isinstance(reported, str) and _TRACE_ID.match(reported):
            return reported.lower()
        if isinstance(reported, str) and reported:
            return content_id(FORMAT, reported)
    if session is not None:
        return content_id(FORMAT, "session", session)
    return content_id(FORMAT, [response for _where, response, _message in turns])


def _agent(response: Mapping[str, Any]) -> str:
    metadata = response.get("metadata")
    if isinstance(metadata, Mapping):
        for key in ("agent_name", "agent"):
            if isinstance(metadata.get(key), str) and metadata[key]:
                return str(metadata[key])
    return DEFAULT_AGENT


def _replies(replies: list[str]) -> str:
    """The agent's reply of each turn, in order, as OTel output-messages JSON."""
    messages = [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": reply}],
            "finish_reason": "stop",
        }
        for reply in replies
    ]
    return json.dumps(messages, ensure_ascii=False, separators=(",", ":"))


def _located(where: str, exc: ValueError) -> str:
    """The protocol checker's message under the record's path, without the value it quotes
    (a value from the file may hold personal data that has not been masked yet)."""
    text = str(exc).split(", got ")[0]
    if not where:
        return text
    if text.startswith("tools_called"):
        return f"{where}.{text}"
    return _("{where}: {problem}").format(where=where, problem=text)
