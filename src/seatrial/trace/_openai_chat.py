"""OpenAI chat-completion logs as traces: one record, one trace.

A record is one of the shapes teams keep their chat logs in:

- ``{"messages": [...]}`` with optional ``model``, ``id``, ``created``, ``usage``,
  ``choices``, ``tools`` and ``metadata`` (stored completions, fine-tuning JSONL, gateway
  logs that flatten request and response);
- ``{"request": {"model", "messages", ...}, "response": {"id", "created", "model",
  "choices", "usage"}}``, the request/response pairs a logging proxy writes (``body`` for
  ``request``, and a ``response.body`` as in OpenAI's batch output, are read too).

The messages (system, developer, user, assistant with ``tool_calls`` or the older
``function_call``, tool and function) and the response's first choice become a conversation
(:func:`build_conversation`): an ``invoke_agent`` root with a ``seatrial.turn`` event per user
message, a ``chat`` span per assistant message and an ``execute_tool`` span per tool call
with the matching tool message as its result. The response's ``usage`` goes on the ``chat``
span of the answer it paid for. See docs/ingestion.md.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from seatrial.i18n import gettext as _
from seatrial.trace import _attrs as A
from seatrial.trace._conversation import (
    CONVERSATION_STEP_NS,
    Conversation,
    ConversationCall,
    ConversationMessage,
    build_conversation,
    content_id,
)
from seatrial.trace._format_error import TraceFormatError
from seatrial.trace._span import Trace
from seatrial.trace._tools_called import encode_json

FORMAT = "openai-chat"
_SESSION_KEYS = ("session_id", "conversation_id", "thread_id")
_ROLES = ("system", "developer", "user", "assistant", "tool", "function")


def matches(data: Any) -> bool:
    """A record (or a list of them, judged by the first) that holds chat ``messages``."""
    first = data[0] if isinstance(data, list) and data else data
    if not isinstance(first, Mapping):
        return False
    key = _request_key(first)
    messages = first[key].get("messages") if key is not None else first.get("messages")
    return (
        isinstance(messages, list)
        and bool(messages)
        and isinstance(messages[0], Mapping)
        and isinstance(messages[0].get("role"), str)
    )


def read(data: Any, *, start_ns: int | None = None) -> list[Trace]:
    """One trace per record of a chat log (a record, or a list of records).

    Times come from ``created`` where a record has it, else from ``start_ns`` (the moment
    the file is read when not given), one millisecond per message, records laid one after
    the other in file order, so time always moves forward through a file.
    """
    if isinstance(data, list):
        records, prefix = data, "[{}]"
    else:
        records, prefix = [data], ""
    cursor = start_ns if start_ns is not None else time.time_ns()
    traces = []
    for index, record in enumerate(records):
        where = prefix.format(index)
        if not isinstance(record, Mapping):
            raise TraceFormatError(
                _("{where}: expected an object holding `messages`").format(where=where)
            )
        conversation = _conversation(record, where, cursor)
        traces.append(conversation.trace)
        cursor = conversation.finished_ns + CONVERSATION_STEP_NS
    return traces


def _request_key(record: Mapping[str, Any]) -> str | None:
    for key in ("request", "body"):
        value = record.get(key)
        if isinstance(value, Mapping) and "messages" in value:
            return key
    return None


def _response(record: Mapping[str, Any], where: str) -> tuple[Mapping[str, Any] | None, str]:
    """The completion the record logged, if any, and its path in the file."""
    response = record.get("response")
    if isinstance(response, Mapping):
        body = response.get("body")
        if isinstance(body, Mapping):
            return body, f"{where}.response.body"
        return response, f"{where}.response"
    return (record, where) if "choices" in record else (None, where)


def _conversation(record: Mapping[str, Any], where: str, cursor: int) -> Conversation:
    key = _request_key(record)
    source: Mapping[str, Any] = record[key] if key is not None else record
    messages_at = f"{where}.{key}.messages" if key is not None else f"{where}.messages"
    response, response_at = _response(record, where)
    messages = source.get("messages")
    if not isinstance(messages, list):
        raise TraceFormatError(
            _("{messages_at}: expected a list of chat messages").format(messages_at=messages_at)
        )
    model = _string(source.get("model")) or _string((response or {}).get("model")) or "unknown"
    system, converted = _messages(messages, messages_at)
    answer = _answer(response, response_at, len(messages)) if response is not None else None
    if answer is not None:
        converted.append(answer)
    else:
        usage_at = f"{response_at}.usage" if response is not None else f"{where}.usage"
        usage = _usage((response or record).get("usage"), usage_at)
        _put_usage_on_last_answer(converted, usage)
    created = _created(response, record)
    record_id = _record_id(record, response)
    trace_id = content_id(FORMAT, record_id) if record_id else content_id(FORMAT, record)
    return build_conversation(
        converted,
        agent=_agent(record, source),
        model=model,
        start_ns=created if created is not None else cursor,
        root_attributes=_root_attributes(record, source, system),
        trace_id=trace_id,
    )


def _messages(messages: list[Any], where: str) -> tuple[list[str], list[ConversationMessage]]:
    """The system texts and the conversation's messages, checked one by one."""
    system: list[str] = []
    converted: list[ConversationMessage] = []
    for position, message in enumerate(messages):
        at = f"{where}[{position}]"
        if not isinstance(message, Mapping):
            raise TraceFormatError(_("{at}: expected an object with a `role`").format(at=at))
        role = message.get("role")
        if role not in _ROLES:
            raise TraceFormatError(
                _("{at}.role: expected one of {roles}").format(at=at, roles=", ".join(_ROLES))
            )
        text = _text(message.get("content"), f"{at}.content")
        if role in ("system", "developer"):
            system.append(text or "")
        elif role == "user":
            converted.append(ConversationMessage("user", text or ""))
        elif role == "assistant":
            converted.append(ConversationMessage("assistant", text, _calls(message, at, position)))
        else:
            answers = message.get("tool_call_id")
            converted.append(ConversationMessage("tool", text, answers=_string(answers)))
    return system, converted


def _calls(message: Mapping[str, Any], where: str, position: int) -> tuple[ConversationCall, ...]:
    raw = message.get("tool_calls")
    if raw is None and isinstance(message.get("function_call"), Mapping):
        raw = [{"function": message["function_call"]}]  # the pre-tools spelling
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise TraceFormatError(
            _("{where}.tool_calls: expected a list of tool calls").format(where=where)
        )
    calls = []
    for n, call in enumerate(raw):
        at = f"{where}.tool_calls[{n}]"
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not _string(function.get("name")):
            raise TraceFormatError(
                _("{at}.function.name: expected the tool's name (a string)").format(at=at)
            )
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = encode_json(arguments)  # some loggers store the parsed object
        call_id = _string(call.get("id")) or f"call_{position}_{n}"
        calls.append(
            ConversationCall(call_id=call_id, name=str(function["name"]), arguments=arguments)
        )
    return tuple(calls)


def _answer(response: Mapping[str, Any], where: str, position: int) -> ConversationMessage | None:
    """The response's first choice as an assistant message, with the response's usage."""
    choices = response.get("choices")
    if choices is None:
        return None
    if not isinstance(choices, list):
        raise TraceFormatError(_("{where}.choices: expected a list of choices").format(where=where))
    if not choices:
        return None
    first = choices[0]
    message = first.get("message") if isinstance(first, Mapping) else None
    at = f"{where}.choices[0].message"
    if not isinstance(message, Mapping):
        raise TraceFormatError(
            _("{at}: expected the assistant's message (an object)").format(at=at)
        )
    return ConversationMessage(
        "assistant",
        _text(message.get("content"), f"{at}.content"),
        _calls(message, at, position),
        usage=_usage(response.get("usage"), f"{where}.usage"),
        model=_string(response.get("model")),
        response_id=_string(response.get("id")),
    )


def _put_usage_on_last_answer(
    messages: list[ConversationMessage], usage: tuple[int, int] | None
) -> None:
    """A ``usage`` logged without a choice to hold it paid for the last answer."""
    if usage is None:
        return
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            messages[index] = replace(messages[index], usage=usage)
            return


def _usage(usage: Any, where: str) -> tuple[int, int] | None:
    if usage is None:
        return None
    if not isinstance(usage, Mapping):
        raise TraceFormatError(
            _("{where}: expected an object (prompt_tokens, completion_tokens)").format(where=where)
        )
    counts = []
    for names in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")):
        value = next((usage[n] for n in names if n in usage), 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise TraceFormatError(
                _("{where}.{field}: expected a whole number >= 0").format(
                    where=where, field=names[0]
                )
            )
        counts.append(value)
    return counts[0], counts[1]


def _text(content: Any, where: str) -> str | None:
    """A message's text: a string, or the text parts of a list of content parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping)
            and part.get("type") in ("text", "input_text", "output_text")
        ]
        return "\n".join(texts)
    raise TraceFormatError(
        _("{where}: expected text or a list of content parts").format(where=where)
    )


def _created(response: Mapping[str, Any] | None, record: Mapping[str, Any]) -> int | None:
    for holder in (response or {}, record):
        created = holder.get("created")
        if isinstance(created, int | float) and not isinstance(created, bool) and created > 0:
            return int(created * 1_000_000_000)
    return None


def _record_id(record: Mapping[str, Any], response: Mapping[str, Any] | None) -> str | None:
    for value in (
        (response or {}).get("id"),
        record.get("id"),
        record.get("custom_id"),
        record.get("request_id"),
    ):
        if _string(value):
            return str(value)
    return None


def _metadata(*holders: Mapping[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for holder in holders:
        metadata = holder.get("metadata")
        if isinstance(metadata, Mapping):
            merged.update(metadata)
    return merged


def _agent(record: Mapping[str, Any], source: Mapping[str, Any]) -> str:
    metadata = _metadata(source, record)
    return _string(metadata.get("agent_name")) or _string(metadata.get("agent")) or "agent"


def _root_attributes(
    record: Mapping[str, Any], source: Mapping[str, Any], system: list[str]
) -> dict[str, Any]:
    """Session and user ids, the system prompt and the tools offered, for the root span."""
    attributes: dict[str, Any] = {}
    metadata = _metadata(source, record)
    for holder in (record, source, metadata):
        session = next((_string(holder.get(key)) for key in _SESSION_KEYS if holder.get(key)), None)
        if session:
            attributes[A.CONVERSATION_ID] = session
            break
    user = _string(source.get("user")) or _string(record.get("user_id"))
    if user:
        attributes[A.USER_ID] = user
    if system:
        parts = [{"type": "text", "content": text} for text in system]
        attributes[A.SYSTEM_INSTRUCTIONS] = json.dumps(parts, ensure_ascii=False)
    if isinstance(source.get("tools"), list):
        attributes[A.TOOL_DEFINITIONS] = encode_json(source["tools"])
    return attributes


def _string(value: Any) -> str | None:
    """A non-empty string or a number as text; None for anything else."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None
