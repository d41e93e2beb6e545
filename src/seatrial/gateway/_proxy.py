"""The OpenAI-compatible proxy: agents under test point ``OPENAI_BASE_URL`` at it.

Routes (each also under ``/a/{token}/``, the per-attempt base URL the runner hands out)::

    POST /v1/chat/completions     JSON, or SSE when ``stream: true``
    POST /v1/embeddings
    GET  /v1/models               the configured model names
    GET  /metrics                 the gateway's counters, Prometheus's text format (no prefix)

Errors use OpenAI's ``{"error": {...}}`` body with ``x-should-retry: false``: the gateway has
already retried and fallen back, so a client SDK retrying again would only multiply calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from seatrial.errors import (
    BudgetExceeded,
    CassetteMismatch,
    FallbackExhausted,
    GatewayError,
    ProviderError,
    RateLimitTimeout,
)
from seatrial.gateway._attempts import (
    ATTEMPT_ENDED,
    ATTEMPT_HEADER,
    AttemptBinding,
    AttemptRegistry,
)
from seatrial.gateway._config import GatewayConfig
from seatrial.gateway._gateway import Gateway
from seatrial.gateway._metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from seatrial.gateway._types import CallAttempt, ChatChunk, ChatRequest, Usage
from seatrial.gateway._wire import (
    WireError,
    chat_request_from_openai,
    chat_response_to_openai,
    chunk_to_openai,
    completion_id,
    embedding_request_from_openai,
    embedding_response_to_openai,
    usage_to_openai,
)

T = TypeVar("T")

PURPOSE_HEADER = "x-seatrial-purpose"
"""Optional: ``agent`` (default), ``judge``, ``generation`` or ``simulator``."""

_KIND_STATUS = {
    "timeout": 504,
    "rate_limited": 429,
    "rate_limit_wait": 429,
    "server_error": 502,
    "connection": 502,
    "malformed": 502,
    "unparsable_output": 502,
    "bad_request": 400,
}


class UnknownAttempt(GatewayError):
    """A per-attempt URL whose attempt is not running (finished, or never registered)."""


class AttemptEnded(GatewayError):
    """The call's attempt ended (its deadline passed) before the model answered."""


def resolve_model(config: GatewayConfig, sent: str | None) -> str | None:
    """The configured model a client's ``model`` means.

    A configured name is taken as is; an upstream id (``gpt-4o-mini``) maps to the configured
    model pinned to it; anything else is left to the router (an agent's hard-coded model name
    should not stop it from being tested through the gateway).
    """
    if not sent:
        return None
    if sent in config.models:
        return sent
    for model in config.models.values():
        if model.model == sent:
            return model.name
    return None


def error_status(exc: GatewayError) -> tuple[int, str]:
    """HTTP status and OpenAI error type for a gateway error."""
    if isinstance(exc, WireError):
        return 400, "invalid_request_error"
    if isinstance(exc, UnknownAttempt):
        return 404, "not_found_error"
    if isinstance(exc, AttemptEnded):
        return 504, "attempt_ended"
    if isinstance(exc, BudgetExceeded):
        return 402, "budget_exceeded"
    if isinstance(exc, RateLimitTimeout):
        return 429, "rate_limit_exceeded"
    if isinstance(exc, CassetteMismatch):
        return 409, "cassette_mismatch"
    if isinstance(exc, ProviderError):
        return exc.status or _KIND_STATUS.get(exc.kind, 502), exc.kind
    if isinstance(exc, FallbackExhausted):
        last = exc.attempts[-1] if exc.attempts else None
        outcome = last.outcome if isinstance(last, CallAttempt) else "server_error"
        return _KIND_STATUS.get(outcome, 502), outcome
    return 400, "gateway_error"


def error_response(exc: GatewayError) -> JSONResponse:
    """OpenAI's error body; the message is the gateway's (keys never appear in it)."""
    status, kind = error_status(exc)
    body = {"error": {"message": str(exc), "type": kind, "code": kind, "param": None}}
    return JSONResponse(body, status_code=status, headers={"x-should-retry": "false"})


class ProxyApp:
    """The Starlette application around one :class:`Gateway`."""

    def __init__(self, gateway: Gateway, registry: AttemptRegistry | None = None) -> None:
        self.gateway = gateway
        self.registry = registry or AttemptRegistry()
        routes = []
        for prefix in ("", "/a/{token}"):
            routes += [
                Route(f"{prefix}/v1/chat/completions", self.chat, methods=["POST"]),
                Route(f"{prefix}/v1/embeddings", self.embeddings, methods=["POST"]),
                Route(f"{prefix}/v1/models", self.models, methods=["GET"]),
            ]
        routes.append(Route("/metrics", self.metrics, methods=["GET"]))
        self.app = Starlette(routes=routes)

    def _binding(self, request: Request) -> AttemptBinding | None:
        token = request.path_params.get("token") or request.headers.get(ATTEMPT_HEADER)
        if not token:
            return None
        binding = self.registry.get(token)
        if binding is None:
            raise UnknownAttempt(
                f"no running attempt has token {token!r}: use the base URL the runner handed "
                "to this attempt, while the attempt runs"
            )
        return binding

    @staticmethod
    async def _body(request: Request) -> Any:
        try:
            return json.loads(await request.body())
        except ValueError as exc:
            raise WireError(f"the request body is not JSON: {exc}") from exc

    def _who(self, request: Request, binding: AttemptBinding | None) -> dict[str, Any]:
        who: dict[str, Any] = {}
        purpose = request.headers.get(PURPOSE_HEADER)
        if purpose in ("agent", "judge", "generation", "simulator"):
            who["purpose"] = purpose
        if binding is not None:
            who.update(run_id=binding.run_id, case_id=binding.case_id, attempt=binding.attempt)
        return who

    async def chat(self, request: Request) -> Response:
        """``POST /v1/chat/completions``."""
        try:
            binding = self._binding(request)
            body = await self._body(request)
            chat_request = chat_request_from_openai(body, **self._who(request, binding))
            chat_request = chat_request.model_copy(
                update={"model": resolve_model(self.gateway.config, chat_request.model)}
            )
            if chat_request.stream:
                options = body.get("stream_options") or {}
                return await self._stream(
                    chat_request, binding, bool(options.get("include_usage")), body.get("model")
                )
            with _active(binding):
                response = await self._call(binding, chat_request, self.gateway.chat(chat_request))
        except GatewayError as exc:
            return error_response(exc)
        return JSONResponse(chat_response_to_openai(response, body.get("model")))

    async def _call(
        self, binding: AttemptBinding | None, request: ChatRequest, work: Awaitable[T]
    ) -> T:
        """Await ``work`` (a call, or a stream's first chunk); for an attempt, as a task its
        attempt's end cancels (AttemptEnded).

        An agent past its deadline leaves its call running here; the answer that comes later
        belongs to no attempt, so it must neither reach the cassette nor end in a traceback
        when the server stops.
        """
        if binding is None:
            return await work
        task = asyncio.ensure_future(self._until_ended(request, work))
        binding.calls.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and (current is None or not current.cancelling()):
                raise AttemptEnded(ATTEMPT_ENDED) from None
            raise
        finally:
            binding.calls.discard(task)

    async def _until_ended(self, request: ChatRequest, work: Awaitable[T]) -> T:
        started = time.monotonic()
        try:
            return await work
        except asyncio.CancelledError as exc:
            if exc.args == (ATTEMPT_ENDED,):
                self.gateway.cut_off(request, time.monotonic() - started)
            raise

    async def _stream(
        self,
        chat_request: Any,
        binding: AttemptBinding | None,
        include_usage: bool,
        model: Any,
    ) -> Response:
        chunks = self.gateway.stream(chat_request)
        # Pull the first chunk here: a call that fails before answering is an HTTP error the
        # client's SDK understands, not a broken event stream.
        with _active(binding):
            try:
                first: ChatChunk | None = await self._call(binding, chat_request, anext(chunks))
            except StopAsyncIteration:
                first = None
        return StreamingResponse(
            _events(chunks, first, include_usage, str(model or "")),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )

    async def embeddings(self, request: Request) -> Response:
        """``POST /v1/embeddings``."""
        try:
            binding = self._binding(request)
            body = await self._body(request)
            who = self._who(request, binding)
            embed_request = embedding_request_from_openai(
                body, purpose=who.get("purpose", "agent"), run_id=who.get("run_id")
            )
            with _active(binding):
                response = await self.gateway.embed(embed_request)
        except GatewayError as exc:
            return error_response(exc)
        return JSONResponse(embedding_response_to_openai(response))

    async def models(self, request: Request) -> Response:
        """``GET /v1/models``: the configured model names."""
        try:
            self._binding(request)
        except GatewayError as exc:
            return error_response(exc)
        created = int(time.time())
        data = [
            {"id": name, "object": "model", "created": created, "owned_by": model.provider}
            for name, model in self.gateway.config.models.items()
        ]
        return JSONResponse({"object": "list", "data": data})

    async def metrics(self, request: Request) -> Response:
        """``GET /metrics``: the gateway's counters in Prometheus's text format."""
        return Response(self.gateway.metrics.exposition(), media_type=METRICS_CONTENT_TYPE)


@contextlib.contextmanager
def _active(binding: AttemptBinding | None) -> Iterator[None]:
    if binding is None:
        yield
        return
    with binding.recorder.activate():
        yield


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


async def _events(
    chunks: AsyncIterator[ChatChunk], first: ChatChunk | None, include_usage: bool, model: str
) -> AsyncIterator[bytes]:
    stream_id, created = completion_id(), int(time.time())
    usage: Usage | None = None
    try:
        pending = [first] if first is not None else []
        while True:
            if pending:
                chunk = pending.pop()
            else:
                try:
                    chunk = await anext(chunks)
                except StopAsyncIteration:
                    break
            usage = chunk.usage or usage
            plain = chunk.model_copy(update={"usage": None}) if chunk.usage else chunk
            yield _sse(chunk_to_openai(plain, id=stream_id, model=model, created=created))
        if include_usage and usage is not None:
            yield _sse(
                {
                    "id": stream_id,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": usage_to_openai(usage),
                }
            )
        yield b"data: [DONE]\n\n"
    except GatewayError as exc:
        # Headers are sent: the failure travels as an error event, which OpenAI's SDKs raise.
        status, kind = error_status(exc)
        yield _sse({"error": {"message": str(exc), "type": kind, "code": status}})
    finally:
        closer = getattr(chunks, "aclose", None)
        if closer is not None:
            await closer()
