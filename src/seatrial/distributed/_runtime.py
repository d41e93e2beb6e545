"""What a worker builds once per run, from the stored run: its cases, its agent, its judge
and its gateway.

The coordinator stores everything a worker needs (the run header with its settings, the
cases as run); the worker adds what only it may hold: secrets and endpoints from its own
``seatrial.yaml`` (named ``agents:``, ``models:``, ``judge:``) and environment. A named agent
is therefore resolved with the worker's configuration, so a header with an API key never
travels through the broker or the store.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from seatrial.agent import AgentAdapter, resolve_agent
from seatrial.config import Config
from seatrial.errors import ConfigError
from seatrial.i18n import gettext as _
from seatrial.record import DEFAULT_CONCURRENCY, RunInfo
from seatrial.run import CasePlan, JudgeRuntime, plan_cases
from seatrial.store import Store

if TYPE_CHECKING:
    from seatrial.gateway import Gateway, GatewayServer, RunGateway


@dataclass
class RunRuntime:
    """A run as one worker executes it."""

    info: RunInfo
    """The run's stored header."""
    cases: dict[str, CasePlan]
    """The run's cases by id, as stored when it started, each planned once for the worker's
    attempts of it."""
    adapter: AgentAdapter
    """The agent, resolved from the stored spec with the worker's configuration."""
    timeout_s: float | None
    """The run's per-attempt timeout."""
    judge: JudgeRuntime | None = None
    """The run's LLM judge (its model from the run, its endpoint from the worker's config)."""
    gateway: RunGateway | None = None
    """This worker's gateway for the run (with its own proxy), when the run uses one."""

    def attempt_judge(self) -> JudgeRuntime | None:
        """A judge runtime for one attempt: the run's judge and trust, review items of its own
        (stored with the attempt, which is why they are not shared)."""
        if self.judge is None:
            return None
        return JudgeRuntime(self.judge.judge, self.judge.trust, self.judge.rubrics)


async def _open_gateway(
    stack: contextlib.AsyncExitStack, store: Store, config: Config, info: RunInfo
) -> tuple[Gateway | None, GatewayServer | None]:
    """The gateway for the run's judge and, when the run asked for one (``--gateway``), this
    worker's own proxy in front of it. Each worker runs its own proxy; limits and budgets
    that must hold across workers are kept where every worker sees them: rate limits in
    Redis (the broker's unless ``gateway.redis_url`` is set), budgets in the store's ledger."""
    wants_proxy = info.settings.gateway is not None and info.settings.gateway.enabled
    if not wants_proxy and info.settings.judge is None:
        return None, None
    from seatrial.distributed._app import BROKER_URL_ENV
    from seatrial.gateway import Gateway, GatewayServer
    from seatrial.run import worker_gateway_config

    gateway_config = worker_gateway_config(
        config.gateway_config(),
        os.environ.get(BROKER_URL_ENV),
        info.settings.gateway,
        run_id=info.run_id,
    )
    gateway = Gateway(gateway_config, store=store, project_dir=config.project_dir)
    stack.push_async_callback(gateway.aclose)
    if not wants_proxy:
        return gateway, None
    server = await stack.enter_async_context(GatewayServer(gateway))
    return gateway, server


def _run_gateway(server: GatewayServer | None) -> RunGateway | None:
    """The run's gateway as its attempts use it: in process (``model:`` agents), and through
    this worker's proxy for agents that call it."""
    if server is None:
        return None
    from seatrial.gateway import RunGateway

    return RunGateway(server.gateway, server)


def _open_judge(store: Store, config: Config, info: RunInfo, gateway: Gateway) -> JudgeRuntime:
    from seatrial.judge import Judge

    recorded = info.settings.judge
    model = (recorded.model if recorded is not None else None) or ""
    if model not in config.models:
        raise ConfigError(
            _(
                "run {run} is judged by {model}, which this worker's seatrial.yaml ({file}) "
                "does not list under models:; start the worker in the project folder (or "
                "--project DIR) that defines it"
            ).format(run=info.run_id, model=repr(model), file=config.file or config.project_dir)
        )
    update: dict[str, object] = {"model": model}
    if recorded is not None and recorded.prompt_version:
        update["prompt_version"] = recorded.prompt_version
    settings = config.judge.model_copy(update=update)
    rubrics = dict(info.settings.rubrics)
    return JudgeRuntime.open(Judge(gateway, settings), store, rubrics)


@contextlib.asynccontextmanager
async def open_run_runtime(
    store: Store, run_id: str, config: Config, concurrency: int = DEFAULT_CONCURRENCY
) -> AsyncIterator[RunRuntime]:
    """Build the run's runtime on the running event loop; close its agent, judge and
    gateway when the block ends.

    Raises:
        RunNotFound: the run is not in ``store`` (the worker points at another store).
        SeatrialError: the agent, judge or gateway cannot be built with this worker's
            configuration.
    """
    info = store.get_run(run_id)
    cases = plan_cases(store.run_cases(run_id))
    timeout_s = info.settings.timeout_s
    async with contextlib.AsyncExitStack() as stack:
        adapter = resolve_agent(
            info.agent,
            agents=config.agents,
            base_dir=config.project_dir,
            agents_dir=config.project_dir,
            concurrency=concurrency,
            timeout_s=timeout_s,
            models=config.models,
        )
        stack.push_async_callback(adapter.aclose)
        gateway, server = await _open_gateway(stack, store, config, info)
        judge = (
            _open_judge(store, config, info, gateway)
            if gateway and info.settings.judge is not None
            else None
        )
        yield RunRuntime(
            info=info,
            cases=cases,
            adapter=adapter,
            timeout_s=timeout_s,
            judge=judge,
            gateway=_run_gateway(server),
        )
