"""Posting turns to a plain ``http://`` agent: HTTP/1.1 on asyncio's own transports.

A turn is one small JSON POST answered by one small JSON body, usually on a kept-alive
connection to a local or nearby agent. aiohttp's pool (``seatrial.agent._transport``) spends
most of its ~0.2-0.3 ms a POST on what such a turn never uses (tracing signals, cookie jars,
redirects, streamed bodies), and importing it makes two TLS contexts, loading the system CA
bundle, although ``http://`` needs none (docs/performance.md, "Seatrial beside promptfoo").
So an ``http://`` agent reached without a proxy is posted to here: one write per request, the
answer read whole (``Content-Length``, chunked, or until the agent closes), the connection kept
for the next POST. ``https://`` agents and agents behind a proxy go through aiohttp.

What it reads as an error, in the words of :mod:`seatrial._http_client`, and so, through
``seatrial.agent._answer``, the httpx errors the adapter and its retries already read:

| here                                                  | :data:`~seatrial._http_client.Failure` |
|-------------------------------------------------------|-------------------------|
| connecting took longer than the connect timeout       | ``connect_timeout``     |
| no data from the agent for the timeout                | ``read_timeout``        |
| connection refused, host not found                    | ``unreachable``         |
| the connection closed inside the body                 | ``cut_short``           |
| closed before the answer's head, or not HTTP/1.x      | ``broken``              |
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from seatrial._http_client import Failure
from seatrial._version import __version__
from seatrial.agent._answer import (
    CONNECT_TIMEOUT_S,
    KEEPALIVE_EXPIRY_S,
    PAYLOAD_JSON,
    AgentAnswer,
    transport_error,
)

_HEAD_LIMIT = 64 * 1024
"""The most bytes an answer's status line and headers may take."""

_NO_BODY = frozenset((204, 304))


class _Failed(Exception):
    """What went wrong on one connection, before it is told in httpx's terms."""

    def __init__(self, kind: Failure, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class _Connection(asyncio.Protocol):
    """One TCP connection: one request at a time, its answer parsed as it arrives."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        read_timeout_s: float | None,
        request: httpx.Request,
    ) -> None:
        self._loop = loop
        self._read_timeout_s = read_timeout_s
        self._request = request
        self._transport: asyncio.Transport | None = None
        self._waiter: asyncio.Future[AgentAnswer] | None = None
        self._buffer = bytearray()
        self._timer: asyncio.TimerHandle | None = None
        self._last_read = 0.0
        self.closed = False
        self.idle_since = 0.0
        self._reset()

    def _reset(self) -> None:
        self._status = 0
        self._headers: tuple[tuple[bytes, bytes], ...] = ()
        self._body_at = -1  # where the body starts in the buffer; -1: head not read yet
        self._length = -1  # the body's length; -1: chunked or until closed
        self._chunked = False
        self._chunk_at = -1  # where the next chunk's size line starts; -1: at the body's start
        self._chunks: list[bytes] = []  # the chunks read whole so far
        self._keep_alive = True

    # --- asyncio.Protocol -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            self.close()  # an answer nobody asked for: the connection is not in step
            return
        self._buffer += data
        if self._timer is not None:
            self._last_read = self._loop.time()
        try:
            self._parse()
        except _Failed as exc:
            self._fail(exc)

    def eof_received(self) -> bool:
        return False  # close the transport; connection_lost settles the answer

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._stop_timer()
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._body_at >= 0 and self._length < 0 and not self._chunked:
            # An answer without a length ends when the agent closes the connection.
            self._answer(bytes(self._buffer[self._body_at :]))
        elif self._body_at >= 0:
            waiter.set_exception(
                _Failed("cut_short", "the agent closed the connection inside the answer's body")
            )
        else:
            waiter.set_exception(_Failed("broken", "Server disconnected"))

    # --- one request ------------------------------------------------------------------------

    def request(self, data: bytes) -> asyncio.Future[AgentAnswer]:
        """Send one whole request; the future of its answer."""
        assert self._transport is not None
        self._waiter = waiter = self._loop.create_future()
        self._buffer.clear()
        self._reset()
        self._transport.write(data)
        if self._read_timeout_s is not None:
            self._last_read = self._loop.time()
            self._timer = self._loop.call_at(
                self._last_read + self._read_timeout_s, self._check_read
            )
        return waiter

    def reusable(self) -> bool:
        """Whether the next request may go on this connection."""
        return not self.closed and self._keep_alive

    def close(self) -> None:
        """Close the connection; an answer awaited fails as broken."""
        self.closed = True
        self._stop_timer()
        if self._transport is not None:
            self._transport.close()
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(_Failed("broken", "Connection closed"))

    def _check_read(self) -> None:
        # One timer a request, moved on rather than replaced at each read.
        assert self._read_timeout_s is not None
        due = self._last_read + self._read_timeout_s
        if self._loop.time() < due:
            self._timer = self._loop.call_at(due, self._check_read)
            return
        self._timer = None
        self._fail(_Failed("read_timeout", f"no answer within {self._read_timeout_s} s"))

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fail(self, exc: _Failed) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(exc)
        self.close()

    def _answer(self, body: bytes) -> None:
        self._stop_timer()
        assert self._waiter is not None
        self._waiter.set_result(AgentAnswer(self._status, self._headers, body, self._request))

    # --- reading the answer -----------------------------------------------------------------

    def _parse(self) -> None:
        buffer = self._buffer
        while self._body_at < 0:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > _HEAD_LIMIT:
                    raise _Failed("broken", "the answer's headers are too long")
                return
            self._read_head(bytes(buffer[:end]))
            if 100 <= self._status < 200:  # an interim answer (100 Continue): the real one follows
                del buffer[: end + 4]
                self._reset()
                continue
            self._body_at = end + 4
        if self._chunked:
            body = self._dechunk()
            if body is not None:
                self._answer(body)
        elif self._length >= 0:
            if len(buffer) - self._body_at >= self._length:
                if len(buffer) - self._body_at > self._length:
                    self._keep_alive = False  # bytes past the answer: not in step any more
                self._answer(bytes(buffer[self._body_at : self._body_at + self._length]))

    def _read_head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        version, _, rest = lines[0].partition(b" ")
        code = rest[:3]
        if version not in (b"HTTP/1.1", b"HTTP/1.0") or len(code) != 3 or not code.isdigit():
            raise _Failed("broken", f"not an HTTP/1.1 answer: {lines[0][:100]!r}")
        self._status = int(code)
        self._keep_alive = version == b"HTTP/1.1"
        headers: list[tuple[bytes, bytes]] = []
        length: int | None = None
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not name or name != name.strip():
                raise _Failed("broken", f"a malformed header line: {line[:100]!r}")
            value = value.strip(b" \t")
            headers.append((name, value))
            lower = name.lower()
            if lower == b"content-length":
                if not value.isdigit() or (length is not None and length != int(value)):
                    raise _Failed("broken", f"a bad Content-Length: {value[:40]!r}")
                length = int(value)
            elif lower == b"transfer-encoding":
                self._chunked = value.lower().endswith(b"chunked")
            elif lower == b"connection":
                tokens = {token.strip() for token in value.lower().split(b",")}
                if b"close" in tokens:
                    self._keep_alive = False
                elif b"keep-alive" in tokens:
                    self._keep_alive = True
        self._headers = tuple(headers)
        if self._status in _NO_BODY:
            self._length = 0
        elif not self._chunked and length is not None:
            self._length = length
        elif not self._chunked:
            self._keep_alive = False  # the body runs until the agent closes

    def _dechunk(self) -> bytes | None:
        """The whole body once its last chunk (and trailers) arrived; None until then. Each
        chunk is read once, however many reads the body takes."""
        buffer = self._buffer
        at = self._chunk_at if self._chunk_at >= 0 else self._body_at
        while True:
            end = buffer.find(b"\r\n", at)
            if end < 0:
                return None
            size_text = bytes(buffer[at:end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise _Failed("broken", f"a bad chunk size: {size_text[:40]!r}") from None
            if size == 0:
                # The last chunk: its line, then trailer lines, then an empty line.
                finish = buffer.find(b"\r\n\r\n", end) + 4
                if finish < 4:
                    return None
                if len(buffer) > finish:
                    self._keep_alive = False
                return b"".join(self._chunks)
            start = end + 2
            if len(buffer) < start + size + 2:
                return None
            self._chunks.append(bytes(buffer[start : start + size]))
            at = self._chunk_at = start + size + 2


class PlainConnections:
    """One ``http://`` agent's connection pool: a connection per attempt in flight, each
    kept open for :data:`KEEPALIVE_EXPIRY_S` after its answer; made on first use, in the
    running loop. The same contract as ``AgentConnections`` (aiohttp's pool)."""

    def __init__(
        self,
        url: str,
        *,
        concurrency: int,
        headers: Mapping[str, str],
        timeout_s: float | None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"not a plain http:// URL: {url}")
        self._host = parts.hostname
        self._port = parts.port or 80
        self._timeout_s = timeout_s
        self._connect_s = min(timeout_s, CONNECT_TIMEOUT_S) if timeout_s else CONNECT_TIMEOUT_S
        self._request = httpx.Request("POST", url)  # named by errors and answers
        self._concurrency = max(1, concurrency)
        self._slots: asyncio.Semaphore | None = None
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host = parts.netloc.rpartition("@")[2]
        fields = {
            "host": ("Host", host),
            "accept": ("Accept", "*/*"),
            "user-agent": ("User-Agent", f"seatrial/{__version__}"),
            "content-type": ("Content-Type", "application/json"),
        }
        for name, value in headers.items():
            fields[name.lower()] = (name, value)
        for skipped in ("content-length", "transfer-encoding"):
            fields.pop(skipped, None)
        self._names = frozenset(fields)
        self._fields = fields
        self._start = f"POST {target} HTTP/1.1\r\n".encode()
        self._head = self._encode(list(fields.values()))

    @staticmethod
    def _encode(pairs: list[tuple[str, str]]) -> bytes:
        """Header lines for ``pairs``; a name or value holding a line break is refused."""
        text = "".join(f"{name}: {value}\r\n" for name, value in pairs)
        if text.count("\r") != len(pairs) or text.count("\n") != len(pairs):
            # What aiohttp says, for the same header: a header cannot hold a line break.
            raise ValueError(
                "Newline or carriage return character detected in HTTP status message or "
                "header. This is a potential security issue."
            )
        return text.encode()

    async def post(self, payload: Any, headers: Mapping[str, str]) -> AgentAnswer:
        """POST ``payload`` as JSON; the whole answer, or an httpx error."""
        data = PAYLOAD_JSON.encode(payload).encode()
        head = self._head
        if headers:
            if self._names.isdisjoint(name.lower() for name in headers):
                head += self._encode(list(headers.items()))
            else:
                fields = dict(self._fields)
                for name, value in headers.items():
                    fields[name.lower()] = (name, value)
                head = self._encode(list(fields.values()))
        request = b"".join((self._start, head, b"Content-Length: %d\r\n\r\n" % len(data), data))
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._concurrency)
        async with self._slots:
            connection = await self._connection()
            try:
                answer = await connection.request(request)
            except _Failed as exc:
                connection.close()
                self._open.discard(connection)
                raise transport_error(exc.kind, str(exc), self._request) from exc
            except BaseException:  # cancelled mid-answer: the connection is out of step
                connection.close()
                self._open.discard(connection)
                raise
            if connection.reusable():
                connection.idle_since = time.monotonic()
                self._idle.append(connection)
            else:
                connection.close()
                self._open.discard(connection)
            return answer

    async def _connection(self) -> _Connection:
        """The most recently used open connection, else a new one."""
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if not connection.closed and now - connection.idle_since < KEEPALIVE_EXPIRY_S:
                return connection
            connection.close()
            self._open.discard(connection)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._connect_s):
                _, connection = await loop.create_connection(
                    lambda: _Connection(loop, self._timeout_s, self._request),
                    self._host,
                    self._port,
                )
        except TimeoutError as exc:
            raise transport_error(
                "connect_timeout",
                f"Connection timeout to host {self._host}:{self._port}",
                self._request,
            ) from exc
        except OSError as exc:
            raise transport_error(
                "unreachable",
                f"Cannot connect to host {self._host}:{self._port} [{exc.strerror or exc}]",
                self._request,
            ) from exc
        self._open.add(connection)
        return connection

    async def aclose(self) -> None:
        """Close every connection."""
        for connection in list(self._open):
            connection.close()
        self._open.clear()
        self._idle.clear()
        await asyncio.sleep(0)  # let the transports finish closing
