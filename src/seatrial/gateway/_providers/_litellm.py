"""The long tail of providers through ``litellm`` (the ``litellm`` extra, pinned with hashes).

litellm answers in OpenAI's shape and raises subclasses of the ``openai`` SDK's errors, so
the mapping is the OpenAI provider's. The model id is litellm's (``bedrock/...``,
``gemini/...``, ``openai/...`` for any OpenAI-compatible ``base_url``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import openai

from seatrial.errors import GatewayError, ProviderError
from seatrial.gateway._config import ModelConfig
from seatrial.gateway._providers._base import (
    NO_KEY,
    Deadline,
    embedding_response,
    raise_from,
)
from seatrial.gateway._providers._openai import (
    openai_chunks,
    openai_error,
    openai_params,
    openai_response,
    openai_usage,
)
from seatrial.gateway._providers._openai_http import SHAPE_ERRORS
from seatrial.gateway._types import (
    ChatChunk,
    ChatRequest,
    ChatResponse,
    EmbeddingRequest,
    EmbeddingResponse,
    Usage,
)

INSTALL = (
    'the litellm provider needs the litellm extra: pip install "seatrial[litellm]", or pinned '
    "with hashes: pip install --require-hashes -r requirements/litellm.txt"
)


def load_litellm() -> Any:
    """Import litellm, or say how to install it."""
    # Seatrial prices calls from its own table; without this litellm fetches its price map
    # from the network on import (and waits on retries where there is none).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as exc:
        raise GatewayError(INSTALL) from exc
    litellm.telemetry = False
    return litellm


class LiteLLMProvider:
    """Calls any provider litellm knows; the gateway does the retries."""

    name = "litellm"

    def __init__(self, *, base_url: str | None, key: str) -> None:
        self._litellm = load_litellm()
        self._base_url = base_url
        self._key = key

    def _auth(self) -> dict[str, Any]:
        auth: dict[str, Any] = {"num_retries": 0}
        if self._base_url is not None:
            auth["api_base"] = self._base_url
        if self._key != NO_KEY or self._base_url is not None:
            auth["api_key"] = self._key
        return auth

    def _error(self, exc: Exception, model: ModelConfig) -> ProviderError:
        return openai_error(exc, model, self.name, self._key)

    async def chat(
        self,
        request: ChatRequest,
        model: ModelConfig,
        *,
        first_byte_timeout_s: float,
        timeout_s: float,
    ) -> ChatResponse:
        deadline = Deadline(model, self.name, first_byte_timeout_s, timeout_s)
        params = {**openai_params(request, model), **self._auth(), "timeout": timeout_s}
        try:
            result = await deadline.run(self._litellm.acompletion(**params), first_byte=True)
            response = openai_response(result, model, self.name)
        except (openai.OpenAIError, *SHAPE_ERRORS) as exc:
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
        params = {**openai_params(request, model), **self._auth(), "timeout": timeout_s}
        params.update(stream=True, stream_options={"include_usage": True})
        finish: str | None = None
        usage: Usage | None = None
        try:
            stream = await deadline.run(self._litellm.acompletion(**params))
            iterator = aiter(stream)
            while True:
                try:
                    chunk = await deadline.run(anext(iterator), first_byte=True)
                except StopAsyncIteration:
                    break
                for choice in chunk.choices or []:
                    finish = choice.finish_reason or finish
                if getattr(chunk, "usage", None) is not None:
                    usage = openai_usage(chunk.usage)
                for piece in openai_chunks(chunk):
                    yield piece
        except (openai.OpenAIError, *SHAPE_ERRORS) as exc:
            raise_from(self._error(exc, model), exc, self._key)
        yield ChatChunk(finish_reason=finish, usage=usage)

    async def embed(
        self, request: EmbeddingRequest, model: ModelConfig, *, timeout_s: float
    ) -> EmbeddingResponse:
        deadline = Deadline(model, self.name, timeout_s, timeout_s)
        params = {"model": model.model, "input": request.input, **self._auth()}
        try:
            result = await deadline.run(self._litellm.aembedding(**params, timeout=timeout_s))
            items = [_as_mapping(item) for item in result.data]
            items.sort(key=lambda item: int(item.get("index", 0)))
            vectors = [[float(v) for v in item["embedding"]] for item in items]
            tokens = int(getattr(result.usage, "prompt_tokens", 0) or 0) if result.usage else 0
        except (openai.OpenAIError, *SHAPE_ERRORS) as exc:
            raise_from(self._error(exc, model), exc, self._key)
        return embedding_response(model, self.name, request, vectors, tokens, deadline.elapsed_ms())

    async def aclose(self) -> None:
        # litellm keeps module-wide HTTP clients bound to the loop that opened them: close
        # them, and forget them so a later loop opens its own.
        await self._litellm.close_litellm_async_clients()
        self._litellm.in_memory_llm_clients_cache.flush_cache()


def _as_mapping(item: Any) -> Mapping[str, Any]:
    if isinstance(item, Mapping):
        return item
    return {"index": getattr(item, "index", 0), "embedding": item.embedding}
