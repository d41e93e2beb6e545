"""The gateway: one door for every model call, recorded, limited, priced, cached, replayable.

:class:`Gateway` builds what outlives one call (router, limits, budget, cache, cassette,
faults, exporter, providers, ledger) into one frozen :class:`~._parts.GatewayParts`; the
steps of a chat call are in :mod:`seatrial.gateway._pipeline`, which gets those parts and
nothing else, the same for whole and streamed answers.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from pathlib import Path

from seatrial.gateway._budget import Budget
from seatrial.gateway._cache import ResponseCache
from seatrial.gateway._cassette import Cassette, CutOff
from seatrial.gateway._config import GatewayConfig
from seatrial.gateway._embed import embed
from seatrial.gateway._export import SpanExporter
from seatrial.gateway._faults import FaultInjector
from seatrial.gateway._limits import RateLimits
from seatrial.gateway._metrics import GatewayMetrics
from seatrial.gateway._parts import CallCounter, GatewayParts, Ledger
from seatrial.gateway._pipeline import ChatCall
from seatrial.gateway._providers import Provider, ProviderPool
from seatrial.gateway._routing import Router
from seatrial.gateway._types import (
    ChatChunk,
    ChatRequest,
    ChatResponse,
    EmbeddingRequest,
    EmbeddingResponse,
)
from seatrial.store import Store

log = logging.getLogger("seatrial.gateway")


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
        providers: Mapping[str, Provider] | None = None,
    ) -> None:
        """``replay_run_id``: in cassette replay mode, serve that run's recording to every
        run (re-running a stored run under a new run id). ``providers``: providers the caller
        keeps, by model name, answering for those models whatever their ``provider`` says
        (e.g. a ``seatrial.testing.ScriptedModel``); the gateway makes the others itself on
        first use and closes them in :meth:`aclose`."""
        self.config = config
        self.warnings: list[str] = []
        """Budget warnings given so far (also logged to ``seatrial.gateway``)."""
        root = project_dir or Path.cwd()
        cache_path = project_dir / ".seatrial" / "cache.db" if project_dir is not None else None
        self.cassette = (
            Cassette(config.cassette, root, source_run_id=replay_run_id)
            if config.cassette.mode != "off"
            else None
        )
        """The cassette in record or replay mode (None when off)."""
        self.metrics = GatewayMetrics(config.models)
        """This gateway's counters (``GET /metrics`` of its proxy); its own registry."""
        self._parts = GatewayParts(
            config=config,
            router=Router(config),
            limits=RateLimits(config.models, config.redis_url, config.max_limit_wait_s),
            budget=Budget(config.budgets, store, warn=self._warn),
            cache=ResponseCache(config.cache, cache_path),
            cassette=self.cassette,
            faults=FaultInjector(config.faults, config.fault_seed) if config.faults else None,
            exporter=(
                SpanExporter(config.tracing, seed=config.fault_seed)
                if config.tracing.otlp_endpoint
                else None
            ),
            providers=ProviderPool(providers),
            metrics=self.metrics,
            ledger=Ledger(store),
            calls=CallCounter(),
        )
        self._opened_with = (project_dir, replay_run_id, providers)
        """What :meth:`for_process` opens another gateway with."""

    @property
    def store(self) -> Store | None:
        """Where the model-call rows go (None: nowhere)."""
        return self._parts.ledger.store

    def for_process(self, store: Store | None) -> Gateway:
        """A gateway of this one's configuration for another process (a forked worker):
        rate limits, cache, cassette, exporter and providers opened anew there, its ledger rows
        and budget read through ``store`` (the worker's own connection). Providers the caller
        handed in come along as they are."""
        project_dir, replay_run_id, providers = self._opened_with
        return Gateway(
            self.config,
            store=store,
            project_dir=project_dir,
            replay_run_id=replay_run_id,
            providers=providers,
        )

    # -- chat ------------------------------------------------------------------------------

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """One chat completion through the whole pipeline (see :mod:`._pipeline`)."""
        call = ChatCall(self._parts, request, streamed=False)
        async with aclosing(call.run()) as nothing:
            async for _ in nothing:
                pass  # a whole answer yields no chunks
        assert call.response is not None
        return call.response

    async def stream(self, request: ChatRequest) -> AsyncIterator[ChatChunk]:
        """Stream a chat completion; the last chunk carries the finish reason and usage.

        Fallback happens before the first chunk reaches the caller (a model that fails
        mid-answer fails the call). Replays, cache hits and answer-rewriting faults are
        served whole, as chunks.
        """
        async with aclosing(ChatCall(self._parts, request, streamed=True).run()) as chunks:
            async for chunk in chunks:
                yield chunk

    # -- embeddings ------------------------------------------------------------------------

    async def embed(self, request: EmbeddingRequest) -> EmbeddingResponse:
        """Embed texts with the named model, else the first model marked ``embedding: true``."""
        return await embed(self._parts, request)

    async def aclose(self) -> None:
        """Release rate-limit buckets, provider clients and the exporter (flushing it)."""
        parts = self._parts
        await parts.limits.aclose()
        await parts.providers.aclose()
        if parts.exporter is not None:
            await parts.exporter.aclose()
        parts.cache.close()

    # -- helpers ---------------------------------------------------------------------------

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        log.warning("%s", message)

    def forget_attempt(self, run_id: str, case_id: str, attempt: int) -> None:
        """Drop an attempt's call counter once it finished (long runs keep memory flat)."""
        self._parts.calls.forget((run_id, case_id, attempt))

    def cut_off(self, request: ChatRequest, after_s: float) -> None:
        """The attempt of ``request`` ended ``after_s`` into the call, before the model
        answered: in record mode the cassette says so, so a replay times out again instead
        of getting the late answer."""
        cassette = self._parts.recording
        if cassette is not None:
            cassette.record(request, CutOff(after_s))
