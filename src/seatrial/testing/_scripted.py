"""A model provider that answers from a script in the process: no server, no socket, no SDK.

::

    model = ScriptedModel(["hello", FakeReply(tool_calls=[FakeToolCall("lookup", {"id": 1})])])
    gateway = Gateway(config, providers={"main": model})  # or `provider: scripted` in config
    ...
    assert model.requests[0].messages[-1].content == "hi"

The script takes the same replies as :class:`FakeOpenAI`: one reply (served to every
request), a sequence (served in order; a request past the end fails as an HTTP 500 would) or
a function, here of the :class:`~seatrial.gateway.ChatRequest`; None echoes the last user
message. A :class:`FakeReply` status, delay, hang or malformed body becomes the
``ProviderError`` the real providers raise for it, so fallbacks, retries and timeouts behave
as against a server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence

from seatrial.errors import ProviderError
from seatrial.gateway import (
    ChatChunk,
    ChatRequest,
    ChatResponse,
    ChatToolCall,
    EmbeddingRequest,
    EmbeddingResponse,
    Message,
    ModelConfig,
    Usage,
    unparsable_output,
)
from seatrial.testing._agent_server import Hang, HttpReply
from seatrial.testing._fake_wire import FakeReply, _pieces, _text_of, fake_embedding

Reply = str | FakeReply | HttpReply | Hang
Script = Reply | Sequence[Reply] | Callable[[ChatRequest], Reply] | None


class ScriptedModel:
    """A provider for the gateway (``seatrial.gateway.Provider``) that plays a script.

    Hand it to ``Gateway(config, providers={"model-name": scripted})``, or name it from the
    configuration: ``provider: scripted`` with ``base_url: python:module:NAME``. It holds no
    connection, so one instance may serve several gateways; :meth:`aclose` does nothing.
    """

    name = "scripted"

    def __init__(self, script: Script = None, *, embedding_dims: int = 8) -> None:
        self._script = script
        self._dims = embedding_dims
        self._served = 0
        self.requests: list[ChatRequest] = []
        """Every chat request received, in order."""
        self.embedded: list[EmbeddingRequest] = []
        """Every embeddings request received, in order."""

    @property
    def script(self) -> Script:
        """The script; setting it starts a sequence from its first reply again."""
        return self._script

    @script.setter
    def script(self, script: Script) -> None:
        self._script = script
        self._served = 0

    async def chat(
        self,
        request: ChatRequest,
        model: ModelConfig,
        *,
        first_byte_timeout_s: float,
        timeout_s: float,
    ) -> ChatResponse:
        """The next scripted answer, whole."""
        started = time.monotonic()
        reply, n = await self._next(request, model, min(first_byte_timeout_s, timeout_s))
        response = _response(request, model, reply, n)
        return response.model_copy(update={"latency_ms": (time.monotonic() - started) * 1000})

    async def stream(
        self,
        request: ChatRequest,
        model: ModelConfig,
        *,
        first_byte_timeout_s: float,
        timeout_s: float,
    ) -> AsyncIterator[ChatChunk]:
        """The next scripted answer, in chunks; usage and finish reason come last."""
        started = time.monotonic()
        reply, n = await self._next(request, model, min(first_byte_timeout_s, timeout_s))
        if reply.malformed:
            yield ChatChunk(content="")  # the answer starts, then cannot be read
            raise _malformed(model)
        whole = _response(request, model, reply, n)
        text = whole.message.content if isinstance(whole.message.content, str) else ""
        chunks = [ChatChunk(content=piece) for piece in _pieces(text)]
        for index, call in enumerate(whole.message.tool_calls):
            half = len(call.arguments) // 2
            chunks.append(
                ChatChunk(
                    tool_call_index=index,
                    tool_call_id=call.id,
                    tool_name=call.name,
                    arguments=call.arguments[:half],
                )
            )
            chunks.append(ChatChunk(tool_call_index=index, arguments=call.arguments[half:]))
        chunks.append(ChatChunk(finish_reason=whole.finish_reason, usage=whole.usage))
        for number, chunk in enumerate(chunks):
            if number and reply.chunk_delay_s:
                left = timeout_s - (time.monotonic() - started)
                await _wait(
                    reply.chunk_delay_s, left, model, f"did not finish within {timeout_s:g} s"
                )
            yield chunk

    async def embed(
        self, request: EmbeddingRequest, model: ModelConfig, *, timeout_s: float
    ) -> EmbeddingResponse:
        """One :func:`fake_embedding` vector per text (equal texts embed equally)."""
        self.embedded.append(request)
        return EmbeddingResponse(
            vectors=[fake_embedding(text, self._dims) for text in request.input],
            model=model.name,
            usage=Usage(input_tokens=max(1, sum(len(t.split()) for t in request.input))),
        )

    async def aclose(self) -> None:
        """Nothing to release: no connection was opened."""

    async def _next(
        self, request: ChatRequest, model: ModelConfig, first_byte_s: float
    ) -> tuple[FakeReply, int]:
        """The reply for this request, after its delay; scripted failures raise here."""
        self.requests.append(request)
        self._served += 1
        n = self._served
        reply = self._pick(request, n)
        late = f"sent no first byte within {first_byte_s:g} s"
        if isinstance(reply, Hang):
            await _wait(reply.seconds, first_byte_s, model, late)
            raise ProviderError(
                f"{_where(model)} hung up without answering (scripted Hang)",
                kind="connection",
                retryable=True,
            )
        if isinstance(reply, HttpReply):
            if reply.status == 200:
                raise _malformed(model)
            body = reply.body.decode() if isinstance(reply.body, bytes) else reply.body
            raise _status_error(model, reply.status, body)
        if isinstance(reply, str):
            reply = FakeReply(text=reply)
        if reply.delay_s:
            await _wait(reply.delay_s, first_byte_s, model, late)
        if reply.status != 200:
            detail = reply.error or f"scripted to answer HTTP {reply.status}"
            raise _status_error(model, reply.status, detail)
        if reply.malformed and not request.stream:
            raise _malformed(model)
        return reply, n

    def _pick(self, request: ChatRequest, n: int) -> Reply:
        script = self._script
        if script is None:
            users = [m for m in request.messages if m.role == "user"]
            return f"echo: {_text_of(users[-1].content)}" if users else "echo:"
        if callable(script):
            return script(request)
        if isinstance(script, str | FakeReply | HttpReply | Hang):
            return script
        if n <= len(script):
            return script[n - 1]
        return HttpReply(
            500, f"ScriptedModel has no reply scripted for request {n} (it has {len(script)})"
        )


def _response(request: ChatRequest, model: ModelConfig, reply: FakeReply, n: int) -> ChatResponse:
    calls = [
        ChatToolCall(id=t.id or f"call_{n}_{i}", name=t.name, arguments=t.arguments_text())
        for i, t in enumerate(reply.tool_calls)
    ]
    words = sum(len(_text_of(m.content).split()) for m in request.messages)
    output = len((reply.text or "").split()) + sum(len(c.arguments.split()) for c in calls)
    usage = Usage(
        input_tokens=reply.input_tokens if reply.input_tokens is not None else max(1, words),
        output_tokens=reply.output_tokens if reply.output_tokens is not None else output,
        cached_input_tokens=reply.cached_input_tokens,
    )
    return ChatResponse(
        message=Message(role="assistant", content=reply.text, tool_calls=calls),
        usage=usage,
        model=model.name,
        provider="scripted",
        provider_model=reply.model or model.model,
        finish_reason=reply.finish_reason or ("tool_calls" if calls else "stop"),
    )


async def _wait(seconds: float | None, limit_s: float, model: ModelConfig, late: str) -> None:
    """Sleep ``seconds`` (None: for ever), failing as a timeout past ``limit_s``."""
    if seconds is not None and seconds <= limit_s:
        await asyncio.sleep(seconds)
        return
    await asyncio.sleep(max(limit_s, 0.0))
    raise ProviderError(f"{_where(model)} {late}", kind="timeout", retryable=True)


def _where(model: ModelConfig) -> str:
    return f"model {model.name!r} (scripted {model.model})"


def _status_error(model: ModelConfig, status: int, detail: str) -> ProviderError:
    # The kinds the real providers give each status, so fallback treats them alike.
    if status == 429:
        kind, retryable = "rate_limited", True
    elif status == 408:
        kind, retryable = "timeout", True
    elif unparsable_output(status, detail):
        kind, retryable = "unparsable_output", False
    elif status >= 500:
        kind, retryable = "server_error", True
    else:
        kind, retryable = "bad_request", False
    return ProviderError(
        f"{_where(model)} failed (HTTP {status}): {detail}",
        kind=kind,
        status=status,
        retryable=retryable,
    )


def _malformed(model: ModelConfig) -> ProviderError:
    return ProviderError(
        f"{_where(model)} answered something that is not a valid response (scripted malformed)",
        kind="malformed",
    )
