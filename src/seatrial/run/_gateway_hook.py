"""Handing each attempt its own gateway base URL (``seatrial run --gateway``).

While a gateway server is in use for a run, every attempt is registered with it before the
agent is driven: the agent gets ``{url}/a/{token}/v1`` (``session.gateway_url`` for Python
agents, ``context.gateway_base_url`` in the protocol request for HTTP agents), and each call
through that URL lands as a ``chat`` span in the attempt's trace with its run, case and
attempt (for cost, cache, cassettes and faults).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from seatrial.run._context import use_gateway
from seatrial.store import Store
from seatrial.trace import TraceRecorder

if TYPE_CHECKING:
    # The gateway pulls in the model SDKs and the web server: only runs that use it pay.
    from seatrial.gateway import GatewayConfig, GatewayServer


@asynccontextmanager
async def gateway_for_run(
    config: GatewayConfig,
    *,
    store: Store | None = None,
    project_dir: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
) -> AsyncIterator[GatewayServer]:
    """Start a gateway and its proxy in this event loop for the attempts run in the block.

    The server is the block's :func:`~seatrial.run.active_gateway`: runs started inside it
    register their attempts with it.
    """
    from seatrial.gateway import Gateway, GatewayServer

    gateway = Gateway(config, store=store, project_dir=project_dir)
    try:
        async with GatewayServer(gateway, host=host, port=port) as server:
            with use_gateway(server):
                yield server
    finally:
        await gateway.aclose()


@contextmanager
def attempt_gateway(
    server: GatewayServer | None, recorder: TraceRecorder, run_id: str, case_id: str, attempt: int
) -> Iterator[str | None]:
    """The attempt's base URL on ``server`` while it runs, or None without a server."""
    if server is None:
        yield None
        return
    with server.attempt(recorder, run_id, case_id, attempt) as base_url:
        yield base_url
