"""The parts of a gateway that every call goes through, in one frozen bundle.

:class:`~seatrial.gateway.Gateway` builds them once; the chat pipeline
(:mod:`seatrial.gateway._pipeline`) and embeddings (:mod:`seatrial.gateway._embed`) get
them as a :class:`GatewayParts`, so they name what they use instead of reaching into the
gateway's private members, and a change to the gateway's insides shows up here.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from seatrial.gateway._budget import Budget
from seatrial.gateway._cache import ResponseCache
from seatrial.gateway._cassette import Cassette
from seatrial.gateway._config import GatewayConfig
from seatrial.gateway._export import SpanExporter
from seatrial.gateway._faults import FaultInjector
from seatrial.gateway._limits import RateLimits
from seatrial.gateway._metrics import GatewayMetrics
from seatrial.gateway._providers import ProviderPool
from seatrial.gateway._routing import Router
from seatrial.gateway._types import ChatRequest
from seatrial.store import ModelCallRow, Store

log = logging.getLogger("seatrial.gateway")

AttemptKey = tuple[str | None, str | None, int | None]
"""(run id, case id, attempt) of a call."""


class Ledger:
    """Where the gateway's model-call rows go: the run's store, or nowhere without one."""

    def __init__(self, store: Store | None) -> None:
        self.store = store

    async def write(self, rows: list[ModelCallRow]) -> None:
        """Store ``rows`` (off the event loop: the store blocks on its database)."""
        if self.store is not None:
            await asyncio.to_thread(self.store.record_model_calls, rows)

    async def write_failure(self, row: ModelCallRow) -> None:
        """Store the row of a failed call; a store that fails now is logged, never raised:
        the call's own error is on its way to the caller."""
        try:
            await self.write([row])
        except Exception as exc:
            log.warning("the ledger row of a failed %s call was not stored: %s", row.model, exc)


class CallCounter:
    """How many calls each attempt has made so far (faults may target the Nth)."""

    def __init__(self) -> None:
        self._calls: dict[AttemptKey, int] = {}

    def next(self, request: ChatRequest) -> int:
        """Count a call of the request's attempt; its 1-based number."""
        key = (request.run_id, request.case_id, request.attempt)
        count = self._calls[key] = self._calls.get(key, 0) + 1
        return count

    def forget(self, key: AttemptKey) -> None:
        """Drop an attempt's count once it finished (long runs keep memory flat)."""
        self._calls.pop(key, None)


@dataclass(frozen=True)
class GatewayParts:
    """What a call goes through, built once per gateway."""

    config: GatewayConfig
    """The gateway's settings (models, fallbacks, cassette mode ...)."""
    router: Router
    """Chooses the model of a request."""
    limits: RateLimits
    """Each model's RPM/TPM buckets."""
    budget: Budget
    """Spend per run, checked before and charged after each call."""
    cache: ResponseCache
    """Answers by request key."""
    cassette: Cassette | None
    """The cassette in record or replay mode (None when off)."""
    faults: FaultInjector | None
    """Injected faults (None when none are configured)."""
    exporter: SpanExporter | None
    """Where spans go over OTLP (None when not exported)."""
    providers: ProviderPool
    """The SDK clients that call the models."""
    metrics: GatewayMetrics
    """The gateway's counters."""
    ledger: Ledger
    """Where the model-call rows go."""
    calls: CallCounter
    """Calls per attempt so far."""

    @property
    def recording(self) -> Cassette | None:
        """The cassette when it records (None otherwise)."""
        cassette = self.cassette
        return cassette if cassette is not None and self.config.cassette.mode == "record" else None

    @property
    def replaying(self) -> Cassette | None:
        """The cassette when it replays (None otherwise)."""
        cassette = self.cassette
        return cassette if cassette is not None and self.config.cassette.mode == "replay" else None
