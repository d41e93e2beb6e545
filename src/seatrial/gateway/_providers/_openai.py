"""Any OpenAI-compatible endpoint: OpenAI itself and the servers that speak its
chat-completions API (DeepSeek, Qwen's compatible mode, vLLM, Ollama, llama.cpp's server,
Seatrial's own proxy).

The calls go over aiohttp (:mod:`._openai_http`); the ``openai`` SDK's shapes and errors are
read here too, for litellm, which answers in them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import openai

from seatrial.errors import ProviderError
from seatrial.gateway._config import ModelConfig
from seatrial.gateway._providers._base import (
    Deadline,
    connection_error,
    embedding_response,
    malformed_error,
    raise_from,
    redact,
    status_error,
)
from seatrial.gateway._providers._openai_http import (
    SHAPE_ERRORS,
    OpenAIHttp,
    StatusFailure,
    UpstreamFailure,
    chunks_from,
    response_from,
    upstream_error,
    usage_from,
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

UPSTREAM_ERRORS = (StatusFailure, UpstreamFailure, *SHAPE_ERRORS)
"""What a call through :class:`OpenAIHttp` raises, each translated by ``upstream_error``."""


def openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as the chat-completions API takes them."""
    out: list[dict[str, Any]] = []
    for message in messages:
        item: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            item["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in message.tool_calls
            ]
        if message.tool_call_id is not None:
            item["tool_call_id"] = message.tool_call_id
        if message.name is not None:
            item["name"] = message.name
        out.append(item)
    return out


def openai_params(request: ChatRequest, model: ModelConfig) -> dict[str, Any]:
    """The body of a chat-completions request (without ``stream``)."""
    params: dict[str, Any] = {
        "model": model.model,
        "messages": openai_messages(request.messages),
    }
    optional = {
        "tools": request.tools,
        "tool_choice": request.tool_choice if request.tools else None,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "response_format": request.response_format,
    }
    params.update({k: v for k, v in optional.items() if v is not None})
    return params


def openai_usage(usage: Any) -> Usage:
    """Usage from an OpenAI-shaped usage object (prompt tokens include cached ones)."""
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    if isinstance(details, Mapping):
        cached = details.get("cached_tokens")
    else:
        cached = getattr(details, "cached_tokens", None)
    return Usage(
        input_tokens=int(usage.prompt_tokens or 0),
        output_tokens=int(usage.completion_tokens or 0),
        cached_input_tokens=int(cached or 0),
    )


def openai_response(completion: Any, model: ModelConfig, provider: str) -> ChatResponse:
    """A ChatResponse from an OpenAI-shaped completion (latency filled in by the caller)."""
    choice = completion.choices[0]
    message = choice.message
    calls = [
        ChatToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments or "")
        for call in message.tool_calls or []
        if getattr(call, "function", None) is not None
    ]
    return ChatResponse(
        message=Message(role="assistant", content=message.content, tool_calls=calls),
        usage=openai_usage(completion.usage),
        model=model.name,
        provider=provider,
        provider_model=str(completion.model or model.model),
        finish_reason=choice.finish_reason,
    )


def openai_chunks(chunk: Any) -> list[ChatChunk]:
    """The content and tool-call pieces of one OpenAI-shaped stream chunk."""
    out: list[ChatChunk] = []
    for choice in chunk.choices or []:
        delta = choice.delta
        if delta is None:
            continue
        if delta.content:
            out.append(ChatChunk(content=delta.content))
        for call in delta.tool_calls or []:
            function = call.function
            out.append(
                ChatChunk(
                    tool_call_index=call.index,
                    tool_call_id=call.id,
                    tool_name=function.name if function else None,
                    arguments=function.arguments if function else None,
                )
            )
    return out


def openai_error(
    exc: Exception, model: ModelConfig, provider: str, secret: str | None
) -> ProviderError:
    """The ProviderError for an ``openai`` SDK exception (litellm raises the same kinds)."""
    detail = redact(str(exc), secret)
    if isinstance(exc, openai.APITimeoutError):
        return ProviderError(
            f"model {model.name!r} timed out in the {provider} client: {detail}; raise "
            f"`timeout_s` on the model, or let a fallback answer",
            kind="timeout",
            retryable=True,
        )
    if isinstance(exc, openai.APIConnectionError):
        return connection_error(model, provider, detail)
    if isinstance(exc, openai.APIStatusError):
        return status_error(model, provider, exc.status_code, detail, secret)
    return malformed_error(model, provider, f"{type(exc).__name__}: {detail}")


class OpenAIProvider:
    """Calls one OpenAI-compatible endpoint with one key over aiohttp (:class:`OpenAIHttp`);
    the gateway does the retries."""

    name = "openai"

    def __init__(self, *, base_url: str | None, key: str) -> None:
        self._key = key
        self._client = OpenAIHttp(base_url=base_url, key=key)

    def _error(self, exc: Exception, model: ModelConfig) -> ProviderError:
        return upstream_error(exc, model, self.name, self._key)

    async def chat(
        self,
        request: ChatRequest,
        model: ModelConfig,
        *,
        first_byte_timeout_s: float,
        timeout_s: float,
    ) -> ChatResponse:
        deadline = Deadline(model, self.name, first_byte_timeout_s, timeout_s)
        params = openai_params(request, model)
        try:
            completion = await deadline.run(
                self._client.post("chat/completions", params), first_byte=True
            )
            response = response_from(completion, model, self.name)
        except UPSTREAM_ERRORS as exc:
            raise_from(self._error(exc, model), exc, self._key)
        response.latency_ms = deadline.elapsed_ms()
        return response

    async def stream(
        self,
        request: ChatRequest,
        model: ModelConfig,
        *,
        first_byte_timeout_s: float,
        timeout_s: float,
    ) -> AsyncIterator[ChatChunk]:
        deadline = Deadline(model, self.name, first_byte_timeout_s, timeout_s)
        params = openai_params(request, model)
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        finish: str | None = None
        usage: Usage | None = None
        events = self._client.events("chat/completions", params)
        try:
            while True:
                try:
                    event = await deadline.run(anext(events), first_byte=True)
                except StopAsyncIteration:
                    break
                except UPSTREAM_ERRORS as exc:
                    raise_from(self._error(exc, model), exc, self._key)
                try:
                    for choice in event.get("choices") or []:
                        finish = choice.get("finish_reason") or finish
                    if event.get("usage") is not None:
                        usage = usage_from(event["usage"])
                    pieces = chunks_from(event)
                except SHAPE_ERRORS as exc:
                    raise_from(self._error(exc, model), exc, self._key)
                for piece in pieces:
                    yield piece
        finally:
            await events.aclose()
        yield ChatChunk(finish_reason=finish, usage=usage)

    async def embed(
        self, request: EmbeddingRequest, model: ModelConfig, *, timeout_s: float
    ) -> EmbeddingResponse:
        deadline = Deadline(model, self.name, timeout_s, timeout_s)
        body = {"model": model.model, "input": request.input, "encoding_format": "float"}
        try:
            result = await deadline.run(self._client.post("embeddings", body))
            data = sorted(result["data"], key=lambda item: item["index"])
            vectors = [[float(v) for v in item["embedding"]] for item in data]
            usage = result.get("usage")
            tokens = int(usage.get("prompt_tokens") or 0) if usage else 0
        except UPSTREAM_ERRORS as exc:
            raise_from(self._error(exc, model), exc, self._key)
        return embedding_response(model, self.name, request, vectors, tokens, deadline.elapsed_ms())

    async def aclose(self) -> None:
        await self._client.aclose()
