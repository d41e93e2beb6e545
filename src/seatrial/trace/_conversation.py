"""A recorded conversation (user, assistant and tool messages) as an OTel GenAI trace.

Every reader of a chat log turns its messages into :class:`ConversationMessage` and hands
them here, so an OpenAI chat-completion log, a SWE-agent trajectory, a tau-bench and a tau2
trajectory all become the same kind of trace: one ``invoke_agent`` root, a ``chat`` span per
assistant message and an ``execute_tool`` span per tool call, each tagged with the user turn
it ran in.
The user message of a turn is a ``seatrial.turn`` event on the root, as in the traces Seatrial
records itself; what the assistant said is the ``chat`` span's ``gen_ai.output.messages``.

It lives in ``trace`` (layer 1) so that the trace readers and the dataset importers above
can share it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from seatrial.trace import _attrs as A
from seatrial.trace._recorder import new_id
from seatrial.trace._span import Span, SpanEvent, Trace
from seatrial.trace._tools_called import TOOL_ERROR

CONVERSATION_STEP_NS = 1_000_000
"""Spacing of synthesised message times (1 ms) when a file has no timestamps."""


@dataclass(frozen=True)
class ConversationCall:
    """A tool call an assistant message asked for."""

    call_id: str
    name: str
    arguments: str
    """The arguments as JSON text (as OTel's ``gen_ai.tool.call.arguments`` holds them)."""


@dataclass(frozen=True)
class ConversationMessage:
    """One message of a recorded conversation, in the reader-neutral form."""

    role: Literal["user", "assistant", "tool"]
    text: str | None = None
    calls: tuple[ConversationCall, ...] = ()
    answers: str | None = None
    """For a tool message: the id of the call it answers."""
    error: bool = False
    """For a tool message: the tool failed."""
    time_ns: int | None = None
    """When the message was written, nanoseconds since the epoch; None when unknown."""
    usage: tuple[int, int] | None = None
    """Input and output tokens of the model call that wrote it."""
    cost_usd: float | None = None
    """What that model call cost."""
    model: str | None = None
    """For an assistant message: the model that answered, when the log names it."""
    response_id: str | None = None
    """For an assistant message: the provider's id of the completion, when known."""
    duration_ns: int | None = None
    """For a tool message: how long the tool ran, when the log says."""


@dataclass
class Conversation:
    """The trace of a conversation and the agent's replies, one per user turn."""

    trace: Trace
    responses: list[str] = field(default_factory=list)
    started_ns: int = 0
    finished_ns: int = 0

    @property
    def response(self) -> str:
        """The agent's last text reply (a closing turn without one does not blank it)."""
        return next((r for r in reversed(self.responses) if r), "")


def message_times(messages: Sequence[ConversationMessage], start_ns: int) -> list[int]:
    """Each message's time: the recorded ones when every message has one, else one
    :data:`CONVERSATION_STEP_NS` apart from ``start_ns`` in file order (or the tool's duration after
    the call, when a tool message records one)."""
    recorded = [m.time_ns for m in messages]
    if all(t is not None for t in recorded):
        return [t for t in recorded if t is not None]
    times = []
    cursor = start_ns
    for message in messages:
        cursor += max(message.duration_ns or 0, CONVERSATION_STEP_NS)
        times.append(cursor)
    return times


def output_messages(message: ConversationMessage) -> str:
    """An assistant message as ``gen_ai.output.messages`` JSON: text and tool-call parts."""
    parts: list[dict[str, Any]] = []
    if message.text:
        parts.append({"type": "text", "content": message.text})
    for call in message.calls:
        try:
            arguments: Any = json.loads(call.arguments)
        except ValueError:
            arguments = call.arguments  # malformed by the model: kept as written
        parts.append(
            {"type": "tool_call", "id": call.call_id, "name": call.name, "arguments": arguments}
        )
    reason = "tool_call" if message.calls else "stop"
    out = {"role": "assistant", "parts": parts, "finish_reason": reason}
    return json.dumps([out], ensure_ascii=False, separators=(",", ":"))


def _root(agent: str, trace_id: str, start: int, extra: dict[str, Any]) -> Span:
    return Span(
        trace_id=trace_id,
        span_id=new_id(),
        name=f"invoke_agent {agent}",
        start_time_unix_nano=start,
        attributes={A.OPERATION: A.OP_INVOKE_AGENT, A.AGENT_NAME: agent, **extra},
        status="ok",
    )


def _chat(root: Span, model: str, message: ConversationMessage, start: int, end: int) -> Span:
    attributes: dict[str, Any] = {A.OPERATION: A.OP_CHAT, A.REQUEST_MODEL: model}
    if message.model:
        attributes[A.RESPONSE_MODEL] = message.model
    if message.response_id:
        attributes[A.RESPONSE_ID] = message.response_id
    if message.usage is not None:
        attributes[A.INPUT_TOKENS], attributes[A.OUTPUT_TOKENS] = message.usage
    if message.cost_usd:
        attributes[A.COST_USD] = message.cost_usd
    attributes[A.OUTPUT_MESSAGES] = output_messages(message)
    return Span(
        trace_id=root.trace_id,
        span_id=new_id(),
        parent_span_id=root.span_id,
        name=f"chat {model}",
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        attributes=attributes,
        status="ok",
    )


def _tool(root: Span, call: ConversationCall, start: int) -> Span:
    return Span(
        trace_id=root.trace_id,
        span_id=new_id(),
        parent_span_id=root.span_id,
        name=f"execute_tool {call.name}",
        start_time_unix_nano=start,
        end_time_unix_nano=start,
        attributes={
            A.OPERATION: A.OP_EXECUTE_TOOL,
            A.TOOL_NAME: call.name,
            A.TOOL_CALL_ID: call.call_id,
            A.TOOL_ARGUMENTS: call.arguments,
        },
        status="ok",
    )


def _answer(span: Span, message: ConversationMessage, time_ns: int) -> None:
    span.attributes[A.TOOL_RESULT] = message.text if message.text is not None else ""
    span.end_time_unix_nano = max(time_ns, span.start_time_unix_nano)
    if message.error:
        span.attributes[A.ERROR_TYPE] = TOOL_ERROR
        span.status = "error"
        span.status_message = (message.text or "")[:200]


def build_conversation(
    messages: Sequence[ConversationMessage],
    *,
    agent: str,
    model: str,
    start_ns: int,
    end_ns: int | None = None,
    root_attributes: dict[str, Any] | None = None,
    trace_id: str | None = None,
) -> Conversation:
    """The trace of ``messages`` (system messages already dropped).

    A user message opens a turn (a ``seatrial.turn`` event on the root); assistant messages
    and their tool calls belong to the turn open when they were written (those before the
    first user message, to none; one there without tool calls or usage is a fixed greeting,
    not a model call, and is left out). A tool message answers the call with its id, or else
    the oldest call still unanswered. With a ``trace_id`` the span ids are derived from it
    (:func:`with_stable_ids`), so reading the same log twice gives the same spans.
    """
    times = message_times(messages, start_ns)
    start = min([start_ns, *times[:1]])
    root = _root(agent, trace_id or new_id(128), start, dict(root_attributes or {}))
    spans: list[Span] = [root]
    responses: list[str] = []
    pending: dict[str, Span] = {}
    previous = start
    for message, at in zip(messages, times, strict=True):
        turn = len(responses) - 1 if responses else None
        if message.role == "user":
            responses.append("")
            root.events.append(_turn_event(len(responses) - 1, message.text or "", at))
        elif message.role == "assistant" and turn is None and _greeting(message):
            pass  # a fixed opening line written before anyone spoke: no model call
        elif message.role == "assistant":
            tools = {call.call_id: _tool(root, call, at) for call in message.calls}
            new = [_chat(root, model, message, min(previous, at), at), *tools.values()]
            for span in new:
                if turn is not None:
                    span.attributes[A.TURN_INDEX] = turn
            spans += new
            pending.update(tools)
            if message.text and turn is not None:
                responses[turn] = message.text
        else:
            key = message.answers if message.answers in pending else next(iter(pending), None)
            if key is not None:
                _answer(pending.pop(key), message, at)
        previous = at
    finished = max([previous, *([end_ns] if end_ns is not None else [])])
    root.end_time_unix_nano = finished
    trace = Trace(trace_id=root.trace_id, spans=spans)
    if trace_id is not None:
        trace = with_stable_ids(trace, trace_id)
    return Conversation(trace, responses, start, finished)


def _greeting(message: ConversationMessage) -> bool:
    return not message.calls and message.usage is None and not message.cost_usd


def _turn_event(index: int, text: str, at: int) -> SpanEvent:
    return SpanEvent(
        name=A.TURN, time_unix_nano=at, attributes={A.TURN_INDEX: index, A.TURN_MESSAGE: text}
    )


def content_id(*parts: Any) -> str:
    """A 32-hex trace id derived from ``parts`` (a record's id, or the record itself).

    Readers use it so that the same record read twice lands in the same trace.
    """
    text = json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def with_stable_ids(trace: Trace, trace_id: str) -> Trace:
    """``trace`` under ``trace_id``, each span id derived from the trace id and its position.

    A re-sent span (same trace id and span id) is skipped when stored, so a file ingested
    twice adds nothing the second time; random span ids would store every span again. The
    readers hand it spans they have just built, so the spans are renamed in place.
    """
    renamed = {
        span.span_id: hashlib.sha256(f"{trace_id}:{index}".encode()).hexdigest()[:16]
        for index, span in enumerate(trace.spans)
    }
    for span in trace.spans:
        span.trace_id = trace_id
        span.span_id = renamed[span.span_id]
        if span.parent_span_id is not None:
            span.parent_span_id = renamed.get(span.parent_span_id, span.parent_span_id)
    return Trace(trace_id=trace_id, spans=trace.spans, resource=dict(trace.resource))
