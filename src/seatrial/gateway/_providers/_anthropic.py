"""Anthropic's Messages API through the official ``anthropic`` SDK (the ``anthropic`` extra).

Requests and answers are mapped to and from OpenAI's shape, which the rest of the gateway
speaks: system messages go to ``system``; tool definitions become ``input_schema`` tools;
an assistant's tool calls become ``tool_use`` blocks and ``tool`` messages ``tool_result``
blocks (and back); consecutive messages of one role are merged, as the API requires.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from seatrial.errors import GatewayError, ProviderError
from seatrial.gateway._config import ModelConfig
from seatrial.gateway._providers._base import (
    Deadline,
    connection_error,
    malformed_error,
    raise_from,
    redact,
    status_error,
)
from seatrial.gateway._types import (
    ChatChunk,
    ChatRequest,
    ChatResponse,
    ChatToolCall,
    EmbeddingRequest,
    EmbeddingResponse,
    Message,
    Usage,
)

# Anthropic requires max_tokens; this is the answer length when a request sets none.
DEFAULT_MAX_TOKENS = 4096
_SHAPE_ERRORS = (AttributeError, TypeError, IndexError, KeyError, ValueError)
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def _part(part: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI content part as an Anthropic content block."""
    if part.get("type") == "text":
        return {"type": "text", "text": part.get("text", "")}
    if part.get("type") == "image_url":
        url = str((part.get("image_url") or {}).get("url", ""))
        if url.startswith("data:") and ";base64," in url:
            media_type, data = url[len("data:") :].split(";base64,", 1)
            return {
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": data},
            }
        return {"type": "image", "source": {"type": "url", "url": url}}
    return part  # already an Anthropic block (document, image ...): pass it through


def _blocks(content: str | list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [_part(part) for part in content]


def _tool_input(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments) if arguments else {}
    except ValueError:
        value = None
    # A malformed call (an injected fault, a weak model) still has to be sent back in the
    # history; an empty input keeps the conversation valid for the API.
    return value if isinstance(value, dict) else {}


def anthropic_messages(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """The ``system`` text and the ``messages`` of a Messages API request."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system.append(" ".join(b.get("text", "") for b in _blocks(message.content)))
            continue
        if message.role == "tool":
            role = "user"
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
            result["content"] = _blocks(message.content) or ""
            blocks = [result]
        else:
            role = message.role
            blocks = _blocks(message.content)
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c.arguments)}
                for c in message.tool_calls
            ]
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return ("\n\n".join(system) if system else None), out


def anthropic_tools(request: ChatRequest) -> dict[str, Any]:
    """``tools`` and ``tool_choice`` in Anthropic's shape (empty when the request has none)."""
    if not request.tools:
        return {}
    tools = []
    for tool in request.tools:
        function = tool.get("function", tool)
        schema = function.get("parameters") or {"type": "object", "properties": {}}
        item = {"name": function["name"], "input_schema": schema}
        if function.get("description"):
            item["description"] = function["description"]
        tools.append(item)
    params: dict[str, Any] = {"tools": tools}
    choice = request.tool_choice
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        params["tool_choice"] = {"type": "tool", "name": name}
    elif choice in ("auto", "none"):
        params["tool_choice"] = {"type": choice}
    elif choice == "required":
        params["tool_choice"] = {"type": "any"}
    return params


def anthropic_params(request: ChatRequest, model: ModelConfig) -> dict[str, Any]:
    """The body of a Messages API request (``seed`` and ``response_format`` have no match)."""
    system, messages = anthropic_messages(request.messages)
    params: dict[str, Any] = {
        "model": model.model,
        "messages": messages,
        "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
        **anthropic_tools(request),
    }
    if system is not None:
        params["system"] = system
    if request.temperature is not None:
        params["temperature"] = request.temperature
    return params


def anthropic_usage(usage: Any) -> Usage:
    """Our usage counts cached prompt tokens in the input; Anthropic's does not."""
    cached = int(getattr(usage, "cache_read_input_tokens", None) or 0)
    created = int(getattr(usage, "cache_creation_input_tokens", None) or 0)
    return Usage(
        input_tokens=int(usage.input_tokens or 0) + cached + created,
        output_tokens=int(usage.output_tokens or 0),
        cached_input_tokens=cached,
    )


def anthropic_response(message: Any, model: ModelConfig) -> ChatResponse:
    """A ChatResponse from a Messages API message."""
    texts: list[str] = []
    calls: list[ChatToolCall] = []
    for block in message.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            arguments = json.dumps(block.input, ensure_ascii=False)
            calls.append(ChatToolCall(id=block.id, name=block.name, arguments=arguments))
    return ChatResponse(
        message=Message(
            role="assistant", content="".join(texts) if texts else None, tool_calls=calls
        ),
        usage=anthropic_usage(message.usage),
        model=model.name,
        provider="anthropic",
        provider_model=str(message.model or model.model),
        finish_reason=_STOP_REASONS.get(message.stop_reason, message.stop_reason),
    )


class AnthropicProvider:
    """Calls Anthropic's Messages API (or a compatible server) with one key."""

    name = "anthropic"

    def __init__(self, *, base_url: str | None, key: str) -> None:
        try:
            import anthropic
        except ImportError as exc:
            raise GatewayError(
                'the anthropic provider needs the anthropic SDK: pip install "seatrial[anthropic]"'
            ) from exc
        self._sdk = anthropic
        self._key = key
        self._client = anthropic.AsyncAnthropic(base_url=base_url, api_key=key, max_retries=0)

    def _error(self, exc: Exception, model: ModelConfig) -> ProviderError:
        sdk = self._sdk
        detail = redact(str(exc), self._key)
        if isinstance(exc, sdk.APITimeoutError):
            return ProviderError(
                f"model {model.name!r} timed out in the anthropic client: {detail}",
                kind="timeout",
                retryable=True,
            )
        if isinstance(exc, sdk.APIConnectionError):
            return connection_error(model, self.name, detail)
        if isinstance(exc, sdk.APIStatusError):
            return status_error(model, self.name, exc.status_code, detail, self._key)
        return malformed_error(model, self.name, f"{type(exc).__name__}: {detail}")

    async def chat(
        self,
        request: ChatRequest,
        model: ModelConfig,
        *,
        first_byte_timeout_s: float,
        timeout_s: float,
    ) -> ChatResponse:
        deadline = Deadline(model, self.name, first_byte_timeout_s, timeout_s)
        params = anthropic_params(request, model)
        try:
            message = await deadline.run(
                self._client.messages.create(**params, timeout=timeout_s), first_byte=True
            )
            response = anthropic_response(message, model)
        except (self._sdk.AnthropicError, *_SHAPE_ERRORS) as exc:
            raise_from(self._error(exc, model), exc, self._key)
        return response.model_copy(update={"latency_ms": deadline.elapsed_ms()})

    async def stream(
        self,
        request: ChatRequest,
        model: ModelConfig,
        *,
        first_byte_timeout_s: float,
        timeout_s: float,
    ) -> AsyncIterator[ChatChunk]:
        deadline = Deadline(model, self.name, first_byte_timeout_s, timeout_s)
        params = anthropic_params(request, model)
        errors = (self._sdk.AnthropicError, *_SHAPE_ERRORS)
        try:
            stream = await deadline.run(
                self._client.messages.create(**params, stream=True, timeout=timeout_s)
            )
        except errors as exc:
            raise_from(self._error(exc, model), exc, self._key)
        usage: dict[str, int] = {}
        finish: str | None = None
        tool_index: dict[int, int] = {}  # content block index -> tool call number
        try:
            iterator = aiter(stream)
            while True:
                try:
                    event = await deadline.run(anext(iterator), first_byte=True)
                    chunk, finish = _event_chunk(event, usage, tool_index, finish)
                except StopAsyncIteration:
                    break
                except errors as exc:
                    raise_from(self._error(exc, model), exc, self._key)
                if chunk is not None:
                    yield chunk
        finally:
            await stream.close()
        yield ChatChunk(
            finish_reason=finish,
            usage=Usage(
                input_tokens=usage.get("input", 0) + usage.get("cached", 0),
                output_tokens=usage.get("output", 0),
                cached_input_tokens=usage.get("cached", 0),
            ),
        )

    async def embed(
        self, request: EmbeddingRequest, model: ModelConfig, *, timeout_s: float
    ) -> EmbeddingResponse:
        raise ProviderError(
            f"model {model.name!r} uses the anthropic provider, and Anthropic has no "
            f"embeddings API; configure an OpenAI-compatible model with `embedding: true`",
            kind="bad_request",
        )

    async def aclose(self) -> None:
        await self._client.close()


def _event_chunk(
    event: Any, usage: dict[str, int], tool_index: dict[int, int], finish: str | None
) -> tuple[ChatChunk | None, str | None]:
    """The chunk one stream event adds (if any), updating usage and the finish reason."""
    kind = event.type
    if kind == "message_start":
        start = event.message.usage
        cached = int(getattr(start, "cache_read_input_tokens", None) or 0)
        created = int(getattr(start, "cache_creation_input_tokens", None) or 0)
        usage["input"] = int(start.input_tokens or 0) + created
        usage["cached"] = cached
        usage["output"] = int(start.output_tokens or 0)
    elif kind == "content_block_start" and event.content_block.type == "tool_use":
        number = tool_index[event.index] = len(tool_index)
        block = event.content_block
        return ChatChunk(
            tool_call_index=number, tool_call_id=block.id, tool_name=block.name
        ), finish
    elif kind == "content_block_delta":
        delta = event.delta
        if delta.type == "text_delta":
            return ChatChunk(content=delta.text), finish
        if delta.type == "input_json_delta":
            number = tool_index[event.index]
            return ChatChunk(tool_call_index=number, arguments=delta.partial_json), finish
    elif kind == "message_delta":
        # Counts here are cumulative for the message, so they replace the start's.
        delta_usage = event.usage
        usage["output"] = int(delta_usage.output_tokens or 0)
        if getattr(delta_usage, "input_tokens", None) is not None:
            created = int(getattr(delta_usage, "cache_creation_input_tokens", None) or 0)
            usage["input"] = int(delta_usage.input_tokens) + created
        if getattr(delta_usage, "cache_read_input_tokens", None) is not None:
            usage["cached"] = int(delta_usage.cache_read_input_tokens)
        reason = event.delta.stop_reason
        return None, _STOP_REASONS.get(reason, reason) if reason else finish
    return None, finish
