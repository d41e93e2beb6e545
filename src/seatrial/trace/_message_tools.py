"""Tool calls a trace records only inside its model calls' messages, as ``execute_tool`` spans.

Many SDKs trace the model calls and not the tools the agent ran between them: OpenInference's
and OpenLLMetry's OpenAI instrumentations, the OTel contrib ``openai-v2`` one, a Langfuse v2
generation. The calls are still there: an assistant message's ``tool_call`` part (``{id, name,
arguments}``) in ``gen_ai.output.messages``, and the ``tool_call_response`` part (``{id,
response}``) that answered it in a later call's ``gen_ai.input.messages``. Every check, the
trace list and ``cases from-trace`` read tool calls from ``execute_tool`` spans, so
:func:`tool_spans_from_messages` makes one per call the messages hold and no span records:

- a call whose id an ``execute_tool`` span carries is that span's call: nothing is made;
- a call whose id no span carries, but a tool span of the same name without an id is still
  unclaimed (Langfuse's TOOL observations and many hand-made spans carry no call id), is that
  span's call: nothing is made;
- otherwise an ``execute_tool`` span is made, a sibling of the model call that asked for it,
  with the call's name, id, arguments, its result when a later message answered it, and
  ``seatrial.tool_call.source = message`` so a reader can tell it from a span the agent
  exported.

Its span id comes from the trace id and the call id, so a call seen again (read twice, or in
another batch of the same trace, in a later model call's history) is the same span, stored
once. A tool span the agent exports in a later batch than the message is matched when the
trace is read (:meth:`seatrial.trace.Trace.tool_calls` drops a made span whose call id a real
one carries). Calls without an id are read from the model call that made them only (its
output), never from a later call's history, where each would be seen again.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from seatrial.trace import _attrs as A
from seatrial.trace._span import Span, decode_attribute

MODEL_CALL_OPERATIONS = frozenset({A.OP_CHAT, A.OP_TEXT_COMPLETION, "generate_content"})


@dataclass
class _Call:
    call_id: str | None
    name: str
    arguments: Any
    asked_by: Span
    at: int


def _messages(span: Span, key: str) -> list[Mapping[str, Any]]:
    """The messages under ``key`` on the span, else on its inference-details event."""
    sources = [span.attributes.get(key)]
    sources += [e.attributes.get(key) for e in span.events if e.name == A.INFERENCE_DETAILS_EVENT]
    for source in sources:
        decoded = decode_attribute(source)
        if isinstance(decoded, list) and decoded:
            return [m for m in decoded if isinstance(m, Mapping)]
    return []


def _has_messages(span: Span) -> bool:
    """Whether :func:`_messages` may find any on the span: most model calls of an ingested
    batch carry none, and this test spares building and decoding for them."""
    attributes = span.attributes
    if A.INPUT_MESSAGES in attributes or A.OUTPUT_MESSAGES in attributes:
        return True
    return any(event.name == A.INFERENCE_DETAILS_EVENT for event in span.events)


def _parts(messages: Sequence[Mapping[str, Any]], kind: str) -> Iterator[Mapping[str, Any]]:
    for message in messages:
        parts = message.get("parts")
        if isinstance(parts, list):
            yield from (p for p in parts if isinstance(p, Mapping) and p.get("type") == kind)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _asked_and_answered(
    model_calls: Sequence[Span],
) -> tuple[list[_Call], dict[str, tuple[Any, int]]]:
    """Each tool call the messages hold (once per id, in the order first seen) and each
    answer by call id (the response and when the model call that read it started)."""
    calls: list[_Call] = []
    seen: set[str] = set()
    answers: dict[str, tuple[Any, int]] = {}

    def add(part: Mapping[str, Any], span: Span, at: int, *, history: bool) -> None:
        name = part.get("name")
        call_id = str(part["id"]) if part.get("id") not in (None, "") else None
        if not isinstance(name, str) or not name or (history and call_id is None):
            return
        if call_id is not None:
            if call_id in seen:
                return
            seen.add(call_id)
        calls.append(_Call(call_id, name, part.get("arguments"), span, at))

    for span in model_calls:
        inputs = _messages(span, A.INPUT_MESSAGES)
        for part in _parts(inputs, "tool_call_response"):
            if part.get("id") not in (None, ""):
                answers.setdefault(
                    str(part["id"]), (part.get("response"), span.start_time_unix_nano)
                )
        for part in _parts(inputs, "tool_call"):
            add(part, span, span.start_time_unix_nano, history=True)
        end = span.end_time_unix_nano or span.start_time_unix_nano
        for part in _parts(_messages(span, A.OUTPUT_MESSAGES), "tool_call"):
            add(part, span, end, history=False)
    return calls, answers


def tool_spans_from_messages(spans: Sequence[Span]) -> list[Span]:
    """The ``execute_tool`` spans ``spans`` lack for the tool calls their messages hold
    (see the module's docstring); empty when every call has its span."""
    model_calls = sorted(
        (s for s in spans if s.operation in MODEL_CALL_OPERATIONS and _has_messages(s)),
        key=lambda s: s.start_time_unix_nano,
    )
    if not model_calls:
        return []
    calls, answers = _asked_and_answered(model_calls)
    if not calls:
        return []
    tools = [s for s in spans if s.operation == A.OP_EXECUTE_TOOL]
    with_ids = {
        str(s.attributes[A.TOOL_CALL_ID]) for s in tools if s.attributes.get(A.TOOL_CALL_ID)
    }
    unclaimed = Counter(_tool_name(s) for s in tools if not s.attributes.get(A.TOOL_CALL_ID))
    made: list[Span] = []
    for index, call in enumerate(calls):
        if call.call_id is not None and call.call_id in with_ids:
            continue
        if unclaimed[call.name] > 0:
            unclaimed[call.name] -= 1
            continue
        made.append(_span(call, answers, index))
    return made


def _tool_name(span: Span) -> str:
    return str(span.attributes.get(A.TOOL_NAME) or span.name.removeprefix("execute_tool "))


def _span(call: _Call, answers: Mapping[str, tuple[Any, int]], index: int) -> Span:
    asked = call.asked_by
    key = call.call_id if call.call_id is not None else f"{asked.span_id}:{index}"
    seed = f"{asked.trace_id}:message-tool-call:{key}"
    attributes: dict[str, Any] = {
        A.OPERATION: A.OP_EXECUTE_TOOL,
        A.TOOL_NAME: call.name,
        A.TOOL_ARGUMENTS: _text(call.arguments if call.arguments is not None else {}),
        A.TOOL_CALL_SOURCE: A.TOOL_CALL_FROM_MESSAGE,
    }
    end = call.at
    if call.call_id is not None:
        attributes[A.TOOL_CALL_ID] = call.call_id
        if call.call_id in answers:
            response, answered_at = answers[call.call_id]
            attributes[A.TOOL_RESULT] = _text(response if response is not None else "")
            end = max(end, answered_at)
    if asked.attributes.get(A.TURN_INDEX) is not None:
        attributes[A.TURN_INDEX] = asked.attributes[A.TURN_INDEX]
    return Span(
        trace_id=asked.trace_id,
        span_id=hashlib.sha256(seed.encode()).hexdigest()[:16],
        parent_span_id=asked.parent_span_id,
        name=f"execute_tool {call.name}",
        start_time_unix_nano=call.at,
        end_time_unix_nano=end,
        attributes=attributes,
    )
