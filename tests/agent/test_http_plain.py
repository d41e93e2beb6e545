"""The plain HTTP/1.1 pool of ``http://`` agents (seatrial.agent._plain): the answers HTTP/1.1
allows read whole, the request the agent receives, and each failure told as the httpx error
the adapter and its retries read (the same kinds aiohttp's pool gives).

Each test's agent is raw asyncio writing the bytes under test, so what is checked is the
wire, not a server library's choices.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx
import pytest

from seatrial.agent import AgentRetry, HttpAgent, _plain
from seatrial.agent._plain import PlainConnections
from seatrial.case import Case
from seatrial.errors import AgentError
from tests.agent._drive import drive, make_context

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
OK = b'{"response": "ok"}'


async def read_request(reader: asyncio.StreamReader) -> tuple[list[bytes], bytes]:
    """One request: its head's lines and its body."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head[:-4].split(b"\r\n")
    length = next(
        int(line.split(b":", 1)[1]) for line in lines if line.lower().startswith(b"content-length:")
    )
    return lines, await reader.readexactly(length)


def answered(body: bytes = OK, status: bytes = b"200 OK", extra: bytes = b"") -> bytes:
    """An answer with a Content-Length."""
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: application/json\r\n"
        + extra
        + b"content-length: %d\r\n\r\n" % len(body)
        + body
    )


@asynccontextmanager
async def agent(handle: Handler) -> AsyncIterator[str]:
    """``handle`` serving each connection on 127.0.0.1; yields the URL to post to."""
    writers: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        await handle(reader, writer)

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/chat?v=1"
    finally:
        server.close()
        for writer in writers:  # a handler still waiting for the client's next request
            writer.close()
        await server.wait_closed()


async def post(url: str, timeout_s: float | None = 5.0, times: int = 1) -> list[httpx.Response]:
    """POST ``{"message": "hi"}`` ``times`` in turn on one pool; the answers as httpx reads them."""
    pool = PlainConnections(url, concurrency=1, headers={}, timeout_s=timeout_s)
    try:
        return [(await pool.post({"message": "hi"}, {})).as_httpx() for _ in range(times)]
    finally:
        await pool.aclose()


async def test_the_request_names_the_path_host_type_and_length_and_carries_the_headers() -> None:
    seen: list[tuple[list[bytes], bytes]] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await read_request(reader))
        writer.write(answered())
        await writer.drain()
        writer.close()

    async with agent(handle) as url:
        pool = PlainConnections(
            url, concurrency=1, headers={"Authorization": "Bearer t", "accept": "x/y"}, timeout_s=5
        )
        try:
            await pool.post({"message": "café"}, {"traceparent": "00-ab-cd-01"})
        finally:
            await pool.aclose()
    (lines, body), port = seen[0], url.split(":")[2].split("/")[0]
    assert lines[0] == b"POST /chat?v=1 HTTP/1.1"
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:])}
    assert headers[b"host"] == f"127.0.0.1:{port}".encode()
    assert headers[b"content-type"] == b"application/json"
    assert headers[b"authorization"] == b"Bearer t"
    assert headers[b"accept"] == b"x/y"  # a configured header replaces the default
    assert headers[b"traceparent"] == b"00-ab-cd-01"
    assert headers[b"user-agent"].startswith(b"seatrial/")
    assert int(headers[b"content-length"]) == len(body)
    assert json.loads(body) == {"message": "café"}
    assert len(lines) == 1 + len(headers)  # no header sent twice


async def test_one_connection_carries_the_posts_in_turn_until_the_agent_says_close() -> None:
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        for number in range(2):
            await read_request(reader)
            writer.write(answered(extra=b"connection: close\r\n" if number == 1 else b""))
            await writer.drain()
        writer.close()

    async with agent(handle) as url:
        answers = await post(url, times=4)
    assert [a.json() for a in answers] == [{"response": "ok"}] * 4
    assert connections == 2


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
        b'5;note=x\r\n{"res\r\nd\r\nponse": "ok"}\r\n0\r\n\r\n',
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'12\r\n{"response": "ok"}\r\n0\r\nx-trailer: 1\r\n\r\n',
        b"HTTP/1.1 100 Continue\r\n\r\n" + answered(),
        b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n" + OK,
    ],
    ids=["chunked", "chunked-trailers", "interim-100", "until-closed"],
)
async def test_every_way_http_1_1_ends_a_body_is_read_whole(answer: bytes) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        for at in range(0, len(answer), 7):  # a few bytes at a time
            writer.write(answer[at : at + 7])
            await writer.drain()
            await asyncio.sleep(0)
        writer.close()

    async with agent(handle) as url:
        (response,) = await post(url)
    assert response.status_code == 200
    assert response.json() == {"response": "ok"}


async def test_a_204_has_no_body_and_keeps_the_connection() -> None:
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        for _ in range(2):
            await read_request(reader)
            writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            await writer.drain()
        writer.close()

    async with agent(handle) as url:
        answers = await post(url, times=2)
    assert [(a.status_code, a.content) for a in answers] == [(204, b"")] * 2
    assert connections == 1


async def test_an_idle_connection_past_its_keepalive_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_plain, "KEEPALIVE_EXPIRY_S", 0.0)
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            while True:
                await read_request(reader)
                writer.write(answered())
                await writer.drain()
        except asyncio.IncompleteReadError:
            writer.close()

    async with agent(handle) as url:
        await post(url, times=3)
    assert connections == 3


async def hang_up_after(data: bytes) -> Handler:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(data)
        await writer.drain()
        writer.close()

    return handle


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"", httpx.RemoteProtocolError),
        (b'HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{"resp', httpx.ReadError),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n40\r\n{", httpx.ReadError),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", httpx.RemoteProtocolError),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", httpx.RemoteProtocolError),
        (b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", httpx.RemoteProtocolError),
    ],
    ids=["closed", "cut-short", "chunk-cut-short", "not-http", "bad-header", "bad-length"],
)
async def test_a_broken_answer_is_the_httpx_error_aiohttp_s_pool_gives(
    data: bytes, error: type[httpx.TransportError]
) -> None:
    async with agent(await hang_up_after(data)) as url:
        with pytest.raises(httpx.TransportError) as caught:
            await post(url)
    assert type(caught.value) is error
    assert caught.value.request.url == url


async def test_an_agent_silent_past_the_timeout_is_a_read_timeout() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 18\r\n\r\n{")  # then nothing
        await writer.drain()
        await reader.read()  # until the client gives up and closes
        writer.close()

    async with agent(handle) as url:
        with pytest.raises(httpx.ReadTimeout):
            await post(url, timeout_s=0.2)


async def test_an_agent_that_keeps_sending_is_not_timed_out_between_reads() -> None:
    # The timeout is the longest silence, as aiohttp's sock_read, not the whole answer's time.
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        answer = answered()
        for at in range(0, len(answer), 10):  # ~0.45 s in all, never silent for 0.15 s
            writer.write(answer[at : at + 10])
            await writer.drain()
            await asyncio.sleep(0.05)
        writer.close()

    async with agent(handle) as url:
        (response,) = await post(url, timeout_s=0.15)
    assert response.json() == {"response": "ok"}


async def test_a_refused_connection_is_an_unreachable_agent_through_the_adapter(
    refused_port: int,
) -> None:
    url = f"http://127.0.0.1:{refused_port}/chat"
    with pytest.raises(httpx.ConnectError, match=f"127.0.0.1:{refused_port}"):
        await post(url)
    adapter = HttpAgent(url, retry=AgentRetry(tries=1))
    with pytest.raises(AgentError, match=f"agent unreachable at {url}"):
        await drive(adapter, make_context(Case(id="c", input="hi")))
    await adapter.aclose()


async def test_a_header_with_a_line_break_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(ValueError, match="Newline or carriage return"):
        PlainConnections(
            "http://127.0.0.1:1/", concurrency=1, headers={"X": "a\r\nB: c"}, timeout_s=1
        )


async def test_a_turn_header_with_a_line_break_is_refused_before_anything_is_sent() -> None:
    pool = PlainConnections("http://127.0.0.1:1/", concurrency=1, headers={}, timeout_s=1)
    with pytest.raises(ValueError, match="Newline or carriage return"):
        await pool.post({"message": "hi"}, {"X-Turn": "a\r\nB: c"})
    await pool.aclose()
