"""OpenAI's chat-completions and embeddings JSON <-> the gateway's types.

The proxy speaks OpenAI's wire format to the agent under test; everything inside the gateway
speaks :mod:`seatrial.gateway._types`. Unknown request fields are ignored (as OpenAI-compatible
servers do); fields the gateway cannot honour are not silently invented.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import ValidationError

from seatrial.errors import GatewayError
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
from seatrial.trace import new_id

_CHAT_FIELDS = ("tools", "tool_choice", "temperature", "seed", "response_format")


class WireError(GatewayError):
    """A request body the proxy cannot read (answered as HTTP 400)."""


def _message(raw: Any, index: int) -> Message:
    if not isinstance(raw, dict):
        raise WireError(f"messages[{index}] is not an object; send {{'role': ..., 'content': ...}}")
    calls = []
    for call in raw.get("tool_calls") or []:
        function = call.get("function") or {}
        calls.append(
            ChatToolCall(
                id=str(call.get("id") or ""),
                name=str(function.get("name") or ""),
                arguments=str(function.get("arguments") or ""),
            )
        )
    try:
        return Message.model_validate(
            {
                "role": raw.get("role"),
                "content": raw.get("content"),
                "tool_calls": calls,
                "tool_call_id": raw.get("tool_call_id"),
                "name": raw.get("name"),
            }
        )
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise WireError(f"messages[{index}].{where}: {first['msg']}") from exc


def chat_request_from_openai(body: Any, **who: Any) -> ChatRequest:
    """Read an OpenAI ``/v1/chat/completions`` body.

    ``who`` fills the gateway's own fields (``run_id``, ``case_id``, ``attempt``, ``purpose``);
    the model name is taken as sent (the proxy maps it to a configured model).
    """
    if not isinstance(body, dict):
        raise WireError("the request body is not a JSON object; send OpenAI's chat format")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise WireError("`messages` is missing or empty; send at least one message")
    fields: dict[str, Any] = {k: body[k] for k in _CHAT_FIELDS if body.get(k) is not None}
    # max_completion_tokens is the newer name of the same limit.
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if limit is not None:
        fields["max_tokens"] = limit
    try:
        return ChatRequest(
            model=body.get("model") or None,
            messages=[_message(m, i) for i, m in enumerate(messages)],
            stream=bool(body.get("stream")),
            **fields,
            **who,
        )
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise WireError(f"`{where}`: {first['msg']}") from exc


def _tool_calls_to_openai(calls: list[ChatToolCall]) -> list[dict[str, Any]]:
    return [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        for call in calls
    ]


def message_to_openai(message: Message) -> dict[str, Any]:
    """A message as OpenAI writes it."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = _tool_calls_to_openai(message.tool_calls)
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def usage_to_openai(usage: Usage) -> dict[str, Any]:
    """OpenAI's ``usage`` object, cached prompt tokens included."""
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens},
    }


def completion_id() -> str:
    """A fresh ``chatcmpl-...`` id."""
    return f"chatcmpl-{new_id(96)}"


def chat_response_to_openai(response: ChatResponse, request_model: str | None) -> dict[str, Any]:
    """A ``chat.completion`` object; ``model`` echoes what answered upstream."""
    return {
        "id": completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": response.provider_model or response.model or request_model or "",
        "choices": [
            {
                "index": 0,
                "message": message_to_openai(response.message),
                "finish_reason": response.finish_reason or "stop",
                "logprobs": None,
            }
        ],
        "usage": usage_to_openai(response.usage),
    }


def chunk_to_openai(chunk: ChatChunk, *, id: str, model: str, created: int) -> dict[str, Any]:
    """A ``chat.completion.chunk`` object (usage on the last one, with no choice delta)."""
    delta: dict[str, Any] = {}
    if chunk.content is not None:
        delta["content"] = chunk.content
    if chunk.tool_call_index is not None:
        call: dict[str, Any] = {"index": chunk.tool_call_index}
        if chunk.tool_call_id is not None:
            call["id"] = chunk.tool_call_id
            call["type"] = "function"
        function: dict[str, Any] = {}
        if chunk.tool_name is not None:
            function["name"] = chunk.tool_name
        if chunk.arguments is not None:
            function["arguments"] = chunk.arguments
        call["function"] = function
        delta["tool_calls"] = [call]
    out: dict[str, Any] = {
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": chunk.finish_reason}],
    }
    if chunk.usage is not None:
        out["usage"] = usage_to_openai(chunk.usage)
    return out


def response_to_chunks(response: ChatResponse) -> list[ChatChunk]:
    """A whole answer as stream chunks (cache hits and replays streamed to a client)."""
    content = response.message.content
    if isinstance(content, list):  # content parts: their text, in order
        content = "".join(str(part.get("text", "")) for part in content)
    chunks = [ChatChunk(content=content)] if content else []
    for index, call in enumerate(response.message.tool_calls):
        chunks.append(
            ChatChunk(
                tool_call_index=index,
                tool_call_id=call.id,
                tool_name=call.name,
                arguments=call.arguments,
            )
        )
    chunks.append(ChatChunk(finish_reason=response.finish_reason or "stop", usage=response.usage))
    return chunks


def embedding_request_from_openai(body: Any, **who: Any) -> EmbeddingRequest:
    """Read an OpenAI ``/v1/embeddings`` body (``input`` a string or a list of strings)."""
    if not isinstance(body, dict):
        raise WireError("the request body is not a JSON object; send OpenAI's embeddings format")
    texts = body.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise WireError("`input` must be a string or a list of strings (token arrays are not read)")
    return EmbeddingRequest(model=body.get("model") or None, input=texts, **who)


def embedding_response_to_openai(response: EmbeddingResponse) -> dict[str, Any]:
    """OpenAI's embeddings list object."""
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": i, "embedding": vector}
            for i, vector in enumerate(response.vectors)
        ],
        "model": response.model,
        "usage": {
            "prompt_tokens": response.usage.input_tokens,
            "total_tokens": response.usage.input_tokens,
        },
    }
