"""What every provider shares: the Provider protocol, keys, deadlines and error translation.

Providers translate their SDK's exceptions into :class:`~seatrial.errors.ProviderError` with
one ``kind`` the gateway's fallback understands:

=============  =========  ==========================================================
kind           retryable  when
=============  =========  ==========================================================
timeout        yes        no first byte within ``first_byte_timeout_s``, or the whole
                          call past ``timeout_s`` (also HTTP 408)
rate_limited   yes        HTTP 429
server_error   yes        HTTP 5xx (Anthropic's 529 "overloaded" included)
unparsable_    no         HTTP 5xx whose body says the server could not parse the model's
output                    own output (llama.cpp: "does not match the expected ... format",
                          "Failed to parse input at pos N"): the model's answer, which a
                          retry would repeat (temperature 0, a seed) or hide
connection     yes        the server could not be reached (refused, reset, DNS)
bad_request    no         any other 4xx, a missing key, a request the API cannot take
malformed      no         a 2xx answer that is not the API's JSON
=============  =========  ==========================================================
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import AsyncIterator, Awaitable
from typing import NoReturn, Protocol, TypeVar

from seatrial.errors import ProviderError
from seatrial.gateway._config import ModelConfig
from seatrial.gateway._types import (
    ChatChunk,
    ChatRequest,
    ChatResponse,
    EmbeddingRequest,
    EmbeddingResponse,
    Usage,
)

T = TypeVar("T")

# Local OpenAI-compatible servers (vLLM, Ollama, llama.cpp) want no key, but the SDKs refuse
# to start without one; a custom base_url must never receive the user's real provider key.
NO_KEY = "seatrial-no-key"
_DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


class Provider(Protocol):
    """One way of calling models (an SDK), shared by every model configured with it."""

    name: str
    """``openai``, ``anthropic``, ``litellm`` or ``scripted``."""

    async def chat(
        self,
        request: ChatRequest,
        model: ModelConfig,
        *,
        first_byte_timeout_s: float,
        timeout_s: float,
    ) -> ChatResponse:
        """Answer a chat request; ``cost_usd`` is left 0 for the gateway to price."""
        ...

    def stream(
        self,
        request: ChatRequest,
        model: ModelConfig,
        *,
        first_byte_timeout_s: float,
        timeout_s: float,
    ) -> AsyncIterator[ChatChunk]:
        """Stream the answer; the last chunk carries ``finish_reason`` and ``usage``."""
        ...

    async def embed(
        self, request: EmbeddingRequest, model: ModelConfig, *, timeout_s: float
    ) -> EmbeddingResponse:
        """Embed each input text."""
        ...

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        ...


def api_key(model: ModelConfig) -> str:
    """The key for ``model``, read from the environment only.

    A model with a ``base_url`` and no ``api_key_env`` gets a placeholder, so a key meant
    for OpenAI or Anthropic is never sent to another server.
    """
    env = model.api_key_env
    if env is None and model.base_url is not None:
        return NO_KEY
    env = env or _DEFAULT_KEY_ENV.get(model.provider)
    if env is None:
        return NO_KEY  # litellm finds the key of each backend itself
    key = os.environ.get(env)
    if not key:
        raise ProviderError(
            f"model {model.name!r} needs an API key in the environment variable {env}, which "
            f"is not set; export it, or set `api_key_env` on the model to the variable that "
            f"holds the key",
            kind="bad_request",
        )
    return key


def redact(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` masked: servers sometimes echo a rejected key."""
    if secret and secret != NO_KEY and secret in text:
        return text.replace(secret, "***")
    return text


def raise_from(error: ProviderError, cause: BaseException, secret: str | None) -> NoReturn:
    """Raise ``error`` from ``cause``, unless the cause's text holds the key (then from None).

    A traceback prints its causes, and some servers echo a rejected key in their error body.
    """
    if secret and secret != NO_KEY and secret in str(cause):
        raise error from None
    raise error from cause


_UNPARSABLE_OUTPUT = re.compile(
    r"does not match the expected\b.*\bformat|failed to parse (input|tool call)"
    r"|failed to parse the model'?s? (output|response)",
    re.IGNORECASE | re.DOTALL,
)
"""What OpenAI-compatible servers say when their parser rejects what the model wrote
(llama.cpp's server: "The model produced output that does not match the expected peg-native
format", "Failed to parse input at pos 395: ...", "Failed to parse tool call arguments as
JSON")."""


def unparsable_output(status: int, detail: str) -> bool:
    """Whether an error answer says the server could not parse the model's own output.

    Such a 5xx is the model's answer, not the server's trouble: the same request gets it
    again (at temperature 0 or with a seed, exactly), so the gateway never retries it.
    """
    return status >= 500 and _UNPARSABLE_OUTPUT.search(detail) is not None


def _where(model: ModelConfig, provider: str) -> str:
    return f"model {model.name!r} ({provider} {model.model})"


def status_error(
    model: ModelConfig, provider: str, status: int, detail: str, secret: str | None
) -> ProviderError:
    """The ProviderError for an HTTP error status, saying what to do next."""
    detail = redact(detail, secret)[:500]
    where = _where(model, provider)
    if status == 429:
        return ProviderError(
            f"{where} is rate limited (HTTP 429): {detail}; the gateway retries with backoff; "
            f"lower `rpm`/`tpm` on the model to wait before sending instead",
            kind="rate_limited",
            status=status,
            retryable=True,
        )
    if status == 408:
        return ProviderError(
            f"{where} timed out on the server (HTTP 408): {detail}; the gateway retries it",
            kind="timeout",
            status=status,
            retryable=True,
        )
    if unparsable_output(status, detail):
        return ProviderError(
            f"{where} wrote output its server could not parse (HTTP {status}): {detail}; "
            "this is the model's answer (a malformed tool call, most often), so it is not "
            "retried: the same request would get it again",
            kind="unparsable_output",
            status=status,
        )
    if status >= 500:
        return ProviderError(
            f"{where} failed on the server (HTTP {status}): {detail}; the gateway retries it, "
            f"then falls back; add `fallbacks` to the model if it has none",
            kind="server_error",
            status=status,
            retryable=True,
        )
    return ProviderError(
        f"{where} refused the request (HTTP {status}): {detail}; check the model id, the key "
        f"in `api_key_env` and the request's parameters",
        kind="bad_request",
        status=status,
    )


def connection_error(model: ModelConfig, provider: str, detail: str) -> ProviderError:
    """The server could not be reached."""
    where = _where(model, provider)
    url = model.base_url or "the provider's default endpoint"
    return ProviderError(
        f"{where} could not be reached at {url}: {detail}; check that the server runs and "
        f"`base_url` is right",
        kind="connection",
        retryable=True,
    )


def malformed_error(model: ModelConfig, provider: str, detail: str) -> ProviderError:
    """A 2xx answer that is not what the API promises."""
    return ProviderError(
        f"{_where(model, provider)} answered something that is not a valid {provider} "
        f"response ({detail}); check that `base_url` points at a {provider}-compatible API",
        kind="malformed",
    )


def embedding_response(
    model: ModelConfig,
    provider: str,
    request: EmbeddingRequest,
    vectors: list[list[float]],
    input_tokens: int,
    latency_ms: float,
) -> EmbeddingResponse:
    """The response of an embeddings call: one vector per input text, else ``malformed``."""
    if len(vectors) != len(request.input):
        raise malformed_error(
            model, provider, f"{len(vectors)} vectors for {len(request.input)} texts"
        )
    return EmbeddingResponse(
        vectors=vectors,
        model=model.name,
        usage=Usage(input_tokens=input_tokens),
        latency_ms=latency_ms,
    )


class Deadline:
    """The two clocks of a call: to the first byte, and in all."""

    def __init__(self, model: ModelConfig, provider: str, first_byte_s: float, total_s: float):
        self._model = model
        self._provider = provider
        self._first_byte_s = first_byte_s
        self._total_s = total_s
        self._started = time.monotonic()
        self.first_byte_seen = False

    def elapsed_ms(self) -> float:
        """Milliseconds since the call started."""
        return (time.monotonic() - self._started) * 1000

    def _left(self) -> tuple[float, bool]:
        """Seconds left, and whether the first-byte clock is the one that runs out first."""
        total = self._total_s - (time.monotonic() - self._started)
        if self.first_byte_seen:
            return total, False
        first = self._first_byte_s - (time.monotonic() - self._started)
        return (first, True) if first < total else (total, False)

    async def run(self, awaitable: Awaitable[T], *, first_byte: bool = False) -> T:
        """Await within the deadline; ``first_byte`` marks the first byte as seen after."""
        left, first_clock = self._left()
        try:
            async with asyncio.timeout(max(left, 0.0)):
                result = await awaitable
        except TimeoutError as exc:
            raise self.error(first_clock) from exc
        if first_byte:
            self.first_byte_seen = True
        return result

    def error(self, first_clock: bool) -> ProviderError:
        """The timeout error for the clock that ran out."""
        where = _where(self._model, self._provider)
        if first_clock:
            what = f"sent no first byte within {self._first_byte_s:g} s"
            fix = "raise `first_byte_timeout_s` on the model, or let a fallback answer"
        else:
            what = f"did not finish within {self._total_s:g} s"
            fix = "raise `timeout_s` on the model, or ask for fewer tokens"
        return ProviderError(f"{where} {what}; {fix}", kind="timeout", retryable=True)
