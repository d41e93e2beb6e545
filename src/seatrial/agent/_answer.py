"""An agent's answer to one POST, and a failed POST, in the terms the adapter reads: the names
of ``httpx.Response`` (:class:`AgentAnswer`) and httpx's errors (:func:`transport_error`).

Both of the HTTP agent's pools hand these back: aiohttp's (``seatrial.agent._transport``,
``https://`` agents and agents behind a proxy) and the plain HTTP/1.1 one
(``seatrial.agent._plain``, ``http://`` agents), so the adapter and its retries
(``seatrial.agent._retry``) read one kind of answer and one kind of error from either:

| :data:`seatrial._http_client.Failure` | httpx                   |
|---------------------------------------|-------------------------|
| ``connect_timeout``                   | ``ConnectTimeout``      |
| ``read_timeout``                      | ``ReadTimeout``         |
| ``unreachable``                       | ``ConnectError``        |
| ``broken``                            | ``RemoteProtocolError`` |
| ``cut_short``                         | ``ReadError``           |
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from seatrial._http_client import Failure

KEEPALIVE_EXPIRY_S = 60.0
"""How long an idle connection to the agent stays open for the next POST (both pools)."""

CONNECT_TIMEOUT_S = 10.0
"""The longest wait for a TCP (and TLS) connection to the agent, under a shorter timeout
(both pools)."""

PAYLOAD_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""The request body's encoder, made once (``json.dumps`` with options makes one per call)."""

_HTTPX_ERRORS: dict[Failure, type[httpx.TransportError]] = {
    "connect_timeout": httpx.ConnectTimeout,
    "read_timeout": httpx.ReadTimeout,
    "unreachable": httpx.ConnectError,
    "cut_short": httpx.ReadError,
    "broken": httpx.RemoteProtocolError,
}


def transport_error(kind: Failure, message: str, request: httpx.Request) -> httpx.TransportError:
    """The httpx error that tells a failed POST of ``kind`` (see the module's table)."""
    return _HTTPX_ERRORS[kind](message, request=request)


class AgentAnswer:
    """An agent's answer to one POST: the names of ``httpx.Response`` the adapter and its
    retries read, and nothing else made until it is read.

    An ``httpx.Response`` (its headers parsed, its stream set up) took several times what
    decoding the body did, for every turn of every attempt; the answer keeps the raw headers
    and body instead. The headers and the text, read only on the retry and error paths, are
    httpx's own when asked for, so they read as before.
    """

    __slots__ = ("_raw_headers", "_request", "content", "status_code")

    def __init__(
        self,
        status_code: int,
        raw_headers: tuple[tuple[bytes, bytes], ...],
        content: bytes,
        request: httpx.Request,
    ) -> None:
        self.status_code = status_code
        self.content = content
        self._raw_headers = raw_headers
        self._request = request

    def json(self) -> Any:
        """The body parsed as JSON (what ``httpx.Response.json`` does)."""
        return json.loads(self.content)

    @property
    def headers(self) -> httpx.Headers:
        """The answer's headers, as httpx reads them."""
        return httpx.Headers(self._raw_headers)

    @property
    def text(self) -> str:
        """The body as text, decoded as httpx decodes it."""
        return self.as_httpx().text

    def as_httpx(self) -> httpx.Response:
        """The same answer as an ``httpx.Response``."""
        return httpx.Response(
            self.status_code, headers=self._raw_headers, content=self.content, request=self._request
        )

    async def aclose(self) -> None:
        """Nothing to release: the body was read whole and the connection went back."""
