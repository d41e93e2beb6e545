"""OpenAI's chat-completions and embeddings API over aiohttp: the gateway's upstream client.

The ``openai`` SDK spent about 3 ms of CPU on each call through the proxy (building the
request through its type transforms, httpx and httpcore, constructing its response models),
three quarters of the proxy's CPU per call (docs/performance.md, "The gateway's upstream
HTTP client"). The API is a JSON POST and, streamed, server-sent events; this client sends
the same request the SDK sent (``Authorization: Bearer``, the JSON body, ``OPENAI_BASE_URL``
and the organisation and project headers from the environment as the SDK reads them) and
reads the answer as plain JSON. Failures carry the SDK's wording (``Error code: 429 - {...}``)
so the gateway's messages read as before; aiohttp's failures are read by
:func:`seatrial._http_client.failure`, the HTTP agent adapter's reading too.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import aiohttp

from seatrial._http_client import failure, proxy_for, ssl_for
from seatrial._version import __version__
from seatrial.errors import ProviderError
from seatrial.gateway._config import ModelConfig
from seatrial.gateway._providers._base import (
    connection_error,
    malformed_error,
    redact,
    status_error,
)
from seatrial.gateway._types import ChatChunk, ChatResponse, ChatToolCall, Message, Usage

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Where the SDK sends a model without ``base_url`` (unless ``OPENAI_BASE_URL`` is set)."""

KEEPALIVE_EXPIRY_S = 5.0
"""How long an idle upstream connection stays open: the SDK's (httpx's) default, under the
5 s after which uvicorn-served upstreams close theirs."""

MAX_CONNECTIONS = 1000
"""Connections open at once to one upstream: the SDK's limit."""

SHAPE_ERRORS = (AttributeError, TypeError, IndexError, KeyError, ValueError)
"""What reading a 2xx body that lacks the fields the API promises raises."""


class UpstreamFailure(Exception):
    """A request that got no HTTP answer; ``cause`` is aiohttp's error."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause) or type(cause).__name__)
        self.cause = cause


class StatusFailure(Exception):
    """A non-2xx answer, with the SDK's message for it."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def base_url_of(configured: str | None) -> str:
    """The API's base URL as the SDK picks it: the model's, ``OPENAI_BASE_URL``, OpenAI's."""
    return (configured or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def status_message(status: int, text: str) -> str:
    """The SDK's message for an error answer: ``Error code: N - <body as parsed>``."""
    text = text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        return text or f"Error code: {status}"
    return f"Error code: {status} - {body}"


def upstream_error(
    exc: Exception, model: ModelConfig, provider: str, secret: str | None
) -> ProviderError:
    """The ProviderError for what this client raised, in the kinds the fallback reads."""
    if isinstance(exc, StatusFailure):
        return status_error(model, provider, exc.status, redact(str(exc), secret), secret)
    if isinstance(exc, UpstreamFailure):
        detail = redact(str(exc), secret)
        if failure(exc.cause) in ("connect_timeout", "read_timeout"):
            return ProviderError(
                f"model {model.name!r} timed out in the {provider} client: {detail}; raise "
                f"`timeout_s` on the model, or let a fallback answer",
                kind="timeout",
                retryable=True,
            )
        return connection_error(model, provider, detail)
    return malformed_error(model, provider, f"{type(exc).__name__}: {redact(str(exc), secret)}")


class OpenAIHttp:
    """One endpoint and key; one aiohttp session, opened in the loop of the first call."""

    def __init__(self, *, base_url: str | None, key: str) -> None:
        self.base_url = base_url_of(base_url)
        self._headers = {
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"seatrial/{__version__}",
        }
        for variable, header in (
            ("OPENAI_ORG_ID", "OpenAI-Organization"),
            ("OPENAI_PROJECT_ID", "OpenAI-Project"),
        ):
            value = os.environ.get(variable)
            if value:
                self._headers[header] = value
        self._proxy = proxy_for(self.base_url)
        self._ssl = ssl_for(self.base_url)
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_EXPIRY_S, ssl=self._ssl
            )
            # No timeout of aiohttp's own: the provider's Deadline times every call, and a
            # timeout raised in here would read as that deadline's.
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=None),
                trust_env=False,
            )
        return self._session

    async def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """POST ``body`` to ``path``; the answer's JSON (a dict, for a well-formed answer)."""
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        try:
            async with self._open().post(
                f"{self.base_url}/{path}", data=data, proxy=self._proxy
            ) as answer:
                raw = await answer.read()
                status = answer.status
        except aiohttp.ClientError as exc:
            raise UpstreamFailure(exc) from exc
        if status >= 400:
            raise StatusFailure(status, status_message(status, raw.decode("utf-8", "replace")))
        return json.loads(raw)

    async def events(self, path: str, body: Mapping[str, Any]) -> AsyncGenerator[Any, None]:
        """POST ``body`` to ``path`` and yield the JSON of each server-sent event until
        ``[DONE]``; an event that carries an ``error`` fails the stream (as in the SDK)."""
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        try:
            async with self._open().post(
                f"{self.base_url}/{path}", data=data, proxy=self._proxy
            ) as answer:
                if answer.status >= 400:
                    text = (await answer.read()).decode("utf-8", "replace")
                    raise StatusFailure(answer.status, status_message(answer.status, text))
                lines: list[str] = []
                async for raw_line in answer.content:
                    line = raw_line.decode("utf-8").rstrip("\r\n")
                    if line:
                        if line.startswith("data:"):
                            lines.append(line[5:].removeprefix(" "))
                        continue
                    if not lines:
                        continue
                    text, lines = "\n".join(lines), []
                    if text.startswith("[DONE]"):
                        return
                    event = json.loads(text)
                    if isinstance(event, Mapping) and event.get("error"):
                        raise ValueError(f"the stream sent an error: {event['error']}")
                    yield event
        except aiohttp.ClientError as exc:
            raise UpstreamFailure(exc) from exc

    async def aclose(self) -> None:
        """Close every connection."""
        if self._session is not None:
            await self._session.close()
            self._session = None


def usage_from(usage: Any) -> Usage:
    """Usage from the API's ``usage`` object (prompt tokens include cached ones)."""
    if not usage:
        return Usage()
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    return Usage(
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        cached_input_tokens=int(cached or 0),
    )


def response_from(completion: Any, model: ModelConfig, provider: str) -> ChatResponse:
    """A ChatResponse from a ``chat.completion`` object (latency filled in by the caller)."""
    choice = completion["choices"][0]
    message = choice["message"]
    calls = [
        ChatToolCall(
            id=call["id"],
            name=call["function"]["name"],
            arguments=call["function"].get("arguments") or "",
        )
        for call in message.get("tool_calls") or []
        if call.get("function") is not None
    ]
    return ChatResponse(
        message=Message(role="assistant", content=message.get("content"), tool_calls=calls),
        usage=usage_from(completion.get("usage")),
        model=model.name,
        provider=provider,
        provider_model=str(completion.get("model") or model.model),
        finish_reason=choice.get("finish_reason"),
    )


def chunks_from(event: Any) -> list[ChatChunk]:
    """The content and tool-call pieces of one ``chat.completion.chunk`` object."""
    out: list[ChatChunk] = []
    for choice in event.get("choices") or []:
        delta = choice.get("delta")
        if delta is None:
            continue
        if delta.get("content"):
            out.append(ChatChunk(content=delta["content"]))
        for call in delta.get("tool_calls") or []:
            function = call.get("function")
            out.append(
                ChatChunk(
                    tool_call_index=call["index"],
                    tool_call_id=call.get("id"),
                    tool_name=function.get("name") if function else None,
                    arguments=function.get("arguments") if function else None,
                )
            )
    return out
