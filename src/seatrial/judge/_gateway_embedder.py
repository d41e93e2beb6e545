"""Embeddings models configured in the gateway, for ``similar`` checks that name one.

Checks run synchronously inside the runner's event loop, so a gateway call cannot be awaited
there. Each :class:`GatewayEmbedder` owns a gateway (same configuration: limits, fallbacks,
prices, budget) on a private event loop in its own thread, and waits on it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from seatrial.errors import InputError, SeatrialError
from seatrial.gateway import EmbeddingRequest, EmbeddingResponse, Gateway, GatewayConfig
from seatrial.judge._embedding import Vectors, unit_rows, use_embedders

TIMEOUT_S = 120.0
"""Longest wait for one batch, fallbacks and retries included."""


class GatewayEmbedder:
    """Embeds texts with the gateway model ``name`` (``embedding: true`` in ``models:``)."""

    def __init__(self, config: GatewayConfig, name: str, run_id: str | None = None) -> None:
        model = config.models.get(name)
        if model is None or not model.embedding:
            configured = sorted(m.name for m in config.models.values() if m.embedding)
            raise InputError(
                # untranslated: raised inside a check, recorded with the attempt
                f"no gateway embeddings model {name!r}; configure it under `models:` with "
                f"`embedding: true` (configured: {', '.join(configured) or 'none'})"
            )
        self.name = name
        self._run_id = run_id
        self._gateway = Gateway(config)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name=f"seatrial-embed-{name}", daemon=True
        )
        self._thread.start()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """The gateway model's vectors for ``texts``, at unit length."""
        request = EmbeddingRequest(
            model=self.name, input=list(texts), purpose="judge", run_id=self._run_id
        )
        future = asyncio.run_coroutine_threadsafe(self._gateway.embed(request), self._loop)
        try:
            response: EmbeddingResponse = future.result(timeout=TIMEOUT_S)
        except TimeoutError as exc:
            future.cancel()
            raise SeatrialError(
                f"the gateway embeddings model {self.name!r} did not answer in {TIMEOUT_S:.0f} "
                "s; check that its server is up, or leave `model` unset for the bundled model"
            ) from exc
        if len(response.vectors) != len(texts):
            raise SeatrialError(
                f"the gateway embeddings model {self.name!r} returned "
                f"{len(response.vectors)} vectors for {len(texts)} texts; check the model"
            )
        return unit_rows(response.vectors)

    def close(self) -> None:
        """Close the gateway's connections and stop its thread."""
        if not self._loop.is_running():
            return
        asyncio.run_coroutine_threadsafe(self._gateway.aclose(), self._loop).result(TIMEOUT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(TIMEOUT_S)
        self._loop.close()


@contextmanager
def use_gateway_embeddings(
    config: GatewayConfig, run_id: str | None = None
) -> Iterator[dict[str, GatewayEmbedder]]:
    """In this block, ``similar`` checks naming a gateway embeddings model use ``config``.

    Yields the embedders made so far (by model name); all are closed when the block ends.
    """
    made: dict[str, GatewayEmbedder] = {}
    lock = threading.Lock()

    def factory(name: str) -> GatewayEmbedder:
        with lock:
            if name not in made:
                made[name] = GatewayEmbedder(config, name, run_id)
            return made[name]

    try:
        with use_embedders(factory):
            yield made
    finally:
        for embedder in made.values():
            embedder.close()
