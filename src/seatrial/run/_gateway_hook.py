"""Handing each attempt its model calls: in process, and through the proxy when one serves
the run (``seatrial run --gateway``).

While a gateway is in use for a run, every attempt is registered with it before the agent is
driven. The attempt gets ``AttemptContext.model``, ``Gateway.chat`` bound to it, which a
``model:`` agent calls without a socket (:func:`gateway_in_process` starts no proxy, so the
run may use ``--workers``: each worker opens its own gateway). With a proxy
(:func:`gateway_for_run`), the agent also gets ``{url}/a/{token}/v1``
(``session.gateway_url`` for Python agents, ``context.gateway_base_url`` in the protocol
request for HTTP agents). Either way each call lands as a ``chat`` span in the attempt's
trace with its run, case and attempt (for cost, cache, cassettes and faults).

On Celery workers (``seatrial run --backend celery --gateway``) each worker process starts
its own gateway and proxy for each run it serves, from its own ``seatrial.yaml``
(:func:`worker_gateway_config`): rate limits are shared between the workers through Redis
(the broker's, unless ``gateway.redis_url`` names another), budgets through the store's
ledger (``seatrial.gateway.Budget``). The run stores the coordinator's configuration hash
(:func:`gateway_record`); a worker whose configuration differs says so in its log.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from seatrial.record import GatewaySetting
from seatrial.run._context import use_gateway
from seatrial.run._snapshot import gateway_config_hash
from seatrial.store import Store
from seatrial.trace import TraceRecorder

if TYPE_CHECKING:
    # The gateway pulls in the model SDKs and the web server: only runs that use it pay.
    from seatrial.gateway import AttemptCalls, GatewayConfig, GatewayServer, RunGateway

log = logging.getLogger("seatrial.gateway")

_REDIS_SCHEMES = ("redis://", "rediss://")


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

    The gateway, with this server, is the block's :func:`~seatrial.run.active_gateway`: runs
    started inside it register their attempts with it. The proxy belongs to this process's
    event loop, so such a run stays in this process (``--workers`` is not used).
    """
    from seatrial.gateway import Gateway, GatewayServer, RunGateway

    gateway = Gateway(config, store=store, project_dir=project_dir)
    try:
        async with GatewayServer(gateway, host=host, port=port) as server:
            with use_gateway(RunGateway(gateway, server)):
                yield server
    finally:
        await gateway.aclose()


@asynccontextmanager
async def gateway_in_process(
    config: GatewayConfig, *, store: Store | None = None, project_dir: Path | None = None
) -> AsyncIterator[RunGateway]:
    """A gateway for the model calls the runs in the block make in process (``model:``
    agents, simulated users): nothing listens, and a run with ``--workers`` opens one in each
    worker (:meth:`seatrial.gateway.Gateway.for_process`)."""
    from seatrial.gateway import Gateway, RunGateway

    gateway = Gateway(config, store=store, project_dir=project_dir)
    try:
        with use_gateway(RunGateway(gateway)) as run_gateway:
            yield run_gateway
    finally:
        await gateway.aclose()


@contextmanager
def attempt_gateway(
    gateway: RunGateway | None, recorder: TraceRecorder, run_id: str, case_id: str, attempt: int
) -> Iterator[AttemptCalls | None]:
    """The attempt's model handle and proxy URL while it runs, or None without a gateway."""
    if gateway is None:
        yield None
        return
    with gateway.attempt(recorder, run_id, case_id, attempt) as calls:
        yield calls


def gateway_record(config: GatewayConfig) -> GatewaySetting:
    """What a run on workers stores about its gateway (``RunSettings.gateway``): that it has
    one, and the hash of the coordinator's configuration (without ``redis_url``, which each
    process names for itself, and without the cassette section, as in the run snapshot)."""
    return GatewaySetting(enabled=True, config_hash=gateway_config_hash(_shared_part(config)))


def worker_gateway_config(
    config: GatewayConfig,
    broker_url: str | None,
    stored: GatewaySetting | None = None,
    *,
    run_id: str | None = None,
) -> GatewayConfig:
    """The configuration a Celery worker's gateway runs a run's attempts with.

    ``config`` is the worker's own (its ``seatrial.yaml``: models, keys by variable name,
    limits, budgets). Rate limits must hold across workers, so when it names no
    ``gateway.redis_url`` the broker's Redis (``broker_url``) keeps them; with a broker that
    is not Redis and a model with ``rpm`` or ``tpm``, each worker would hold the limit on its
    own, and the log says so. ``stored`` is what the run stored (:func:`gateway_record`): a
    worker whose configuration hashes otherwise logs a warning naming the run.
    """
    if config.redis_url is None and broker_url and broker_url.startswith(_REDIS_SCHEMES):
        config = config.model_copy(update={"redis_url": broker_url})
    elif config.redis_url is None and any(m.rpm or m.tpm for m in config.models.values()):
        log.warning(
            "rate limits (rpm/tpm) hold per worker: the broker is not Redis and "
            "gateway.redis_url is unset; set gateway.redis_url in the workers' seatrial.yaml "
            "so every worker shares one limit"
        )
    expected = stored.config_hash if stored is not None else None
    if expected and expected != gateway_config_hash(_shared_part(config)):
        log.warning(
            "run %s: this worker's models:/gateway: configuration differs from the one the run "
            "was started with (hash %s); give every worker the coordinator's seatrial.yaml",
            run_id or "?",
            expected,
        )
    return config


def _shared_part(config: GatewayConfig) -> GatewayConfig:
    return config.model_copy(update={"redis_url": None})
