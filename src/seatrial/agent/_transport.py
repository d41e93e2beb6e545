"""How the HTTP agent's turns reach the agent: aiohttp's connection pool, answered in httpx's
terms.

At concurrency 64, 1,000 POSTs to a local agent cost about 2.1 s of CPU through httpx and
httpcore (whose pool walks every pooled connection on every request), 0.7 s through httpx
over aiohttp's pool (``httpx_aiohttp``) and 0.3 s through aiohttp alone, which also keeps
every connection open for the next POST (docs/performance.md,
``benchmarks/http_agent_pool.py --what clients``). So a turn is posted with aiohttp, and what
comes back is what the adapter and its retries (``seatrial.agent._retry``) already read: an
``httpx.Response`` holding the answer, or an httpx error:

| aiohttp, as :func:`seatrial._http_client.failure` reads it | httpx                  |
|-------------------------------------------------------------|------------------------|
| ``connect_timeout``: connect timed out                       | ``ConnectTimeout``     |
| ``read_timeout``: no answer within the timeout               | ``ReadTimeout``        |
| ``unreachable``: connection refused, host not found          | ``ConnectError``       |
| ``broken``: connection closed or reset, bad answer           | ``RemoteProtocolError``|
| ``cut_short``: body cut short                                | ``ReadError``          |

The adapter says "did not answer in time" for the timeouts, "agent unreachable" for
``ConnectError`` and "HTTP exchange failed" for the others.

A refused and a lost connection are posted again under the agent's retry settings.
A test plugs an ``httpx`` transport into the adapter instead (``HttpAgent(transport=...)``),
which then posts through an ``httpx.AsyncClient``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp
import httpx

from seatrial._http_client import failure, proxy_for, ssl_for
from seatrial.agent._answer import (
    CONNECT_TIMEOUT_S,
    KEEPALIVE_EXPIRY_S,
    PAYLOAD_JSON,
    AgentAnswer,
    transport_error,
)


def httpx_error(exc: Exception, request: httpx.Request) -> httpx.TransportError:
    """The httpx error an aiohttp (or asyncio) error stands for (see the module's table)."""
    return transport_error(failure(exc), str(exc) or type(exc).__name__, request)


class AgentConnections:
    """One agent's connection pool: a connection per attempt in flight, each kept open for
    :data:`KEEPALIVE_EXPIRY_S` after its answer; made on first use, in the running loop."""

    def __init__(
        self,
        url: str,
        *,
        concurrency: int,
        headers: Mapping[str, str],
        timeout_s: float | None,
    ) -> None:
        self._url = url
        self._concurrency = max(1, concurrency)
        self._headers = {"content-type": "application/json", **headers}
        connect = min(timeout_s, CONNECT_TIMEOUT_S) if timeout_s else CONNECT_TIMEOUT_S
        # Waiting for a free connection is not the agent's timeout: only connecting and
        # reading are timed, as under httpx.
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=timeout_s)
        self._proxy = proxy_for(url)
        self._ssl = ssl_for(url)
        self._request = httpx.Request("POST", url)  # named by errors and responses
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self._concurrency, keepalive_timeout=KEEPALIVE_EXPIRY_S, ssl=self._ssl
            )
            # auto_decompress off: the body is decoded once, by httpx.Response, as before.
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers=self._headers,
                timeout=self._timeout,
                auto_decompress=False,
                trust_env=False,
            )
        return self._session

    async def post(self, payload: Any, headers: Mapping[str, str]) -> AgentAnswer:
        """POST ``payload`` as JSON; the whole answer, or an httpx error."""
        data = PAYLOAD_JSON.encode(payload).encode()
        try:
            async with self._open().post(
                self._url, data=data, headers=headers or None, proxy=self._proxy
            ) as answer:
                body = await answer.read()
                return AgentAnswer(answer.status, answer.raw_headers, body, self._request)
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise httpx_error(exc, self._request) from exc

    async def aclose(self) -> None:
        """Close every connection."""
        if self._session is not None:
            await self._session.close()
            self._session = None
