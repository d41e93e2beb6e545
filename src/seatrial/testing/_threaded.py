"""The lifecycle shared by Seatrial's local test servers: serve on 127.0.0.1 in a thread."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class TrackedHandler(BaseHTTPRequestHandler):
    """A handler whose open connections the server can close when it stops.

    Its server has a ``state`` with ``lock`` and ``connections`` (see :class:`ServedInThread`).
    """

    protocol_version = "HTTP/1.1"
    server: Any

    def setup(self) -> None:
        super().setup()
        with self.server.state.lock:
            self.server.state.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.state.lock:
            self.server.state.connections.discard(self.connection)
        with contextlib.suppress(OSError):  # the client may have gone (a timeout test)
            super().finish()


class ServedInThread:
    """Start, stop and ``with`` / ``async with`` for a server running in a background thread.

    Subclasses set ``_state`` (with ``stopping``, a ``threading.Event``; ``lock``; and
    ``connections``, the open sockets) and implement :meth:`_new_server` and
    :meth:`_url_for`.
    """

    _state: Any
    _thread_name = "seatrial-test-server"

    def __init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._url: str | None = None

    def _new_server(self) -> ThreadingHTTPServer:
        """A server bound to a free port on 127.0.0.1."""
        raise TypeError(f"{type(self).__name__} must define _new_server")

    def _url_for(self, host: str, port: int) -> str:
        """The URL users are given once the server listens."""
        return f"http://{host}:{port}"

    def start(self) -> Self:
        """Bind a free port and serve in a background thread."""
        if self._server is None:
            self._state.stopping.clear()
            self._server = self._new_server()
            host, port = self._server.server_address[:2]
            self._url = self._url_for(str(host), int(port))
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=self._thread_name,
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Release delayed and hung requests, close open connections and stop serving."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._state.stopping.set()
        server.shutdown()
        with self._state.lock:
            connections = list(self._state.connections)
        for connection in connections:
            # Idle keep-alive connections block their handler thread in a read.
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        server.server_close()
        thread.join()
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.to_thread(self.stop)
