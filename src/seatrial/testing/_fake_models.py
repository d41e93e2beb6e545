"""Real model API servers on 127.0.0.1, scripted by the test: OpenAI's and Anthropic's.

::

    with FakeOpenAI(["hello", FakeReply(status=429), FakeReply(tool_calls=[...])]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k")
        ...
        assert server.requests[0].body["model"] == "gpt-4o"

A script is one reply (served to every request), a sequence of replies (served in order; a
request past the end gets HTTP 500 saying so) or a function (request body -> reply); None
echoes the last user message. A reply is a string (the answer text), :class:`FakeReply`
(text, tool calls, usage, status, delays, a malformed body), :class:`HttpReply` (any raw
answer) or :class:`Hang`. Streaming requests (``"stream": true``) get server-sent events,
usage last when the client asks for it. Embeddings (``/v1/embeddings``) are deterministic
vectors derived from each text (:func:`fake_embedding`), so equal texts embed equally.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from seatrial.testing._agent_server import Hang, HttpReply
from seatrial.testing._fake_wire import (
    FakeReply,
    _AnthropicWire,
    _OpenAIWire,
    _Wire,
)
from seatrial.testing._threaded import ServedInThread, TrackedHandler


@dataclass(frozen=True)
class ModelRequest:
    """One request a fake model server received."""

    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: Any
    """The parsed JSON body (None when it was not JSON)."""


Reply = str | FakeReply | HttpReply | Hang
Script = Reply | Sequence[Reply] | Callable[[dict[str, Any]], Reply] | None

_MALFORMED = b'{"this is": not the API\'s JSON'


@dataclass
class _State:
    wire: _Wire
    script: Script
    dims: int
    requests: list[ModelRequest] = field(default_factory=list)
    served: int = 0
    """Chat requests answered from the script so far (the position in a sequence)."""
    stopping: threading.Event = field(default_factory=threading.Event)
    connections: set[socket.socket] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(TrackedHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: tests read ``requests``, not a log."""

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, status: int, body: object) -> None:
        self._send(status, json.dumps(body, ensure_ascii=False).encode())

    def do_POST(self) -> None:  # the name http.server dispatches to
        state = self.server.state
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?", 1)[0]
        with state.lock:
            state.requests.append(ModelRequest(path, headers, body))
        body = body if isinstance(body, dict) else {}
        try:
            route = state.wire.routes().get(path)
            if route == "embeddings" and isinstance(state.wire, _OpenAIWire):
                self._send_json(200, state.wire.embeddings(body, state.dims))
            elif route == "chat":
                self._chat(body)
            else:
                message = f"{state.wire.name} does not serve {path}"
                self._send_json(404, state.wire.error_body(404, message))
        except OSError:
            self.close_connection = True  # the client hung up mid-answer; nothing to tell

    def _chat(self, body: dict[str, Any]) -> None:
        state = self.server.state
        with state.lock:
            state.served += 1
            n = state.served
        reply = self._script(body, n)
        if isinstance(reply, Hang):
            state.stopping.wait(reply.seconds)
            self.close_connection = True
            return
        if isinstance(reply, HttpReply):
            data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            self._send(reply.status, data, reply.content_type)
            return
        if isinstance(reply, str):
            reply = FakeReply(text=reply)
        if reply.delay_s and state.stopping.wait(reply.delay_s):
            self.close_connection = True
            return
        if reply.status != 200:
            message = reply.error or f"{state.wire.name} was scripted to answer HTTP {reply.status}"
            self._send_json(reply.status, state.wire.error_body(reply.status, message))
        elif body.get("stream"):
            self._stream(body, reply, n)
        elif reply.malformed:
            self._send(200, _MALFORMED)
        else:
            self._send_json(200, state.wire.chat(body, reply, n))

    def _stream(self, body: dict[str, Any], reply: FakeReply, n: int) -> None:
        stopping = self.server.state.stopping
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = self.server.state.wire.events(body, reply, n)
        for number, (name, data) in enumerate(events):
            if number and reply.chunk_delay_s and stopping.wait(reply.chunk_delay_s):
                self.close_connection = True
                return
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            if reply.malformed and number == 1:
                text = _MALFORMED.decode()
            frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
            self._chunk(frame.encode())
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _script(self, body: dict[str, Any], n: int) -> Reply:
        state = self.server.state
        script = state.script
        if script is None:
            return state.wire.default_text(body)
        if callable(script):
            try:
                return script(body)
            except Exception as exc:  # a broken script must show in the test, not hang it
                name = state.wire.name
                return HttpReply(500, f"the {name} script raised {type(exc).__name__}: {exc}")
        if isinstance(script, str | FakeReply | HttpReply | Hang):
            return script
        if n <= len(script):
            return script[n - 1]
        message = f"{state.wire.name} has no reply scripted for request {n} (it has {len(script)})"
        return HttpReply(500, json.dumps(state.wire.error_body(500, message)), "application/json")


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True
    request_queue_size = 512

    def __init__(self, state: _State) -> None:
        self.state = state
        super().__init__(("127.0.0.1", 0), _Handler)


class _FakeModelServer(ServedInThread):
    """A model API server on 127.0.0.1 at a free port, run in a background thread."""

    _wire: type[_Wire]
    _base_path = ""
    _state: _State

    def __init__(self, script: Script = None, *, embedding_dims: int = 8) -> None:
        super().__init__()
        self._state = _State(self._wire(), script, embedding_dims)
        self._thread_name = f"seatrial-{self._state.wire.name}"

    def _new_server(self) -> _Server:
        return _Server(self._state)

    @property
    def url(self) -> str:
        """The server's root, e.g. ``http://127.0.0.1:54321`` (readable after it stops)."""
        if self._url is None:
            raise RuntimeError(f"the {type(self).__name__} is not started; use it in a `with`")
        return self._url

    @property
    def base_url(self) -> str:
        """The base URL the provider's SDK takes (``ModelConfig.base_url``)."""
        return self.url + self._base_path

    @property
    def requests(self) -> list[ModelRequest]:
        """Every request received so far, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def script(self) -> Script:
        """The script; setting it starts a sequence from its first reply again."""
        return self._state.script

    @script.setter
    def script(self, script: Script) -> None:
        with self._state.lock:
            self._state.script = script
            self._state.served = 0

    def clear(self) -> None:
        """Forget the requests received (the script position is kept)."""
        with self._state.lock:
            self._state.requests.clear()


class FakeOpenAI(_FakeModelServer):
    """OpenAI's API on 127.0.0.1: ``/v1/chat/completions`` (JSON and SSE) and ``/v1/embeddings``.

    ``base_url`` ends in ``/v1``, as ``openai.AsyncOpenAI(base_url=...)`` expects.
    """

    _wire = _OpenAIWire
    _base_path = "/v1"


class FakeAnthropic(_FakeModelServer):
    """Anthropic's Messages API on 127.0.0.1: ``/v1/messages`` (JSON and SSE).

    ``base_url`` is the root, as ``anthropic.AsyncAnthropic(base_url=...)`` expects.
    """

    _wire = _AnthropicWire
