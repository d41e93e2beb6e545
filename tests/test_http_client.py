"""One reading of aiohttp's failures for both aiohttp clients: the HTTP agent's transport
answers it as httpx errors, the gateway's OpenAI provider as ProviderError kinds."""

from __future__ import annotations

import asyncio
import socket

import aiohttp
import httpx
import pytest

from seatrial._http_client import failure
from seatrial.agent._transport import httpx_error
from seatrial.errors import ProviderError
from seatrial.gateway import ModelConfig
from seatrial.gateway._providers import OpenAIProvider
from seatrial.gateway._types import ChatRequest, Message


def refused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def post_error(url: str) -> Exception:
    async with aiohttp.ClientSession() as session:
        try:
            async with session.post(url, data=b"{}") as answer:
                await answer.read()
        except aiohttp.ClientError as exc:
            return exc
    raise AssertionError("the post did not fail")


async def test_a_refused_connection_is_unreachable_for_both_clients() -> None:
    url = f"http://127.0.0.1:{refused_port()}/v1"
    exc = await post_error(f"{url}/chat/completions")
    assert failure(exc) == "unreachable"
    assert isinstance(httpx_error(exc, httpx.Request("POST", url)), httpx.ConnectError)
    provider = OpenAIProvider(base_url=url, key="unused")
    model = ModelConfig(name="gone", model="m", base_url=url)
    request = ChatRequest(messages=[Message(role="user", content="hi")])
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.chat(request, model, first_byte_timeout_s=5, timeout_s=5)
    finally:
        await provider.aclose()
    assert (caught.value.kind, caught.value.retryable) == ("connection", True)


async def test_a_server_that_hangs_up_before_answering_is_a_broken_exchange() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        exc = await post_error(f"http://127.0.0.1:{port}/")
    assert failure(exc) == "broken"
    translated = httpx_error(exc, httpx.Request("POST", f"http://127.0.0.1:{port}/"))
    assert isinstance(translated, httpx.RemoteProtocolError)
