"""Requests-per-minute and tokens-per-minute limits per model, shared through Redis if asked.

Both limits are pyrate-limiter token buckets (its GCRA algorithm in a ``StateBucket``): a
constant-size state per model, kept in memory or, with ``redis_url``, in a Redis hash that a
Lua script updates atomically, so every process using the same Redis shares one budget.

- ``rpm``: refills one request every ``60 / rpm`` seconds and holds at most one second's
  worth (``rpm // 60``, at least 1). Calls are paced rather than fired in a burst that the
  provider, which enforces its per-minute limits over shorter periods, would answer with 429.
- ``tpm``: holds a full minute of tokens and refills continuously. Each call is charged its
  estimated tokens (:func:`estimate_tokens`); a call estimated above ``tpm`` is charged
  ``tpm``, so it waits for a full bucket instead of never going.

Calls that must wait queue in the order they came, per model and limit, in each event loop:
only the first of them polls the bucket. Without the queue every waiter woke at the same
moment and one of them won at random, so a call could lose again and again while later ones
went (a worker's attempt timing out behind calls that came after it).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit, urlunsplit

from pyrate_limiter import (
    GCRA,
    AbstractClock,
    Decision,
    Duration,
    InMemoryStateStore,
    MonotonicClock,
    Rate,
    RateItem,
    RedisStateStore,
    StateBucket,
    WallClock,
)
from redis.exceptions import RedisError

from seatrial.errors import GatewayError, RateLimitTimeout
from seatrial.gateway._config import ModelConfig
from seatrial.gateway._routing import message_text
from seatrial.gateway._types import ChatRequest

if TYPE_CHECKING:
    from redis.asyncio import Redis

Kind = Literal["rpm", "tpm"]

_DEFAULT_OUTPUT_TOKENS = 256


def estimate_tokens(request: ChatRequest) -> int:
    """Tokens a call will likely use: prompt characters / 4, plus ``max_tokens`` or 256.

    Tool definitions count as prompt: providers send them to the model.
    """
    chars = sum(len(message_text(m)) for m in request.messages)
    if request.tools:
        chars += len(json.dumps(request.tools, separators=(",", ":")))
    return math.ceil(chars / 4) + (request.max_tokens or _DEFAULT_OUTPUT_TOKENS)


def _redacted(url: str) -> str:
    # A Redis URL may carry a password; an error message must not.
    parts = urlsplit(url)
    if parts.password is None and parts.username is None:
        return url
    host = parts.hostname or ""
    netloc = f"***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


@dataclass
class _Limit:
    kind: Kind
    per_minute: int
    bucket: StateBucket

    @property
    def burst(self) -> int:
        return self.bucket.rates[0].burst


class RateLimits:
    """Waits, within ``max_wait_s``, until a model's RPM and TPM limits let a call go.

    ``namespace`` prefixes the Redis keys: processes that should share budgets use the same
    one (the default), and separate projects on one Redis may pick their own.
    """

    def __init__(
        self,
        models: dict[str, ModelConfig],
        redis_url: str | None = None,
        max_wait_s: float = 10.0,
        *,
        namespace: str = "seatrial",
    ) -> None:
        self._models = models
        self._max_wait_s = max_wait_s
        self._namespace = namespace
        self._redis_url = redis_url
        self._redis: Redis | None = None
        # Redis state is compared across processes and hosts; a monotonic clock only
        # means something inside one process.
        self._clock: AbstractClock = WallClock() if redis_url else MonotonicClock()
        self._limits: dict[str, list[_Limit]] = {}
        self._queues: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[tuple[str, Kind], asyncio.Lock]
        ] = weakref.WeakKeyDictionary()
        if redis_url:
            from redis.asyncio import Redis

            try:
                self._redis = Redis.from_url(redis_url)
            except (RedisError, ValueError) as exc:
                raise GatewayError(
                    f"gateway.redis_url `{_redacted(redis_url)}` is not a Redis URL ({exc}); "
                    "write redis://host:port/db"
                ) from exc
        for name, model in models.items():
            per_kind: list[tuple[Kind, int | None]] = [("rpm", model.rpm), ("tpm", model.tpm)]
            limits = [
                self._limit(name, kind, per_minute)
                for kind, per_minute in per_kind
                if per_minute is not None
            ]
            if limits:
                self._limits[name] = limits

    def _limit(self, model: str, kind: Kind, per_minute: int) -> _Limit:
        burst = max(1, per_minute // 60) if kind == "rpm" else per_minute
        rate = Rate(per_minute, Duration.MINUTE, burst=burst)
        if self._redis is not None:
            store: InMemoryStateStore | RedisStateStore = RedisStateStore(
                self._redis, f"{self._namespace}:ratelimit:{model}:{kind}"
            )
        else:
            store = InMemoryStateStore()
        bucket = StateBucket([rate], algorithm=GCRA(), store=store, clock=self._clock)
        return _Limit(kind, per_minute, bucket)

    async def acquire(self, model: str, tokens: int) -> float:
        """Take one request and ``tokens`` from ``model``'s limits; the seconds waited.

        Returns exactly 0.0 when the call may go at once (always, for a model without
        limits). Raises RateLimitTimeout, without waiting, as soon as the wait would run past
        ``max_wait_s``.
        """
        if model not in self._models:
            known = ", ".join(sorted(self._models)) or "none"
            raise GatewayError(
                f"no rate limits for unknown model `{model}` (configured: {known}); "
                "use a name configured under `models:`"
            )
        limits = self._limits.get(model)
        if not limits:
            return 0.0
        started = time.monotonic()
        waited = 0.0
        for limit in limits:
            weight = 1 if limit.kind == "rpm" else min(max(tokens, 1), limit.burst)
            waited += await self._take(model, limit, weight, started)
        return waited

    def _queue(self, model: str, kind: Kind) -> asyncio.Lock:
        # A lock belongs to one event loop; a gateway may serve several (one per thread).
        queues = self._queues.setdefault(asyncio.get_running_loop(), {})
        return queues.setdefault((model, kind), asyncio.Lock())

    async def _take(self, model: str, limit: _Limit, weight: int, started: float) -> float:
        queue = self._queue(model, limit.kind)
        before, queued = time.monotonic(), queue.locked()
        try:
            # asyncio.Lock is first come, first served; a free lock is taken without waiting.
            async with asyncio.timeout(max(0.0, self._max_wait_s - (before - started))):
                await queue.acquire()
        except TimeoutError:
            raise RateLimitTimeout(
                f"model `{model}` is at its {limit.kind} limit ({limit.per_minute}/min): the "
                f"call waited {time.monotonic() - started:.2f} s behind calls that came before "
                f"it, the {self._max_wait_s:g} s allowed; raise gateway.max_limit_wait_s, raise "
                f"the model's {limit.kind} if the provider allows it, or add a fallback model"
            ) from None
        try:
            waited = time.monotonic() - before if queued else 0.0
            return waited + await self._poll(model, limit, weight, started)
        finally:
            queue.release()

    async def _poll(self, model: str, limit: _Limit, weight: int, started: float) -> float:
        # The RPM unit is spent before the TPM wait begins; if TPM then times out, that unit
        # stays spent. It errs towards fewer calls, never more than the limits allow.
        slept = 0.0
        while True:
            item = RateItem(model, self._now(), weight=weight)
            decision = await self._put(limit, item)
            if decision.allowed:
                return slept
            wait_s = (decision.retry_after_ms or 0) / 1000
            total_s = time.monotonic() - started + wait_s
            if total_s > self._max_wait_s:
                raise RateLimitTimeout(
                    f"model `{model}` is at its {limit.kind} limit ({limit.per_minute}/min): "
                    f"the call would wait {total_s:.2f} s, more than the {self._max_wait_s:g} s "
                    "allowed; raise gateway.max_limit_wait_s, raise the model's "
                    f"{limit.kind} if the provider allows it, or add a fallback model"
                )
            before = time.monotonic()
            await asyncio.sleep(wait_s)
            slept += time.monotonic() - before

    def _now(self) -> int:
        now = self._clock.now()
        assert isinstance(now, int)  # both clocks used here are synchronous
        return now

    async def _put(self, limit: _Limit, item: RateItem) -> Decision:
        try:
            result = limit.bucket.put_decision(item)
            if isinstance(result, Decision):
                return result
            return await result
        except RedisError as exc:
            url = _redacted(self._redis_url or "")
            raise GatewayError(
                f"rate limits: Redis at {url} failed ({type(exc).__name__}: {exc}); start "
                "Redis there or remove gateway.redis_url to keep limits in this process"
            ) from exc

    async def aclose(self) -> None:
        """Close the Redis connection, if there is one."""
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None
