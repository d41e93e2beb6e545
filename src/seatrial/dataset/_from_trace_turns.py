"""What the user said in a recorded trace, and what its tools answered.

Traces record the user's messages in several places, depending on who wrote them:

- Seatrial's own traces (and every importer built on them: the agent protocol's
  ``tools_called``, tau-bench, chat logs): a ``seatrial.turn`` event per user turn, with
  ``seatrial.turn.index`` and ``seatrial.turn.message``;
- OTel GenAI: ``gen_ai.input.messages`` (JSON: ``[{role, parts: [{type: text, content}]}]``) on
  a model-call span or on its ``gen_ai.client.inference.operation.details`` event; the older
  ``gen_ai.prompt.N.role`` / ``gen_ai.prompt.N.content`` and ``gen_ai.user.message`` events;
- OpenInference (Phoenix): ``llm.input_messages.N.message.role`` / ``.message.content``, and
  ``input.value`` on the agent's span.

Each model call sees the conversation so far, so one user message appears in many spans; the
turns are the user messages in the order they first appeared, a message repeated by the user
later counted again only when a span's own list says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from seatrial.trace import Span, Trace, decode_attribute
from seatrial.trace import attrs as A

OPENINFERENCE_INPUT = "input.value"
"""OpenInference: the input of a span (text, or JSON when ``input.mime_type`` says so)."""
OPENINFERENCE_OUTPUT = "output.value"
"""OpenInference: the output of a span."""
_PROMPT = re.compile(r"^gen_ai\.prompt\.(\d+)\.(role|content)$")
_OPENINFERENCE_MESSAGE = re.compile(r"^llm\.input_messages\.(\d+)\.message\.(role|content)$")
_OPENINFERENCE_OUTPUT = re.compile(r"^llm\.output_messages\.(\d+)\.message\.(role|content)$")
_AGENT_KINDS = frozenset({"AGENT", "CHAIN"})


def _text(content: Any) -> str | None:
    """The text of a message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes):
        texts = [
            str(part.get("content", part.get("text", "")))
            for part in content
            if isinstance(part, Mapping) and part.get("type", "text") == "text"
        ]
        joined = "\n".join(t for t in texts if t)
        return joined or None
    return None


def _role_texts(messages: Any, role: str = "user") -> list[str]:
    """The messages of one role in a GenAI or chat-completions message list, in order."""
    if not isinstance(messages, list):
        return []
    found = []
    for message in messages:
        if not isinstance(message, Mapping) or message.get("role") != role:
            continue
        text = _text(message.get("parts", message.get("content")))
        if text:
            found.append(text)
    return found


def _flat_messages(attributes: Mapping[str, Any], pattern: re.Pattern[str]) -> dict[int, Any]:
    """Messages written flat as ``prefix.N.role`` / ``prefix.N.content`` attributes, by N."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = pattern.match(key)
        if match:
            messages.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return messages


def _indexed(attributes: Mapping[str, Any], pattern: re.Pattern[str]) -> list[str]:
    """User messages written flat as ``prefix.N.role`` / ``prefix.N.content`` attributes."""
    messages = _flat_messages(attributes, pattern)
    return [
        str(message["content"])
        for _, message in sorted(messages.items())
        if message.get("role") == "user" and message.get("content")
    ]


def _span_user_messages(span: Span) -> list[str]:
    """The user messages one span records, in the span's own order.

    A span says it once but may say it in several spellings: normalization
    (:func:`seatrial.trace.normalize_span`) writes ``gen_ai.input.messages`` beside the
    OpenInference or OpenLLMetry attributes it read them from. The first spelling present is
    the span's list; reading two would count every message twice.
    """
    attributes = span.attributes
    spellings: tuple[Callable[[], list[str]], ...] = (
        lambda: _role_texts(decode_attribute(attributes.get(A.INPUT_MESSAGES))),
        lambda: _event_user_messages(span),
        lambda: _indexed(attributes, _PROMPT),
        lambda: _indexed(attributes, _OPENINFERENCE_MESSAGE),
    )
    for spelling in spellings:
        texts = spelling()
        if texts:
            return texts
    return []


def _event_user_messages(span: Span) -> list[str]:
    """User messages on the span's events: the inference-details event's
    ``gen_ai.input.messages``, or the older one-event-per-message ``gen_ai.user.message``."""
    texts: list[str] = []
    for event in span.events:
        if event.name == A.INFERENCE_DETAILS_EVENT:
            texts += _role_texts(decode_attribute(event.attributes.get(A.INPUT_MESSAGES)))
        elif event.name == A.LEGACY_USER_MESSAGE_EVENT:
            content = event.attributes.get("content", event.attributes.get(A.LEGACY_EVENT_CONTENT))
            text = _text(decode_attribute(content))
            if text:
                texts.append(text)
    return texts


def _merge(turns: list[str], seen: Sequence[str]) -> None:
    """Add one span's user messages to the turns found so far.

    A span's list usually repeats the conversation so far: when it starts with the turns
    already found, only its tail is new. Otherwise (a span that records only the newest
    message) each message not equal to the last turn is new.
    """
    if list(seen[: len(turns)]) == turns:
        turns.extend(seen[len(turns) :])
        return
    if list(turns[-len(seen) :]) == list(seen):
        return
    for text in seen:
        if not turns or turns[-1] != text:
            turns.append(text)


def _seatrial_turns(trace: Trace) -> list[str]:
    """The ``seatrial.turn`` events' messages, by turn index."""
    by_index: dict[int, str] = {}
    for position, (_, event) in enumerate(trace.events(A.TURN)):
        message = event.value(A.TURN_MESSAGE)
        if message is None:
            continue
        index = event.value(A.TURN_INDEX)
        key = int(index) if isinstance(index, int | str) and str(index).isdigit() else position
        by_index.setdefault(key, str(message))
    return [by_index[key] for key in sorted(by_index)]


def _agent_input(trace: Trace) -> list[str]:
    """OpenInference's ``input.value`` on the outermost agent or chain span, read as text or
    as a chat request (``{"messages": [...]}``)."""
    for span in trace.spans:
        kind = str(span.attributes.get("openinference.span.kind", "")).upper()
        is_agent = span.operation == A.OP_INVOKE_AGENT or kind in _AGENT_KINDS
        value = span.attributes.get(OPENINFERENCE_INPUT)
        if not is_agent or value is None:
            continue
        decoded = decode_attribute(value)
        if isinstance(decoded, Mapping):
            for key in ("messages", "input"):
                texts = _role_texts(decoded.get(key))
                if texts:
                    return texts
            for key in ("input", "question", "query", "message"):
                if isinstance(decoded.get(key), str) and decoded[key]:
                    return [decoded[key]]
            continue
        if isinstance(decoded, str) and decoded.strip():
            return [decoded]
    return []


def user_turns(trace: Trace) -> list[str]:
    """The user's messages in the trace, in order; empty when it records none."""
    turns = _seatrial_turns(trace)
    if turns:
        return turns
    found: list[str] = []
    for span in sorted(trace.spans, key=lambda s: s.start_time_unix_nano):
        seen = _span_user_messages(span)
        if seen:
            _merge(found, seen)
    return found or _agent_input(trace)


def _span_replies(span: Span) -> list[str]:
    """The assistant texts one span records, from its first spelling present (see
    :func:`_span_user_messages`: normalized and source attributes say the same thing)."""
    said = _role_texts(decode_attribute(span.attributes.get(A.OUTPUT_MESSAGES)), "assistant")
    if said:
        return said
    for event in span.events:
        if event.name == A.INFERENCE_DETAILS_EVENT:
            said += _role_texts(
                decode_attribute(event.attributes.get(A.OUTPUT_MESSAGES)), "assistant"
            )
    if said:
        return said
    return [
        str(message["content"])
        for _, message in sorted(_flat_messages(span.attributes, _OPENINFERENCE_OUTPUT).items())
        if message.get("role") == "assistant" and message.get("content")
    ]


def agent_replies(trace: Trace) -> list[str]:
    """The agent's text replies the trace records, in order: the assistant text of each model
    call (``gen_ai.output.messages``, ``llm.output_messages.N``), else the agent span's
    OpenInference ``output.value``. Empty when the trace keeps no reply (Seatrial's own traces
    keep replies on the attempt, not in the spans)."""
    replies: list[str] = []
    for span in sorted(trace.spans, key=lambda s: s.start_time_unix_nano):
        replies += _span_replies(span)
    if replies:
        return replies
    agent = trace.agent_span()
    output = agent.attributes.get(OPENINFERENCE_OUTPUT) if agent is not None else None
    return [output] if isinstance(output, str) and output else []


def recorded_tool_results(trace: Trace) -> list[dict[str, Any]]:
    """Each tool call the trace records with its arguments and result, in order.

    Kept in a case's ``metadata.recorded_tool_results``: what the tools answered in production,
    for a person reading the case and for an agent that can answer its tools from a recording.
    """
    results = []
    for call in trace.tool_calls():
        entry: dict[str, Any] = {
            "tool": call.name,
            "arguments": call.arguments,
            "success": call.success,
        }
        if A.TOOL_RESULT in call.span.attributes:
            entry["result"] = call.result
        if call.error_type is not None:
            entry["error_type"] = call.error_type
        if call.turn is not None:
            entry["turn"] = call.turn
        results.append(entry)
    return results


def texts_of(values: Iterable[Any]) -> str:
    """Every value as text, joined: what ids are looked for in (turns, context)."""
    return "\n".join(
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        for value in values
    )
