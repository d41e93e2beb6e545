"""The ``chat {model}`` span each gateway call leaves in its attempt's trace.

Attribute names follow the OTel GenAI conventions where they have one
(``gen_ai.request.model`` ...); the gateway's own facts live under ``seatrial.gateway.*``.
"""

from __future__ import annotations

import json
from typing import Any

from seatrial.errors import FallbackExhausted, ProviderError
from seatrial.gateway._prepared import PreparedRequest, prepared
from seatrial.gateway._types import CallAttempt, ChatRequest, ChatResponse, Message
from seatrial.trace import Span, TraceRecorder
from seatrial.trace import attrs as A

OP_EMBEDDINGS = "embeddings"

PURPOSE = "seatrial.gateway.purpose"
ROUTE_RULE = "seatrial.gateway.route_rule"
COMPLEXITY = "seatrial.gateway.complexity"
CACHED = "seatrial.gateway.cached"
FALLBACK_USED = "seatrial.gateway.fallback_used"
FAULT = "seatrial.gateway.fault"
ATTEMPTS = "seatrial.gateway.attempts"
CACHED_INPUT_TOKENS = "seatrial.gateway.cached_input_tokens"
STREAMED = "seatrial.gateway.streamed"
LIMIT_WAIT_MS = "seatrial.gateway.limit_wait_ms"
"""Milliseconds the call waited for its model's RPM/TPM limits."""
CASSETTE = "seatrial.gateway.cassette"
"""``record`` or ``replay`` when a cassette was involved."""
REQUEST_HASH = "seatrial.gateway.request_hash"
"""sha256 (first 16 hex digits) of the normalised request, the form cassettes compare: two
calls with equal hashes asked the model the same thing (tool call ids aside)."""

_FINISH_REASONS = {"tool_calls": "tool_call", "function_call": "tool_call"}
"""OpenAI's finish reasons whose OTel spelling differs; the others are the same word."""


def open_span(
    recorder: TraceRecorder, operation: str, model: str, attributes: dict[str, Any]
) -> Span:
    """Open ``{operation} {model}`` under the open span of this context or the attempt's root.

    Calls through the proxy run in the proxy's own task, where no span is open; they belong
    under the attempt's ``invoke_agent`` span, not at the root of the trace.
    """
    parent = recorder.current_span
    span = recorder.start_span(
        f"{operation} {model}",
        {A.OPERATION: operation, A.REQUEST_MODEL: model, **attributes},
    )
    if parent is None:
        root = next(
            (
                s
                for s in recorder.spans
                if s.operation == A.OP_INVOKE_AGENT and s.end_time_unix_nano is None
            ),
            None,
        )
        if root is not None and root is not span:
            span.parent_span_id = root.span_id
    return span


def open_chat_span(
    recorder: TraceRecorder,
    call: ChatRequest | PreparedRequest,
    model: str,
    route_rule: str | None,
) -> Span:
    """Open the span of one chat call before anything is sent."""
    call = prepared(call)
    request = call.request
    attributes: dict[str, Any] = {PURPOSE: request.purpose}
    if route_rule is not None:
        attributes[ROUTE_RULE] = route_rule
    if request.temperature is not None:
        attributes[A.REQUEST_TEMPERATURE] = request.temperature
    if request.max_tokens is not None:
        attributes[A.REQUEST_MAX_TOKENS] = request.max_tokens
    if request.stream:
        attributes[STREAMED] = True
    attributes[REQUEST_HASH] = call.hash
    return open_span(recorder, A.OP_CHAT, model, attributes)


def output_messages(response: ChatResponse) -> str:
    """The answer as ``gen_ai.output.messages`` JSON (OTel's output-messages schema).

    Text becomes ``text`` parts (OpenAI content parts that are not text stay as they are),
    tool calls ``tool_call`` parts with their arguments parsed when they are JSON; the
    finish reason is OTel's word for it (``tool_call``, not ``tool_calls``).
    """
    message = response.message
    parts = _text_parts(message)
    for call in message.tool_calls:
        try:
            arguments: Any = json.loads(call.arguments)
        except ValueError:
            arguments = call.arguments  # malformed by the model: kept as written
        parts.append(
            {"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments}
        )
    reason = response.finish_reason or ("tool_call" if message.tool_calls else "stop")
    out = {
        "role": "assistant",
        "parts": parts,
        "finish_reason": _FINISH_REASONS.get(reason, reason),
    }
    return json.dumps([out], ensure_ascii=False, separators=(",", ":"))


def _text_parts(message: Message) -> list[dict[str, Any]]:
    content = message.content
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}] if content else []
    return [
        {"type": "text", "content": part.get("text", "")} if part.get("type") == "text" else part
        for part in content
    ]


def _attempts(attempts: list[CallAttempt]) -> list[dict[str, Any]]:
    return [a.model_dump(mode="json") for a in attempts]


def close_chat_span(
    recorder: TraceRecorder, span: Span, response: ChatResponse, cassette: str | None = None
) -> None:
    """Record what the call used and who answered, then end the span."""
    attributes: dict[str, Any] = {
        A.RESPONSE_MODEL: response.provider_model or response.model,
        A.PROVIDER_NAME: response.provider,
        A.INPUT_TOKENS: response.usage.input_tokens,
        A.OUTPUT_TOKENS: response.usage.output_tokens,
        CACHED_INPUT_TOKENS: response.usage.cached_input_tokens,
        A.COST_USD: response.cost_usd,
        CACHED: response.cached,
        FALLBACK_USED: response.fallback_used,
        ATTEMPTS: _attempts(response.attempts),
        A.OUTPUT_MESSAGES: output_messages(response),
    }
    if response.finish_reason is not None:
        attributes[A.FINISH_REASONS] = [response.finish_reason]
    if response.route_rule is not None:
        attributes[ROUTE_RULE] = response.route_rule
    if response.fault is not None:
        attributes[FAULT] = response.fault
    if response.limit_wait_ms:
        attributes[LIMIT_WAIT_MS] = response.limit_wait_ms
    if cassette is not None:
        attributes[CASSETTE] = cassette
    recorder.set_attributes(span, attributes)
    recorder.end_span(span)


def error_type(exc: BaseException) -> str:
    """``error.type`` for a failed call: the provider's error kind (for a chain that ran out,
    its last try's: ``timeout``, ``server_error`` ...), else the error's class."""
    if isinstance(exc, ProviderError):
        return exc.kind
    if isinstance(exc, FallbackExhausted) and exc.attempts:
        last = exc.attempts[-1]
        if isinstance(last, CallAttempt):
            return last.outcome
    if isinstance(exc, TimeoutError):
        return "timeout"
    return type(exc).__name__


def fail_span(
    recorder: TraceRecorder, span: Span, exc: BaseException, fault: str | None = None
) -> None:
    """End a span as failed, with every try when a fallback chain ran out."""
    attributes: dict[str, Any] = {}
    if isinstance(exc, FallbackExhausted):
        attributes[ATTEMPTS] = [
            a.model_dump(mode="json") if isinstance(a, CallAttempt) else str(a)
            for a in exc.attempts
        ]
    if fault is not None:
        attributes[FAULT] = fault
    recorder.set_attributes(span, attributes)
    recorder.end_span(span, error=error_type(exc), message=str(exc))
