"""A recorded conversation (user, assistant and tool messages) as an OTel GenAI trace.

Both importers turn their messages into :class:`Message` and hand them here, so a tau-bench
and a tau2 trajectory become the same kind of trace: one ``invoke_agent`` root, a ``chat``
span per assistant message and an ``execute_tool`` span per tool call, each tagged with the
user turn it ran in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from seatrial.trace import TOOL_ERROR, Span, SpanEvent, Trace, new_id
from seatrial.trace import attrs as A

STEP_NS = 1_000_000
"""Spacing of synthesised message times (1 ms) when a file has no timestamps."""
IMPORT_REWARD = "seatrial.import.reward"
"""Root-span attribute: the benchmark's reward for the trial."""
IMPORT_REWARD_INFO = "seatrial.import.reward_info"
"""Root-span attribute: the benchmark's reward breakdown, as JSON."""
IMPORT_TERMINATION = "seatrial.import.termination_reason"
"""Root-span attribute: why the benchmark ended the conversation (tau2)."""


@dataclass(frozen=True)
class Call:
    """A tool call an assistant message asked for."""

    call_id: str
    name: str
    arguments: str
    """The arguments as JSON text (as OTel's ``gen_ai.tool.call.arguments`` holds them)."""


@dataclass(frozen=True)
class Message:
    """One message of a recorded conversation, in the importer-neutral form."""

    role: Literal["user", "assistant", "tool"]
    text: str | None = None
    calls: tuple[Call, ...] = ()
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


def message_times(messages: Sequence[Message], start_ns: int) -> list[int]:
    """Each message's time: the recorded ones when every message has one, else one
    :data:`STEP_NS` apart from ``start_ns`` in file order."""
    recorded = [m.time_ns for m in messages]
    if all(t is not None for t in recorded):
        return [t for t in recorded if t is not None]
    return [start_ns + (i + 1) * STEP_NS for i in range(len(messages))]


def _root(agent: str, trace_id: str, start: int, extra: dict[str, Any]) -> Span:
    return Span(
        trace_id=trace_id,
        span_id=new_id(),
        name=f"invoke_agent {agent}",
        start_time_unix_nano=start,
        attributes={A.OPERATION: A.OP_INVOKE_AGENT, A.AGENT_NAME: agent, **extra},
        status="ok",
    )


def _chat(root: Span, model: str, message: Message, start: int, end: int) -> Span:
    attributes: dict[str, Any] = {A.OPERATION: A.OP_CHAT, A.REQUEST_MODEL: model}
    if message.usage is not None:
        attributes[A.INPUT_TOKENS], attributes[A.OUTPUT_TOKENS] = message.usage
    if message.cost_usd:
        attributes[A.COST_USD] = message.cost_usd
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


def _tool(root: Span, call: Call, start: int) -> Span:
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


def _answer(span: Span, message: Message, time_ns: int) -> None:
    span.attributes[A.TOOL_RESULT] = message.text if message.text is not None else ""
    span.end_time_unix_nano = max(time_ns, span.start_time_unix_nano)
    if message.error:
        span.attributes[A.ERROR_TYPE] = TOOL_ERROR
        span.status = "error"
        span.status_message = (message.text or "")[:200]


def build_conversation(
    messages: Sequence[Message],
    *,
    agent: str,
    model: str,
    start_ns: int,
    end_ns: int | None = None,
    root_attributes: dict[str, Any] | None = None,
) -> Conversation:
    """The trace of ``messages`` (system messages already dropped).

    A user message opens a turn (a ``seatrial.turn`` event on the root); assistant messages
    and their tool calls belong to the turn open when they were written (those before the
    first user message, to none; one there without tool calls or usage is a fixed greeting,
    not a model call, and is left out). A tool message answers the call with its id, or else
    the oldest call still unanswered.
    """
    times = message_times(messages, start_ns)
    start = min([start_ns, *times[:1]])
    root = _root(agent, new_id(128), start, dict(root_attributes or {}))
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
    return Conversation(Trace(trace_id=root.trace_id, spans=spans), responses, start, finished)


def _greeting(message: Message) -> bool:
    return not message.calls and message.usage is None and not message.cost_usd


def _turn_event(index: int, text: str, at: int) -> SpanEvent:
    return SpanEvent(
        name=A.TURN, time_unix_nano=at, attributes={A.TURN_INDEX: index, A.TURN_MESSAGE: text}
    )
