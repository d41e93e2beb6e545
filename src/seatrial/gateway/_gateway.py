"""The gateway: one door for every model call, recorded, limited, priced, cached, replayable.

Order of one chat call: route -> budget check -> cassette replay (replay mode) -> cache ->
fault pick -> fallback chain (each try: rate limit, fault before, provider, fault after) ->
cost -> budget -> ledger row -> cache put -> cassette record -> the ``chat {model}`` span.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from seatrial.gateway._budget import Budget
from seatrial.gateway._cache import ResponseCache
from seatrial.gateway._cassette import Cassette
from seatrial.gateway._config import FaultSpec, GatewayConfig, ModelConfig
from seatrial.gateway._cost import cost_usd, model_call_row, price_for
from seatrial.gateway._embed import embed
from seatrial.gateway._export import SpanExporter
from seatrial.gateway._fallback import fallback_chain, with_fallback
from seatrial.gateway._faults import FaultInjector
from seatrial.gateway._limits import RateLimits, estimate_tokens
from seatrial.gateway._providers import close_providers, provider_for
from seatrial.gateway._routing import RouteDecision, Router
from seatrial.gateway._spans import (
    close_chat_span,
    fail_span,
    open_chat_span,
)
from seatrial.gateway._stream import StreamAccumulator
from seatrial.gateway._types import (
    ChatChunk,
    ChatRequest,
    ChatResponse,
    EmbeddingRequest,
    EmbeddingResponse,
    Usage,
)
from seatrial.gateway._wire import response_to_chunks
from seatrial.store import ModelCallRow, Store
from seatrial.trace import Span, TraceRecorder

log = logging.getLogger("seatrial.gateway")

_AFTER_FAULTS = frozenset({"empty", "malformed_tool_call"})
"""Faults that rewrite the answer: a stream with one is fetched whole, then re-chunked."""

_Stream = tuple[ChatChunk | None, AsyncIterator[ChatChunk]]


class Gateway:
    """Routes, limits, prices, caches, records and replays model calls.

    One gateway serves a run (or a ``seatrial gateway serve`` process). Spans land on the
    attempt's recorder: :meth:`TraceRecorder.current` in the calling task (the proxy activates
    the recorder of the attempt its URL names).
    """

    def __init__(
        self,
        config: GatewayConfig,
        *,
        store: Store | None = None,
        project_dir: Path | None = None,
        replay_run_id: str | None = None,
    ) -> None:
        """``replay_run_id``: in cassette replay mode, serve that run's recording to every
        run (re-running a stored run under a new run id)."""
        self.config = config
        self.store = store
        self.warnings: list[str] = []
        """Budget warnings given so far (also logged to ``seatrial.gateway``)."""
        root = project_dir or Path.cwd()
        self._router = Router(config)
        self._limits = RateLimits(config.models, config.redis_url, config.max_limit_wait_s)
        self._budget = Budget(config.budgets, store, warn=self._warn)
        cache_path = project_dir / ".seatrial" / "cache.db" if project_dir is not None else None
        self._cache = ResponseCache(config.cache, cache_path)
        self.cassette = (
            Cassette(config.cassette, root, source_run_id=replay_run_id)
            if config.cassette.mode != "off"
            else None
        )
        """The cassette in record or replay mode (None when off)."""
        self._faults = FaultInjector(config.faults, config.fault_seed) if config.faults else None
        self._exporter = (
            SpanExporter(config.tracing, seed=config.fault_seed)
            if config.tracing.otlp_endpoint
            else None
        )
        self._calls: dict[tuple[str | None, str | None, int | None], int] = {}

    # -- chat ------------------------------------------------------------------------------

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """One chat completion through the whole pipeline (see the module docstring)."""
        started = time.perf_counter()
        decision = self._router.route(request)
        recorder, span = self._open(request, decision)
        picked: list[FaultSpec] = []
        try:
            response, mode = await self._chat(request, decision, started, picked)
        except BaseException as exc:
            self._fail(recorder, span, exc, picked[0] if picked else None)
            raise
        self._close(recorder, span, response, mode)
        return response

    async def _chat(
        self,
        request: ChatRequest,
        decision: RouteDecision,
        started: float,
        picked: list[FaultSpec],
    ) -> tuple[ChatResponse, str | None]:
        """The call itself; a fault it picks goes into ``picked`` (so a failure is marked)."""
        self._budget.check(request.run_id)
        call_index = self._count(request)
        found, mode, key = await self._lookup(request, decision, started)
        if found is not None:
            return found, mode
        fault = self._pick_fault(request, decision.model, call_index)
        if fault is not None:
            picked.append(fault)
        return await self._fetch(request, decision, started, fault, key)

    async def _lookup(
        self, request: ChatRequest, decision: RouteDecision, started: float
    ) -> tuple[ChatResponse | None, str | None, str | None]:
        """A replayed or cached answer (with the cassette mode), and the cache key to fill."""
        replayed = self._replay(request)
        if replayed is not None:
            return replayed, "replay", None
        key = self._cache.key(request, decision.model) if self._cache.enabled_for(request) else None
        hit = self._cache.get(key) if key is not None else None
        if hit is None:
            return None, None, key
        response = hit.model_copy(
            update={
                "cached": True,
                "cost_usd": 0.0,
                "latency_ms": _ms(started),
                "route_rule": decision.rule,
                "fallback_used": False,
                "fault": None,
            }
        )
        await self._ledger(request, response)
        return response, self._record(request, response), key

    async def _fetch(
        self,
        request: ChatRequest,
        decision: RouteDecision,
        started: float,
        fault: FaultSpec | None,
        key: str | None,
    ) -> tuple[ChatResponse, str | None]:
        """Ask the models of the chain, then price, charge, cache and record the answer."""
        chain = fallback_chain(self.config, decision.model)
        tokens = estimate_tokens(request)
        waited: list[float] = []

        async def call(model: ModelConfig, first_byte_s: float, timeout_s: float) -> ChatResponse:
            waited.append(await self._limits.acquire(model.name, tokens))
            applies = self._applies(fault, model)
            if applies and fault is not None and self._faults is not None:
                await self._faults.before_call(fault)
            answer = await provider_for(model).chat(
                request, model, first_byte_timeout_s=first_byte_s, timeout_s=timeout_s
            )
            if applies and fault is not None and self._faults is not None:
                answer = self._faults.after_call(fault, answer, request)
            return answer

        answer, served_by, attempts = await with_fallback(chain, call)
        answer.limit_wait_ms = round(sum(waited) * 1000, 3)
        response = await self._settle(
            request, decision, answer, served_by, attempts, chain, fault, started
        )
        if key is not None:
            self._cache.put(key, response)
        return response, self._record(request, response)

    async def _settle(
        self,
        request: ChatRequest,
        decision: RouteDecision,
        answer: ChatResponse,
        served_by: ModelConfig,
        attempts: list[Any],
        chain: list[ModelConfig],
        fault: FaultSpec | None,
        started: float,
    ) -> ChatResponse:
        """Price the answer, charge the budget, write the ledger row."""
        response = answer.model_copy(
            update={
                "cost_usd": cost_usd(answer.usage, price_for(served_by)),
                "model": served_by.name,
                "latency_ms": _ms(started),
                "attempts": attempts,
                "fallback_used": served_by.name != chain[0].name,
                "fault": fault.kind if fault is not None else None,
                "route_rule": decision.rule,
                "cached": False,
            }
        )
        self._budget.add(request.run_id, response.cost_usd)
        await self._ledger(request, response)
        return response

    # -- streaming -------------------------------------------------------------------------

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        """Stream a chat completion; the last chunk carries the finish reason and usage.

        Fallback happens before the first chunk reaches the caller (a model that fails
        mid-answer fails the call). Replays, cache hits and answer-rewriting faults are
        served whole, as chunks.
        """
        started = time.perf_counter()
        decision = self._router.route(request)
        recorder, span = self._open(request, decision)
        fault: FaultSpec | None = None
        iterator: AsyncIterator[ChatChunk] | None = None
        try:
            self._budget.check(request.run_id)
            call_index = self._count(request)
            whole, mode, key = await self._lookup(request, decision, started)
            if whole is None:
                fault = self._pick_fault(request, decision.model, call_index)
                if fault is not None and fault.kind in _AFTER_FAULTS:
                    # Rewriting faults need the whole answer: fetch it, then stream it.
                    whole, mode = await self._fetch(
                        request.model_copy(update={"stream": False}), decision, started, fault, key
                    )
            if whole is not None:
                for chunk in response_to_chunks(whole):
                    yield chunk
                self._close(recorder, span, whole, mode)
                return
            chain = fallback_chain(self.config, decision.model)
            tokens = estimate_tokens(request)
            waited: list[float] = []

            async def open_stream(
                model: ModelConfig, first_byte_s: float, timeout_s: float
            ) -> _Stream:
                waited.append(await self._limits.acquire(model.name, tokens))
                if self._applies(fault, model) and fault is not None and self._faults is not None:
                    await self._faults.before_call(fault)
                chunks = provider_for(model).stream(
                    request, model, first_byte_timeout_s=first_byte_s, timeout_s=timeout_s
                )
                try:
                    return await anext(chunks), chunks
                except StopAsyncIteration:
                    return None, chunks
                except BaseException:
                    await _aclose(chunks)
                    raise

            (first, iterator), served_by, attempts = await with_fallback(chain, open_stream)
            collected = StreamAccumulator()
            if first is not None:
                collected.add(first)
                yield first
            async for chunk in iterator:
                collected.add(chunk)
                yield chunk
            answer = ChatResponse(
                message=collected.message(),
                # A provider that reports no usage: zero tokens (priced at 0), not a guess.
                usage=collected.usage or Usage(),
                model=served_by.name,
                provider=served_by.provider,
                provider_model=served_by.model,
                finish_reason=collected.finish_reason,
                limit_wait_ms=round(sum(waited) * 1000, 3),
            )
            response = await self._settle(
                request, decision, answer, served_by, attempts, chain, fault, started
            )
            if key is not None:
                self._cache.put(key, response)
            mode = self._record(request, response)
        except BaseException as exc:
            self._fail(recorder, span, exc, fault)
            raise
        finally:
            if iterator is not None:
                await _aclose(iterator)
        self._close(recorder, span, response, mode)

    # -- embeddings ------------------------------------------------------------------------

    async def embed(self, request: EmbeddingRequest) -> EmbeddingResponse:
        """Embed texts with the named model, else the first model marked ``embedding: true``."""
        return await embed(self, request)

    async def aclose(self) -> None:
        """Release rate-limit buckets, provider clients and the exporter (flushing it)."""
        await self._limits.aclose()
        await close_providers()
        if self._exporter is not None:
            await self._exporter.aclose()
        closer = getattr(self._cache, "close", None)
        if callable(closer):
            closer()

    # -- helpers ---------------------------------------------------------------------------

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        log.warning("%s", message)

    def _count(self, request: ChatRequest) -> int:
        """1-based number of this call within its attempt (faults may target the Nth)."""
        key = (request.run_id, request.case_id, request.attempt)
        self._calls[key] = self._calls.get(key, 0) + 1
        return self._calls[key]

    def forget_attempt(self, run_id: str, case_id: str, attempt: int) -> None:
        """Drop an attempt's call counter once it finished (long runs keep memory flat)."""
        self._calls.pop((run_id, case_id, attempt), None)

    def _pick_fault(self, request: ChatRequest, model: str, call_index: int) -> FaultSpec | None:
        if self._faults is None:
            return None
        return self._faults.pick(request, model, call_index)

    @staticmethod
    def _applies(fault: FaultSpec | None, model: ModelConfig) -> bool:
        # A fault aimed at one model hits every try of that model (so the chain moves on);
        # one aimed at no model hits every try: the agent sees the failure.
        return fault is not None and (fault.model is None or fault.model == model.name)

    def _replay(self, request: ChatRequest) -> ChatResponse | None:
        if self.cassette is None or self.config.cassette.mode != "replay":
            return None
        return self.cassette.replay(request)

    def _record(self, request: ChatRequest, response: ChatResponse) -> str | None:
        if self.cassette is None or self.config.cassette.mode != "record":
            return None
        self.cassette.record(request, response)
        return "record"

    async def _ledger(self, request: ChatRequest, response: ChatResponse) -> None:
        await self._write_rows([model_call_row(request, response)])

    async def _write_rows(self, rows: list[ModelCallRow]) -> None:
        if self.store is not None:
            # The store blocks on its database; keep the loop free for the other calls.
            await asyncio.to_thread(self.store.record_model_calls, rows)

    def _open(
        self, request: ChatRequest, decision: RouteDecision
    ) -> tuple[TraceRecorder | None, Span | None]:
        recorder = TraceRecorder.current()
        if recorder is None and self._exporter is not None:
            recorder = TraceRecorder()  # a call outside any attempt is still exported
        if recorder is None:
            return None, None
        span = open_chat_span(recorder, request, decision.model, decision.rule)
        if decision.complexity is not None:
            recorder.set_attributes(span, {"seatrial.gateway.complexity": decision.complexity})
        return recorder, span

    def _close(
        self,
        recorder: TraceRecorder | None,
        span: Span | None,
        response: ChatResponse,
        cassette: str | None,
    ) -> None:
        if recorder is None or span is None:
            return
        close_chat_span(recorder, span, response, cassette)
        if self._exporter is not None:
            self._exporter.offer(span)

    def _fail(
        self,
        recorder: TraceRecorder | None,
        span: Span | None,
        exc: BaseException,
        fault: FaultSpec | None,
    ) -> None:
        if recorder is None or span is None:
            return
        fail_span(recorder, span, exc, fault.kind if fault is not None else None)
        if self._exporter is not None:
            self._exporter.offer(span)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


async def _aclose(iterator: AsyncIterator[ChatChunk]) -> None:
    closer = getattr(iterator, "aclose", None)
    if closer is not None:
        await closer()
