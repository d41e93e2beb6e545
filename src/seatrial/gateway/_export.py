"""Exporting gateway spans to an OpenTelemetry collector over OTLP/HTTP JSON, sampled.

Keep a share of the normal calls, enough to see systematic problems, and every failed one.
Spans are sent in batches from the event loop; a collector that is down costs a logged
warning, never a model call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random

import httpx

from seatrial.gateway._config import TracingConfig
from seatrial.trace import Span, Trace, trace_to_otlp

log = logging.getLogger("seatrial.gateway")

BATCH_SIZE = 64
"""Spans per POST; a full batch is sent at once."""
FLUSH_INTERVAL_S = 1.0
"""A partial batch waits at most this long."""


class SpanExporter:
    """Samples finished spans and POSTs them to ``tracing.otlp_endpoint``."""

    def __init__(
        self, config: TracingConfig, *, seed: int | None = None, service_name: str = "seatrial"
    ) -> None:
        if not config.otlp_endpoint:
            raise ValueError("SpanExporter needs tracing.otlp_endpoint")
        self.endpoint = config.otlp_endpoint
        self.sample_rate = config.sample_rate
        self.service_name = service_name
        self.exported = 0
        """Spans the collector accepted so far."""
        self.failures = 0
        """Batches the collector refused or could not be reached for."""
        self._random = random.Random(seed)
        self._pending: list[Span] = []
        self._client: httpx.AsyncClient | None = None
        self._timer: asyncio.Task[None] | None = None
        self._sending: set[asyncio.Task[None]] = set()

    def sampled(self, span: Span) -> bool:
        """Every failed span; a ``sample_rate`` share of the others."""
        if span.status == "error":
            return True
        return self._random.random() < self.sample_rate

    def offer(self, span: Span) -> None:
        """Queue a finished span if it is sampled; send when a batch is full."""
        if not self.sampled(span):
            return
        self._pending.append(span)
        if len(self._pending) >= BATCH_SIZE:
            self._spawn(self._send(self._take()))
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().create_task(self._flush_later())

    def _take(self) -> list[Span]:
        batch, self._pending = self._pending, []
        return batch

    def _spawn(self, coroutine: object) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coroutine)  # type: ignore[arg-type]
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _flush_later(self) -> None:
        try:
            await asyncio.sleep(FLUSH_INTERVAL_S)
        finally:
            self._timer = None
        await self._send(self._take())

    async def flush(self) -> None:
        """Send whatever is queued and wait for batches in flight."""
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
            self._timer = None
        await self._send(self._take())
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    async def _send(self, batch: list[Span]) -> None:
        if not batch:
            return
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=10.0)
        payload = trace_to_otlp(Trace(trace_id=batch[0].trace_id, spans=batch), self.service_name)
        try:
            response = await self._client.post(self.endpoint, json=payload)
        except httpx.HTTPError as exc:
            self.failures += 1
            log.warning("OTLP export to %s failed: %s", self.endpoint, type(exc).__name__)
            return
        if response.status_code >= 400:
            self.failures += 1
            log.warning(
                "OTLP collector at %s answered HTTP %d", self.endpoint, response.status_code
            )
            return
        self.exported += len(batch)

    async def aclose(self) -> None:
        """Flush, then close the HTTP client."""
        await self.flush()
        if self._client is not None:
            await self._client.aclose()
            self._client = None
