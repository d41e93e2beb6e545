"""One chat request through the gateway, the same steps whether answered whole or streamed.

Order: route -> span -> budget check -> cassette replay (replay mode) -> cache -> fault
pick -> fallback chain (each try: rate limit, fault before, provider, fault after) -> cost
-> budget -> ledger row -> cache put -> cassette record -> the ``chat {model}`` span ends. A
call that reached a model and failed ends its span as failed and still leaves a ledger row
(status ``timeout`` or ``error``).

A streamed call yields the provider's chunks as they come and settles once the last one
passed; replays, cache hits and answer-rewriting faults are answered whole and, when
streamed, re-chunked. Fallback happens before the first chunk reaches the caller (a model
that fails mid-answer fails the call).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import NoReturn

from seatrial.errors import ProviderError
from seatrial.gateway._cassette import CutOff
from seatrial.gateway._config import FaultSpec, ModelConfig
from seatrial.gateway._cost import cost_usd, failed_call_row, model_call_row, price_for
from seatrial.gateway._export import SpanExporter
from seatrial.gateway._fallback import fallback_chain, with_fallback
from seatrial.gateway._limits import estimate_tokens
from seatrial.gateway._parts import GatewayParts
from seatrial.gateway._prepared import PreparedRequest
from seatrial.gateway._routing import RouteDecision
from seatrial.gateway._spans import close_chat_span, fail_span, open_chat_span
from seatrial.gateway._stream import StreamAccumulator
from seatrial.gateway._types import CallAttempt, ChatChunk, ChatRequest, ChatResponse, Usage
from seatrial.gateway._wire import response_to_chunks
from seatrial.trace import Span, TraceRecorder

_AFTER_FAULTS = frozenset({"empty", "malformed_tool_call"})
"""Faults that rewrite the answer: a stream with one is fetched whole, then re-chunked."""


@dataclass
class _Answered:
    """What one successful try of a model gave: a whole answer, or an opened stream."""

    whole: ChatResponse | None = None
    first: ChatChunk | None = None
    chunks: AsyncIterator[ChatChunk] | None = None


class ChatCall:
    """One request through the pipeline; :meth:`run` yields the chunks of a streamed call.

    A whole call yields nothing; either way :attr:`response` holds the settled answer once
    :meth:`run` is exhausted.
    """

    def __init__(self, parts: GatewayParts, request: ChatRequest, *, streamed: bool) -> None:
        self._parts = parts
        self._request = request
        self._call = PreparedRequest(request)
        """The request normalised and hashed at most once, for the span, cache and cassette."""
        self._streamed = streamed
        self._started = time.perf_counter()
        self._fault: FaultSpec | None = None
        self._mode: str | None = None
        """``replay`` or ``record`` when the cassette served or kept the answer."""
        self.response: ChatResponse | None = None
        """The answer, priced and recorded (set when :meth:`run` finished)."""
        self._tried: str | None = None
        """The last model a request was sent to (None while none was: a refused call)."""

    async def run(self) -> AsyncGenerator[ChatChunk, None]:
        """Run the pipeline, ending the call's span either way."""
        decision = self._parts.router.route(self._request)
        span = CallSpan(self._parts.exporter, self._call, decision)
        try:
            async with aclosing(self._answer(decision)) as chunks:
                async for chunk in chunks:
                    yield chunk
        except Exception as exc:
            span.fail(exc, self._fault)
            self._parts.metrics.failed(decision.model, exc)
            if self._tried is not None:
                # The call reached a model and failed (a judge that timed out, a chain that
                # ran out): the ledger says so, or its time and tries would leave no trace.
                await self._parts.ledger.write_failure(
                    failed_call_row(self._request, self._tried, exc, self._ms())
                )
            raise
        except (asyncio.CancelledError, GeneratorExit) as exc:
            # Neither is an Exception, yet the call ended here: a cancelled task, or a client
            # that stopped reading the stream. The span is ended as failed so the trace holds
            # no open span, and the interruption goes on unchanged (never swallowed).
            span.fail(exc, self._fault)
            self._parts.metrics.failed(decision.model, exc)
            raise
        assert self.response is not None
        span.close(self.response, self._mode)
        self._parts.metrics.answered(decision.model, self.response, self._mode)

    async def _answer(self, decision: RouteDecision) -> AsyncGenerator[ChatChunk, None]:
        parts, request = self._parts, self._request
        await parts.budget.refresh(request.run_id)
        parts.budget.check(request.run_id)
        call_index = parts.calls.next(request)
        whole, key = await self._lookup(decision)
        if whole is None:
            if parts.faults is not None:
                self._fault = parts.faults.pick(request, decision.model, call_index)
            if not self._streamed or self._fault is None or self._fault.kind not in _AFTER_FAULTS:
                async with aclosing(self._fetch(decision, key, request, self._streamed)) as chunks:
                    async for chunk in chunks:
                        yield chunk
                return
            # Rewriting faults need the whole answer: fetch it, then stream it.
            whole_request = request.model_copy(update={"stream": False})
            async for _ in self._fetch(decision, key, whole_request, streamed=False):
                pass  # a whole fetch yields nothing
            whole = self.response
        assert whole is not None
        self.response = whole
        if self._streamed:
            for chunk in response_to_chunks(whole):
                yield chunk

    async def _lookup(self, decision: RouteDecision) -> tuple[ChatResponse | None, str | None]:
        """A replayed or cached answer (setting the cassette mode), and the cache key to fill."""
        parts, request = self._parts, self._request
        cassette = parts.replaying
        replayed = cassette.replay(self._call) if cassette is not None else None
        if isinstance(replayed, CutOff):
            await self._cut_off_again(decision, replayed)
        if replayed is not None:
            self._mode = "replay"
            return replayed, None
        cache = parts.cache
        key = cache.key(self._call, decision.model) if cache.enabled_for(request) else None
        hit = cache.get(key) if key is not None else None
        if key is not None:
            parts.metrics.cache_lookup(decision.model, hit is not None)
        if hit is None:
            return None, key
        response = hit.model_copy(
            update={
                "cached": True,
                "cost_usd": 0.0,
                "latency_ms": self._ms(),
                "route_rule": decision.rule,
                "fallback_used": False,
                "fault": None,
            }
        )
        await self._book(request, response)
        self._record(response)
        return response, key

    async def _cut_off_again(self, decision: RouteDecision, recorded: CutOff) -> NoReturn:
        """Replay a call its attempt's deadline cut off: wait for that deadline again (the
        attempt's end cancels this wait), at most the model's ``timeout_s``, then fail as a
        real call would have."""
        model = self._parts.config.models.get(decision.model)
        limit_s = model.timeout_s if model is not None else recorded.after_s
        await asyncio.sleep(limit_s)
        raise ProviderError(
            f"model {decision.model!r} did not answer this call when it was recorded: its "
            f"attempt ended {recorded.after_s:g} s into it; replayed, it waits for the "
            f"attempt's deadline (at most the model's timeout_s, {limit_s:g} s)",
            kind="timeout",
        )

    async def _fetch(
        self, decision: RouteDecision, key: str | None, request: ChatRequest, streamed: bool
    ) -> AsyncGenerator[ChatChunk, None]:
        """Ask the models of the chain, then price, charge, cache and record the answer."""
        parts, fault = self._parts, self._fault
        chain = fallback_chain(parts.config, decision.model)
        tokens = estimate_tokens(request)
        waited: list[float] = []

        async def attempt(model: ModelConfig, first_byte_s: float, timeout_s: float) -> _Answered:
            wait_s = await parts.limits.acquire(model.name, tokens)
            parts.metrics.limit_wait(model.name, wait_s)
            waited.append(wait_s)
            self._tried = model.name
            injector = parts.faults if fault is not None and _applies(fault, model) else None
            if injector is not None and fault is not None:
                await injector.before_call(fault)
            provider = parts.providers.provider_for(model)
            if not streamed:
                # A whole answer's first byte is the answer itself: only `timeout_s` bounds
                # it (a first-byte clock would fail every slow local model's normal call).
                answer = await provider.chat(
                    request, model, first_byte_timeout_s=timeout_s, timeout_s=timeout_s
                )
                if injector is not None and fault is not None:
                    answer = injector.after_call(fault, answer, request)
                return _Answered(whole=answer)
            chunks = provider.stream(
                request, model, first_byte_timeout_s=first_byte_s, timeout_s=timeout_s
            )
            opened = False
            try:
                first = await anext(chunks, None)
                opened = True
            finally:
                if not opened:  # this try failed (or was cancelled): release its connection
                    await _aclose(chunks)
            return _Answered(first=first, chunks=chunks)

        answered, served_by, attempts = await with_fallback(chain, attempt)
        answer = answered.whole
        if answer is None:
            collected = StreamAccumulator()
            try:
                if answered.first is not None:
                    collected.add(answered.first)
                    yield answered.first
                assert answered.chunks is not None
                async for chunk in answered.chunks:
                    collected.add(chunk)
                    yield chunk
            finally:
                if answered.chunks is not None:
                    await _aclose(answered.chunks)
            answer = ChatResponse(
                message=collected.message(),
                # A provider that reports no usage: zero tokens (priced at 0), not a guess.
                usage=collected.usage or Usage(),
                model=served_by.name,
                provider=served_by.provider,
                provider_model=served_by.model,
                finish_reason=collected.finish_reason,
            )
        answer.limit_wait_ms = round(sum(waited) * 1000, 3)
        response = await self._settle(request, decision, answer, served_by, attempts, chain)
        if key is not None:
            parts.cache.put(key, response)
        self._record(response)
        self.response = response

    async def _settle(
        self,
        request: ChatRequest,
        decision: RouteDecision,
        answer: ChatResponse,
        served_by: ModelConfig,
        attempts: list[CallAttempt],
        chain: list[ModelConfig],
    ) -> ChatResponse:
        """Price the answer, charge the budget, write the ledger row."""
        fault = self._fault
        price = price_for(served_by)
        response = answer.model_copy(
            update={
                "cost_usd": cost_usd(answer.usage, price),
                "priced": price is not None,
                "model": served_by.name,
                "latency_ms": self._ms(),
                "attempts": attempts,
                "fallback_used": served_by.name != chain[0].name,
                "fault": fault.kind if fault is not None else None,
                "route_rule": decision.rule,
                "cached": False,
            }
        )
        self._parts.budget.add(request.run_id, response.cost_usd)
        await self._book(request, response)
        return response

    async def _book(self, request: ChatRequest, response: ChatResponse) -> None:
        """Write the call's ledger row."""
        await self._parts.ledger.write([model_call_row(request, response)])

    def _record(self, response: ChatResponse) -> None:
        """Keep the answer on the cassette in record mode (marking the call ``record``)."""
        cassette = self._parts.recording
        if cassette is not None:
            cassette.record(self._call, response)
            self._mode = "record"

    def _ms(self) -> float:
        return (time.perf_counter() - self._started) * 1000.0


class CallSpan:
    """The ``chat {model}`` span of one call, on the attempt's recorder (or none).

    A call outside any attempt gets a recorder of its own when spans are exported, so it
    still reaches the collector.
    """

    def __init__(
        self, exporter: SpanExporter | None, call: PreparedRequest, decision: RouteDecision
    ) -> None:
        self._exporter = exporter
        recorder = TraceRecorder.current()
        if recorder is None and self._exporter is not None:
            recorder = TraceRecorder()
        self._recorder = recorder
        self._span: Span | None = None
        if recorder is None:
            return
        self._span = open_chat_span(recorder, call, decision.model, decision.rule)
        if decision.complexity is not None:
            recorder.set_attributes(
                self._span, {"seatrial.gateway.complexity": decision.complexity}
            )

    def close(self, response: ChatResponse, cassette: str | None) -> None:
        """End the span with the answer."""
        if self._recorder is None or self._span is None:
            return
        close_chat_span(self._recorder, self._span, response, cassette)
        if self._exporter is not None:
            self._exporter.offer(self._span)

    def fail(self, exc: BaseException, fault: FaultSpec | None) -> None:
        """End the span as failed by ``exc`` (naming the injected fault, if any)."""
        if self._recorder is None or self._span is None:
            return
        fail_span(self._recorder, self._span, exc, fault.kind if fault is not None else None)
        if self._exporter is not None:
            self._exporter.offer(self._span)


def _applies(fault: FaultSpec | None, model: ModelConfig) -> bool:
    # A fault aimed at one model hits every try of that model (so the chain moves on);
    # one aimed at no model hits every try: the agent sees the failure.
    return fault is not None and (fault.model is None or fault.model == model.name)


async def _aclose(iterator: AsyncIterator[ChatChunk]) -> None:
    closer = getattr(iterator, "aclose", None)
    if closer is not None:
        await closer()
