"""A real HTTP server speaking the agent protocol on 127.0.0.1, scripted by the test.

::

    def agent(request: dict) -> dict | str:
        return {"response": f"echo: {request['message']}", "tools_called": [...]}

    with AgentServer(agent) as server:          # or: async with AgentServer(...)
        adapter = resolve_agent(server.url)
        ...
        assert server.requests[0].body["session_id"] == ...

A script is a function (request body -> reply) or a mapping message -> reply. A reply is a
string (the response text), a dict (protocol fields; the missing ones are filled in),
:class:`HttpReply` (any status and raw body: 500s, malformed JSON) or :class:`Hang` (hold
the request without answering, for timeout tests).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from seatrial.testing._threaded import ServedInThread, TrackedHandler
from seatrial.trace import new_id


@dataclass(frozen=True)
class HttpReply:
    """Answer with this status and raw body as is (no protocol fields added)."""

    status: int = 500
    body: str | bytes = "internal error"
    content_type: str = "text/plain; charset=utf-8"
    headers: Mapping[str, str] = field(default_factory=dict)
    """Further response headers (``Retry-After`` ...)."""


@dataclass(frozen=True)
class Hang:
    """Hold the request without answering for ``seconds`` (None: until the server stops)."""

    seconds: float | None = None


@dataclass(frozen=True)
class AgentRequest:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: Any
    """The parsed JSON body (None when it was not JSON)."""


Reply = str | Mapping[str, Any] | HttpReply | Hang
Script = Callable[[dict[str, Any]], Reply] | Mapping[str, Reply]


@dataclass
class _State:
    script: Script
    requests: list[AgentRequest] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    connections: set[socket.socket] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _protocol_reply(request: Mapping[str, Any], reply: Mapping[str, Any]) -> dict[str, Any]:
    """Fill in the protocol fields a scripted reply left out."""
    body = dict(reply)
    body.setdefault("session_id", request.get("session_id"))
    body.setdefault("trace_id", new_id(128))
    body.setdefault("finished", True)
    body.setdefault("tools_called", [])
    body.setdefault("usage", {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0})
    return body


class _Handler(TrackedHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: tests read ``requests``, not a log."""

    def _send(
        self, status: int, body: bytes, content_type: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # the name http.server dispatches to
        state = self.server.state
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            request = json.loads(raw)
        except ValueError:
            request = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        with state.lock:
            state.requests.append(AgentRequest(self.path, headers, request))
        reply = self._script(request if isinstance(request, dict) else {})
        if isinstance(reply, Hang):
            state.stopping.wait(reply.seconds)
            self.close_connection = True
            return
        if isinstance(reply, HttpReply):
            data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            self._send(reply.status, data, reply.content_type, reply.headers)
            return
        if isinstance(reply, str):
            reply = {"response": reply}
        body = _protocol_reply(request if isinstance(request, dict) else {}, reply)
        self._send(200, json.dumps(body, ensure_ascii=False).encode(), "application/json")

    def _script(self, request: dict[str, Any]) -> Reply:
        script = self.server.state.script
        if callable(script):
            try:
                return script(request)
            except Exception as exc:  # a broken script must show in the test, not hang it
                return HttpReply(500, f"the AgentServer script raised {type(exc).__name__}: {exc}")
        message = request.get("message")
        if isinstance(message, str) and message in script:
            return script[message]
        return HttpReply(500, f"AgentServer has no reply scripted for message {message!r}")


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True
    request_queue_size = 256

    def __init__(self, state: _State) -> None:
        self.state = state
        super().__init__(("127.0.0.1", 0), _Handler)


class AgentServer(ServedInThread):
    """An agent-protocol server on 127.0.0.1 at a free port, run in a background thread."""

    _thread_name = "seatrial-agent-server"
    _state: _State

    def __init__(self, script: Script, *, path: str = "/chat") -> None:
        super().__init__()
        self._state = _State(script)
        self._path = path if path.startswith("/") else f"/{path}"

    def _new_server(self) -> _Server:
        return _Server(self._state)

    def _url_for(self, host: str, port: int) -> str:
        return f"http://{host}:{port}{self._path}"

    @property
    def url(self) -> str:
        """The URL to give the HTTP adapter, e.g. ``http://127.0.0.1:54321/chat``.

        It stays readable after the server stops (nothing listens there any more).
        """
        if self._url is None:
            raise RuntimeError("the AgentServer is not started; use it in a `with` block")
        return self._url

    @property
    def requests(self) -> list[AgentRequest]:
        """Every request received so far, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)
