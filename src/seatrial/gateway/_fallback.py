"""Fallback chains: retry a failing model with backoff, then move on to the next one."""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from seatrial.errors import FallbackExhausted, GatewayError, ProviderError, RateLimitTimeout
from seatrial.gateway._config import GatewayConfig, ModelConfig
from seatrial.gateway._types import CallAttempt

T = TypeVar("T")


def fallback_chain(config: GatewayConfig, model: str) -> list[ModelConfig]:
    """``model`` then its fallbacks, depth first (a fallback's own fallbacks follow it).

    Each model appears once, so fallbacks that name each other do not loop.
    """
    if model not in config.models:
        known = ", ".join(sorted(config.models)) or "none"
        raise GatewayError(
            f"unknown model `{model}` (configured: {known}); use a name configured under `models:`"
        )
    chain: list[ModelConfig] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        chain.append(config.models[name])
        for fallback in config.models[name].fallbacks:
            visit(fallback)

    visit(model)
    return chain


def _scrub(text: str, chain: list[ModelConfig]) -> str:
    # Providers already keep keys out of their messages; this is the last line of defence
    # before a detail reaches a span, the store or an error.
    for model in chain:
        key = os.environ.get(model.api_key_env) if model.api_key_env else None
        if key and len(key) >= 4:
            text = text.replace(key, "***")
    return text


def _backoff(base_s: float, retry: int) -> float:
    # Exponential, with jitter so that calls failing together do not retry together.
    return base_s * float(2**retry) * random.uniform(0.5, 1.0)


async def with_fallback(
    chain: list[ModelConfig],
    call: Callable[[ModelConfig, float, float], Awaitable[T]],
    *,
    backoff_s: float = 0.2,
) -> tuple[T, ModelConfig, list[CallAttempt]]:
    """Call each model of ``chain`` in turn until one answers.

    ``call(model, first_byte_timeout_s, timeout_s)`` makes one try. The primary gets its own
    ``first_byte_timeout_s`` (fast fail; the caller applies it to streamed answers only); a
    fallback waits up to its ``timeout_s`` for the first byte, since there may be nothing left
    to fall back to. A retryable ProviderError (timeout, 429, 5xx, connection) is retried up
    to ``model.max_retries`` times with exponential backoff; a non-retryable one (a 4xx, a
    malformed answer, a 5xx saying the model's own output could not be parsed: the model's
    answer, which a retry would repeat), or a RateLimitTimeout, moves on at once. Other
    errors (a spent budget, a cassette mismatch) stop the chain and propagate.

    Returns the answer, the model that gave it and every try; FallbackExhausted names every
    try when all models failed.
    """
    if not chain:
        raise GatewayError("no model to call: the fallback chain is empty; configure a model")
    attempts: list[CallAttempt] = []
    for index, model in enumerate(chain):
        first_byte_s = model.first_byte_timeout_s if index == 0 else model.timeout_s
        retry = 0
        while True:
            started = time.perf_counter()
            try:
                result = await call(model, first_byte_s, model.timeout_s)
            except (ProviderError, RateLimitTimeout, TimeoutError) as exc:
                outcome, retryable = _outcome(exc)
                attempts.append(
                    CallAttempt(
                        model=model.name,
                        outcome=outcome,
                        detail=_scrub(str(exc) or type(exc).__name__, chain),
                        latency_ms=(time.perf_counter() - started) * 1000,
                    )
                )
                if retryable and retry < model.max_retries:
                    await asyncio.sleep(_backoff(backoff_s, retry))
                    retry += 1
                    continue
                break
            attempts.append(
                CallAttempt(
                    model=model.name,
                    outcome="ok",
                    latency_ms=(time.perf_counter() - started) * 1000,
                )
            )
            return result, model, attempts
    tries = "; ".join(f"{a.model}: {a.outcome} ({a.detail})" for a in attempts)
    raise FallbackExhausted(
        f"every model failed after {len(attempts)} tries: {tries}; check that the providers "
        "are reachable and their keys set, or add fallbacks to the chain",
        list(attempts),
    )


def _outcome(exc: Exception) -> tuple[str, bool]:
    if isinstance(exc, ProviderError):
        return exc.kind, exc.retryable
    if isinstance(exc, RateLimitTimeout):
        # Waiting longer would only repeat the wait; another model may have room now.
        return "rate_limit_wait", False
    # A bare TimeoutError comes from a caller's own deadline around the try.
    return "timeout", True
