"""Other conventions' attributes onto the OTel GenAI names Seatrial reads.

Agents export spans in three dialects: the current GenAI conventions, older GenAI names
(OpenLLMetry's ``gen_ai.prompt.0.content``, ``gen_ai.usage.prompt_tokens``,
``gen_ai.system``, ``llm.request.type``, ``traceloop.span.kind``) and OpenInference (Phoenix,
Arize: ``openinference.span.kind``, ``llm.model_name``, ``llm.token_count.prompt``,
``llm.input_messages.0.message.content``, ``tool.name``, ``input.value``...). Every check and
page reads the GenAI names, so :func:`normalize_span` adds them beside the originals:

- a GenAI attribute already present is never changed, and nothing is removed: the original
  attributes stay as they came, unknown ones included;
- ``gen_ai.operation.name`` comes from the OpenInference span kind (LLM ``chat``, TOOL
  ``execute_tool``, AGENT ``invoke_agent``, RETRIEVER ``retrieval``, EMBEDDING
  ``embeddings``; CHAIN and the other kinds get none: they say nothing the conventions
  name), else OpenLLMetry's span kind or request type, else ``chat`` for a span that names a
  model and nothing else;
- messages become ``gen_ai.input.messages`` / ``gen_ai.output.messages`` JSON in the
  conventions' ``[{role, parts}]`` shape; a tool span's ``input.value`` / ``output.value``
  become its call's arguments and result (OpenInference's ``tool.parameters`` is the tool's
  parameter schema, not the call's arguments, so it is kept as it is);
- an error span gets ``error.type`` from its ``exception`` event, else ``_OTHER`` when it is
  a GenAI operation;
- span names are kept; only a span without a name gets ``{operation} {model or tool}``;
- a tool call the messages hold and no ``execute_tool`` span records gets a span of its own
  (:mod:`seatrial.trace._message_tools`).

Running it twice gives the same trace: it only ever fills what is missing.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from itertools import repeat
from operator import attrgetter, is_
from typing import Any

from seatrial.trace import _attrs as A
from seatrial.trace._message_tools import tool_spans_from_messages
from seatrial.trace._span import Span, Trace, decode_attribute

OI_SPAN_KIND = "openinference.span.kind"
TRACELOOP_SPAN_KIND = "traceloop.span.kind"
LLM_REQUEST_TYPE = "llm.request.type"
ERROR_FALLBACK = "_OTHER"
"""``error.type`` of a failed operation whose exception type is unknown (the conventions'
fallback value)."""

_OPERATION_OF_OI_KIND = {
    "LLM": A.OP_CHAT,
    "TOOL": A.OP_EXECUTE_TOOL,
    "AGENT": A.OP_INVOKE_AGENT,
    "RETRIEVER": A.OP_RETRIEVAL,
    "EMBEDDING": A.OP_EMBEDDINGS,
}
_OPERATION_OF_TRACELOOP_KIND = {"agent": A.OP_INVOKE_AGENT, "tool": A.OP_EXECUTE_TOOL}
_OPERATION_OF_REQUEST_TYPE = {
    "chat": A.OP_CHAT,
    "completion": A.OP_TEXT_COMPLETION,
    "embedding": A.OP_EMBEDDINGS,
}
_START = attrgetter("start_time_unix_nano")
_MODEL_CALLS = frozenset({A.OP_CHAT, A.OP_TEXT_COMPLETION})
_COUNTS = frozenset({A.INPUT_TOKENS, A.OUTPUT_TOKENS, A.CACHE_READ_TOKENS})

_RENAMES: tuple[tuple[str, str], ...] = (
    ("llm.request.model_name", A.REQUEST_MODEL),
    ("llm.response.model_name", A.RESPONSE_MODEL),
    ("llm.model_name", A.REQUEST_MODEL),
    ("llm.model_name", A.RESPONSE_MODEL),
    ("embedding.model_name", A.REQUEST_MODEL),
    ("llm.token_count.prompt", A.INPUT_TOKENS),
    ("llm.token_count.completion", A.OUTPUT_TOKENS),
    (A.LEGACY_PROMPT_TOKENS, A.INPUT_TOKENS),
    (A.LEGACY_COMPLETION_TOKENS, A.OUTPUT_TOKENS),
    ("llm.token_count.prompt_details.cache_read", A.CACHE_READ_TOKENS),
    ("llm.provider", A.PROVIDER_NAME),
    (A.LEGACY_SYSTEM, A.PROVIDER_NAME),
    ("llm.system", A.PROVIDER_NAME),
    ("llm.cost.total", A.COST_USD),
    ("session.id", A.CONVERSATION_ID),
    ("agent.name", A.AGENT_NAME),
)
"""(source, GenAI name): the first source present fills a GenAI name that is missing."""
_RENAME_SOURCES = frozenset(source for source, _ in _RENAMES)
_TOOL_CALL_KEYS = frozenset({A.TOOL_NAME, A.TOOL_CALL_ID, A.TOOL_ARGUMENTS, A.TOOL_RESULT})
"""What :func:`_tool_call` fills: a span that has them all needs nothing from it."""
_MESSAGE_PREFIXES = (
    "llm.input_messages.",
    "llm.output_messages.",
    "llm.prompts.",
    "llm.choices.",
    A.LEGACY_PROMPT_PREFIX,
    A.LEGACY_COMPLETION_PREFIX,
)


def normalize_trace(trace: Trace) -> Trace:
    """The trace with every span normalized (:func:`normalize_span`) and an ``execute_tool``
    span for each tool call its messages hold that no span records
    (:func:`tool_spans_from_messages`); the same object when nothing needed to change."""
    spans = [normalize_span(span) for span in trace.spans]
    made = tool_spans_from_messages(spans)
    if not made and all(map(is_, spans, trace.spans)):
        return trace
    for span in made:
        # After the spans that started no later: the others keep the order they came in.
        spans.insert(bisect_right(spans, span.start_time_unix_nano, key=_START), span)
    return Trace(
        format_version=trace.format_version,
        trace_id=trace.trace_id,
        spans=spans,
        resource=dict(trace.resource),
    )


def normalize_span(span: Span) -> Span:
    """The span with the GenAI attributes its other-convention attributes imply; the same
    object when it already has them all."""
    attrs = span.attributes
    operation = attrs.get(A.OPERATION)
    # Every span of every ingested batch comes through here, most of them already in GenAI
    # names: these tests, the cheap ones, find that there is nothing to fill, without
    # setting up what filling takes; each says what the general path below would find.
    if (
        operation
        and span.name
        and span.status != "error"
        and _RENAME_SOURCES.isdisjoint(attrs)
        and (
            attrs.keys() >= _TOOL_CALL_KEYS
            if operation == A.OP_EXECUTE_TOOL
            else attrs.get(OI_SPAN_KIND) != "AGENT"
            if operation == A.OP_INVOKE_AGENT
            else operation not in _MODEL_CALLS or not _has_messages(attrs)
        )
    ):
        return span
    return _normalized(span)


def _normalized(span: Span) -> Span:
    """:func:`normalize_span`'s general path: fills whatever is missing."""
    attrs = span.attributes
    added: dict[str, Any] = {}

    def fill(key: str, value: Any) -> None:
        if value is not None and value != "" and key not in attrs and key not in added:
            # A dataframe export writes counts as floats (96.0): tokens are whole numbers.
            if key in _COUNTS and isinstance(value, float) and value.is_integer():
                value = int(value)
            added[key] = value

    if not _RENAME_SOURCES.isdisjoint(attrs):
        for source, target in _RENAMES:
            if source in attrs:
                fill(target, attrs[source])
    operation = attrs.get(A.OPERATION) or _operation(attrs, added)
    fill(A.OPERATION, operation)
    if operation == A.OP_EXECUTE_TOOL:
        if not attrs.keys() >= _TOOL_CALL_KEYS:
            _tool_call(span, fill)
    elif operation == A.OP_INVOKE_AGENT and attrs.get(OI_SPAN_KIND) == "AGENT":
        fill(A.AGENT_NAME, span.name)
    if operation in _MODEL_CALLS and _has_messages(attrs):
        if A.INPUT_MESSAGES not in attrs:
            fill(A.INPUT_MESSAGES, _encode(_input_messages(attrs)))
        if A.OUTPUT_MESSAGES not in attrs:
            fill(A.OUTPUT_MESSAGES, _encode(_output_messages(attrs)))
    if span.status == "error":
        fill(A.ERROR_TYPE, _exception_type(span) or (ERROR_FALLBACK if operation else None))
    if not added and span.name:
        return span
    name = span.name or _default_name(operation, {**attrs, **added})
    return span.model_copy(update={"attributes": {**attrs, **added}, "name": name})


def _has_messages(attrs: Mapping[str, Any]) -> bool:
    """Whether a model call's attributes hold messages in another convention's names."""
    return any(map(str.startswith, attrs, repeat(_MESSAGE_PREFIXES)))


def _operation(attrs: Mapping[str, Any], added: Mapping[str, Any]) -> str | None:
    kind = attrs.get(OI_SPAN_KIND)
    if kind is not None:
        operation = _OPERATION_OF_OI_KIND.get(str(kind).upper())
        if operation == A.OP_CHAT and _has_prefix(attrs, "llm.prompts."):
            if not _has_prefix(attrs, "llm.input_messages."):
                return A.OP_TEXT_COMPLETION
        return operation
    traceloop = attrs.get(TRACELOOP_SPAN_KIND)
    if traceloop is not None and str(traceloop) in _OPERATION_OF_TRACELOOP_KIND:
        return _OPERATION_OF_TRACELOOP_KIND[str(traceloop)]
    request_type = attrs.get(LLM_REQUEST_TYPE)
    if request_type is not None:
        return _OPERATION_OF_REQUEST_TYPE.get(str(request_type))
    if traceloop is None and (
        A.REQUEST_MODEL in attrs or A.RESPONSE_MODEL in attrs or A.REQUEST_MODEL in added
    ):
        return A.OP_CHAT
    return None


def _tool_call(span: Span, fill: Any) -> None:
    attrs = span.attributes
    name = attrs.get("tool.name") or attrs.get("traceloop.entity.name")
    fill(A.TOOL_NAME, name or span.name.removeprefix("execute_tool ").strip())
    fill(A.TOOL_CALL_ID, attrs.get("tool.id") or attrs.get("tool_call.id"))
    fill(A.TOOL_ARGUMENTS, _text(attrs.get("input.value", attrs.get("traceloop.entity.input"))))
    fill(A.TOOL_RESULT, _text(attrs.get("output.value", attrs.get("traceloop.entity.output"))))


def _exception_type(span: Span) -> str | None:
    for event in span.events:
        if event.name == "exception" and event.attributes.get("exception.type"):
            return str(event.attributes["exception.type"])
    value = span.attributes.get("exception.type")
    return str(value) if value else None


def _default_name(operation: str | None, attrs: Mapping[str, Any]) -> str:
    subject = (
        attrs.get(A.TOOL_NAME)
        or attrs.get(A.REQUEST_MODEL)
        or attrs.get(A.AGENT_NAME)
        or attrs.get(OI_SPAN_KIND)
        or ""
    )
    return f"{operation or 'span'} {subject}".strip()


# Messages ------------------------------------------------------------------------------


def genai_message(
    role: str,
    text: Any = None,
    *,
    tool_calls: Iterable[Mapping[str, Any]] = (),
    tool_call_id: str | None = None,
    finish_reason: str | None = None,
) -> dict[str, Any]:
    """One message in the conventions' shape: ``{role, parts[, finish_reason]}``.

    ``tool_calls`` are ``{id, name, arguments}`` (arguments parsed when they are JSON text);
    a ``tool`` message that answers ``tool_call_id`` becomes a ``tool_call_response`` part.
    """
    parts: list[dict[str, Any]] = []
    if tool_call_id and role == "tool":
        parts.append({"type": "tool_call_response", "id": tool_call_id, "response": text})
    elif text is not None and text != "":
        parts.append({"type": "text", "content": text})
    for call in tool_calls:
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": call.get("name"),
                "arguments": decode_attribute(call.get("arguments")),
            }
        )
    message: dict[str, Any] = {"role": role, "parts": parts}
    if finish_reason:
        message["finish_reason"] = finish_reason
    return message


def _input_messages(attrs: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = _oi_messages(attrs, "llm.input_messages.") or _openllmetry(
        attrs, A.LEGACY_PROMPT_PREFIX
    )
    if messages:
        return messages
    prompts = _indexed(attrs, "llm.prompts.")
    return [
        genai_message("user", fields.get("prompt.text")) for _, fields in sorted(prompts.items())
    ]


def _output_messages(attrs: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = _oi_messages(attrs, "llm.output_messages.") or _openllmetry(
        attrs, A.LEGACY_COMPLETION_PREFIX
    )
    if messages:
        return messages
    choices = _indexed(attrs, "llm.choices.")
    return [
        genai_message("assistant", fields.get("completion.text"))
        for _, fields in sorted(choices.items())
    ]


def _oi_messages(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """OpenInference's flattened messages: ``{prefix}{i}.message.role`` and friends."""
    messages = []
    for _, fields in sorted(_indexed(attrs, prefix).items()):
        text = fields.get("message.content")
        if text is None:
            contents = _indexed(fields, "message.contents.")
            texts = [
                str(c["message_content.text"])
                for _, c in sorted(contents.items())
                if c.get("message_content.text") is not None
            ]
            text = "\n".join(texts) if texts else None
        calls = [
            {
                "id": call.get("tool_call.id"),
                "name": call.get("tool_call.function.name"),
                "arguments": call.get("tool_call.function.arguments"),
            }
            for _, call in sorted(_indexed(fields, "message.tool_calls.").items())
        ]
        messages.append(
            genai_message(
                str(fields.get("message.role") or "user"),
                text,
                tool_calls=calls,
                tool_call_id=fields.get("message.tool_call_id"),
            )
        )
    return messages


def _openllmetry(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """OpenLLMetry's indexed messages: ``gen_ai.prompt.{i}.role``, ``.content``, ..."""
    messages = []
    for _, fields in sorted(_indexed(attrs, prefix).items()):
        calls = [
            {"id": call.get("id"), "name": call.get("name"), "arguments": call.get("arguments")}
            for _, call in sorted(_indexed(fields, "tool_calls.").items())
        ]
        messages.append(
            genai_message(
                str(fields.get("role") or "user"),
                fields.get("content"),
                tool_calls=calls,
                tool_call_id=fields.get("tool_call_id"),
                finish_reason=fields.get("finish_reason"),
            )
        )
    return messages


def _indexed(attrs: Mapping[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """``{prefix}{i}.{rest}`` attributes grouped by ``i``: ``{i: {rest: value}}``."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if index.isdigit() and rest:
            found.setdefault(int(index), {})[rest] = value
    return found


def _has_prefix(attrs: Mapping[str, Any], prefix: str) -> bool:
    return any(key.startswith(prefix) for key in attrs)


def _text(value: Any) -> str | None:
    """A value as the JSON text GenAI attributes carry (strings stay as they are)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _encode(messages: list[dict[str, Any]]) -> str | None:
    if not messages:
        return None
    return json.dumps(messages, ensure_ascii=False, separators=(",", ":"))
