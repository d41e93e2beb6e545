"""What Seatrial's aiohttp clients share: which proxy and TLS settings a URL gets, and what
an aiohttp failure means.

Two clients post over aiohttp: the HTTP agent adapter (``seatrial.agent._transport``, turns
to the agent under test) and the gateway's OpenAI-compatible provider
(``seatrial.gateway._providers._openai_http``, calls to the model). Each answers in its own
terms (httpx errors for the adapter's retries, ``ProviderError`` kinds for the gateway's
fallback), both from the one reading here:

| aiohttp (or asyncio)                      | :data:`Failure`      |
|-------------------------------------------|----------------------|
| connect timed out                         | ``connect_timeout``  |
| no answer within the timeout              | ``read_timeout``     |
| connection refused, host not found        | ``unreachable``      |
| body cut short                            | ``cut_short``        |
| connection closed or reset, bad answer    | ``broken``           |
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.request
from typing import Literal
from urllib.parse import urlsplit

Failure = Literal["connect_timeout", "read_timeout", "unreachable", "cut_short", "broken"]
"""What went wrong with a request, in the words both clients translate from."""


def failure(exc: BaseException) -> Failure:
    """What an aiohttp (or asyncio timeout) error says went wrong (see the module's table)."""
    import aiohttp  # here: a plain http:// agent's posts never load it (seatrial.agent._plain)

    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return "connect_timeout"
    if isinstance(exc, asyncio.TimeoutError):
        return "read_timeout"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return "unreachable"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "cut_short"
    return "broken"


def proxy_for(url: str) -> str | None:
    """The proxy ``HTTP(S)_PROXY`` names for ``url`` unless ``NO_PROXY`` exempts it.

    Read once per client: aiohttp's ``trust_env`` would read the environment again on every
    request, in a thread (two thread-pool hops per POST).
    """
    parts = urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy is None or urllib.request.proxy_bypass(parts.netloc):
        return None
    return proxy


def ssl_for(url: str) -> ssl.SSLContext | bool:
    """TLS for ``url``: the certificates httpx would trust (its CA bundle, ``SSL_CERT_FILE``)
    for https, so a server httpx reached is reached the same way; plain http needs none."""
    if not url.startswith("https:"):
        return True
    import httpx

    return httpx.create_ssl_context()
