"""Embeddings through the gateway: the same limits, fallbacks, prices, budget and spans."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from seatrial.errors import GatewayError
from seatrial.gateway._config import ModelConfig
from seatrial.gateway._cost import cost_usd, price_for
from seatrial.gateway._fallback import fallback_chain, with_fallback
from seatrial.gateway._parts import GatewayParts
from seatrial.gateway._spans import OP_EMBEDDINGS, fail_span, open_span
from seatrial.gateway._types import EmbeddingRequest, EmbeddingResponse
from seatrial.store import ModelCallRow
from seatrial.trace import TraceRecorder
from seatrial.trace import attrs as A


async def embed(parts: GatewayParts, request: EmbeddingRequest) -> EmbeddingResponse:
    """Embed texts with the named model, else the first model marked ``embedding: true``."""
    started = time.perf_counter()
    name = request.model or next(
        (m.name for m in parts.config.models.values() if m.embedding), None
    )
    if name is None or name not in parts.config.models:
        raise GatewayError(
            f"no embedding model {request.model or ''!s}; configure one under `models:` "
            "with `embedding: true`, or name a configured model"
        )
    recorder = TraceRecorder.current()
    span = open_span(recorder, OP_EMBEDDINGS, name, {}) if recorder is not None else None
    try:
        await parts.budget.refresh(request.run_id)
        parts.budget.check(request.run_id)
        chain = fallback_chain(parts.config, name)

        async def call(model: ModelConfig, _first_byte_s: float, timeout_s: float) -> Any:
            await parts.limits.acquire(model.name, sum(len(t) for t in request.input) // 4)
            return await parts.providers.provider_for(model).embed(
                request, model, timeout_s=timeout_s
            )

        answer, served_by, _attempts = await with_fallback(chain, call)
        price = price_for(served_by)
        response: EmbeddingResponse = answer.model_copy(
            update={
                "model": served_by.name,
                "cost_usd": cost_usd(answer.usage, price),
                "priced": price is not None,
                "latency_ms": _ms(started),
            }
        )
        parts.budget.add(request.run_id, response.cost_usd)
        await parts.ledger.write(
            [
                ModelCallRow(
                    run_id=request.run_id,
                    purpose=request.purpose,
                    model=response.model,
                    provider_model=served_by.model,
                    input_tokens=response.usage.input_tokens,
                    cost_usd=response.cost_usd,
                    priced=response.priced,
                    latency_ms=response.latency_ms,
                )
            ]
        )
    except (Exception, asyncio.CancelledError) as exc:
        # A cancelled call ended too: its span is ended as failed (no open span left in the
        # trace) and the cancellation goes on unchanged.
        if recorder is not None and span is not None:
            fail_span(recorder, span, exc)
        raise
    if recorder is not None and span is not None:
        recorder.set_attributes(
            span,
            {
                A.INPUT_TOKENS: response.usage.input_tokens,
                A.COST_USD: response.cost_usd,
            },
        )
        recorder.end_span(span)
    return response


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
