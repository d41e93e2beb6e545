"""Serving the proxy with uvicorn inside the caller's event loop.

``seatrial run --gateway`` runs the proxy on the runner's own loop: async agents and the
proxy share one thread, and the spans a proxied call records land on the attempt's recorder
without crossing threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import Iterator
from types import TracebackType

import uvicorn

from seatrial.errors import ConfigError, GatewayError
from seatrial.gateway._attempts import AttemptBinding, AttemptRegistry
from seatrial.gateway._gateway import Gateway
from seatrial.gateway._proxy import ProxyApp
from seatrial.i18n import gettext as _
from seatrial.trace import TraceRecorder


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its signal handlers: the host program (the runner) owns Ctrl-C."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def listening_socket(host: str, port: int, *, backlog: int = 2048) -> socket.socket:
    """A TCP socket listening on ``host:port`` (port 0: a free one), for uvicorn to serve on.

    Binding before anything is printed or started is what lets ``seatrial serve`` and
    ``seatrial gateway serve`` refuse a port in use as bad input (exit 2), naming it and the
    way out, instead of announcing an address and failing inside uvicorn.

    Raises:
        ConfigError: the address cannot be listened on (in use, not this machine's).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family, backlog=backlog)
    except OSError as exc:
        shown = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
        # create_server's own strerror repeats the address: say the system's reason alone.
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        raise ConfigError(
            _(
                "cannot listen on {address}: {why}; give another --port (--port 0 takes any "
                "free one), or stop what holds it"
            ).format(address=shown, why=why)
        ) from exc
    # asyncio sets TCP_NODELAY only on sockets it made itself (proto IPPROTO_TCP); without
    # it, keep-alive answers wait ~40 ms for the client's delayed ACK. Accepted connections
    # inherit the option from the listening socket.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def uvicorn_config(app: object, *, backlog: int = 2048) -> uvicorn.Config:
    """uvicorn settings for the proxy: quiet, no lifespan, no access log, a deep backlog,
    long keep-alive."""
    return uvicorn.Config(
        app,  # type: ignore[arg-type]
        lifespan="off",
        access_log=False,
        log_config=None,
        log_level="warning",
        backlog=backlog,
        # uvicorn's 5 s default closes a kept-alive connection whose next request is still
        # queued behind a busy event loop: under load the client then reads a reset
        # (benchmarks/gateway_overhead.py at 200 concurrent streams). 75 s, as nginx.
        timeout_keep_alive=75,
        timeout_graceful_shutdown=5,
    )


class GatewayServer:
    """The proxy listening on ``host:port`` (port 0: a free one) in the running event loop.

    ::

        async with GatewayServer(gateway) as server:
            client = openai.AsyncOpenAI(base_url=server.base_url, api_key="unused")
            with server.attempt(recorder, run_id, case_id, 1) as base_url:
                ...  # calls through base_url land in `recorder`
    """

    def __init__(
        self,
        gateway: Gateway,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        registry: AttemptRegistry | None = None,
        handle_signals: bool = False,
    ) -> None:
        """``handle_signals``: let uvicorn stop gracefully on Ctrl-C (``gateway serve``);
        off when a host program (the runner) owns the signals."""
        self.gateway = gateway
        self.handle_signals = handle_signals
        self.proxy = ProxyApp(gateway, registry)
        self.host = host
        self.port = port
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def registry(self) -> AttemptRegistry:
        """Attempts whose calls the proxy attributes."""
        return self.proxy.registry

    @property
    def url(self) -> str:
        """``http://host:port`` once started."""
        if self._server is None:
            raise GatewayError("the gateway server is not started; use `async with` or start()")
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL of the shared (attempt-less) endpoint: ``{url}/v1``."""
        return f"{self.url}/v1"

    def attempt_base_url(self, binding: AttemptBinding) -> str:
        """The OpenAI base URL of one attempt: ``{url}/a/{token}/v1``."""
        return f"{self.url}/a/{binding.token}/v1"

    @contextlib.contextmanager
    def attempt(
        self, recorder: TraceRecorder, run_id: str, case_id: str, attempt: int
    ) -> Iterator[str]:
        """Register an attempt for a block; yields its base URL."""
        with self.registry.attempt(recorder, run_id, case_id, attempt) as binding:
            try:
                yield self.attempt_base_url(binding)
            finally:
                self.gateway.forget_attempt(run_id, case_id, attempt)

    async def end_calls(self, recorder: TraceRecorder) -> None:
        """Cancel (and wait for) the model calls still in flight of the attempt recording
        into ``recorder``: an agent that timed out leaves them behind."""
        await self.registry.end_calls(recorder)

    async def start(self) -> GatewayServer:
        """Bind and serve in the running loop; returns once it accepts connections."""
        if self._server is not None:
            return self
        sock = listening_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        server_class = uvicorn.Server if self.handle_signals else _EmbeddedServer
        server = server_class(uvicorn_config(self.proxy.app))
        self._server = server
        self._task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
        while not server.started:
            if self._task.done():
                self._server = None
                sock.close()
                await self._task  # raises what stopped it
                raise GatewayError("the gateway server stopped while starting")
            await asyncio.sleep(0.005)
        self._socket = sock
        return self

    async def wait(self) -> None:
        """Serve until stopped (by :meth:`stop`, or Ctrl-C with ``handle_signals``)."""
        if self._task is not None:
            await asyncio.shield(self._task)

    async def stop(self) -> None:
        """Stop accepting, finish requests in flight, close the socket."""
        server, task = self._server, self._task
        if server is None or task is None:
            return
        server.should_exit = True
        await task
        self._socket.close()
        self._server = None
        self._task = None

    async def __aenter__(self) -> GatewayServer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()
