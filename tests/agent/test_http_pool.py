"""The HTTP adapter's connections: one per attempt in flight, all kept open between POSTs,
and a refused, lost or proxied connection told apart (seatrial.agent._transport).

A small agent on raw asyncio counts the TCP connections it accepts, so each test reads what
the agent saw, not a setting of the client (docs/agents.md "Connections", docs/performance.md
for the figures behind aiohttp's pool).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest

from seatrial.agent import AgentRetry, HttpAgent
from seatrial.agent._retry import RETRY_EVENT
from seatrial.agent._transport import AgentConnections
from seatrial.case import Case
from seatrial.errors import AgentError
from tests.agent._drive import drive, make_context


@dataclass
class CountingAgent:
    """What the agent saw: connections accepted, request lines, turns it dropped."""

    connections: int = 0
    request_lines: list[str] = field(default_factory=list)
    drop_first: int = 0
    """Close the connection without answering for this many first requests."""
    in_flight: int = 0
    most_in_flight: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode().split("\r\n")
                length = next(
                    int(line.split(":", 1)[1])
                    for line in lines
                    if line.lower().startswith("content-length:")
                )
                body = json.loads(await reader.readexactly(length))
                self.request_lines.append(lines[0])
                if self.drop_first > 0:
                    self.drop_first -= 1
                    return  # closes the connection: the turn was never answered
                self.in_flight += 1
                self.most_in_flight = max(self.most_in_flight, self.in_flight)
                await asyncio.sleep(0.05)  # long enough for the turns in flight to overlap
                self.in_flight -= 1
                answer = json.dumps({"response": f"echo {body['message']}"}).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(answer)}\r\n\r\n".encode()
                    + answer
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def counting_agent(**settings: int) -> AsyncIterator[tuple[CountingAgent, str]]:
    """A :class:`CountingAgent` listening on 127.0.0.1; yields it and its URL."""
    agent = CountingAgent(**settings)
    server = await asyncio.start_server(agent.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield agent, f"http://127.0.0.1:{port}/chat"
    finally:
        server.close()
        await server.wait_closed()


async def post_all(adapter: HttpAgent, messages: list[str]) -> list[list[str]]:
    """Drive one single-turn attempt per message, all at once; their responses."""
    results = await asyncio.gather(
        *(drive(adapter, make_context(Case(id=f"c{n}", input=m))) for n, m in enumerate(messages))
    )
    return [output.responses for output, _ in results]


async def test_no_more_connections_are_opened_than_the_concurrency() -> None:
    async with counting_agent() as (agent, url):
        adapter = HttpAgent(url, concurrency=4)
        try:
            responses = await post_all(adapter, [f"m{n}" for n in range(40)])
        finally:
            await adapter.aclose()
    assert responses == [[f"echo m{n}"] for n in range(40)]
    assert agent.connections <= 4
    assert agent.most_in_flight <= 4


async def test_every_connection_stays_open_for_the_next_posts_above_20_in_flight() -> None:
    # httpcore kept at most 20 open, so 30 in flight reopened 10 connections every round.
    async with counting_agent() as (agent, url):
        adapter = HttpAgent(url, concurrency=30)
        try:
            for round_number in range(3):
                messages = [f"r{round_number}m{n}" for n in range(30)]
                assert await post_all(adapter, messages) == [[f"echo {m}"] for m in messages]
        finally:
            await adapter.aclose()
    assert agent.connections == 30
    assert agent.most_in_flight == 30


async def test_a_connection_closed_before_the_answer_is_posted_again() -> None:
    async with counting_agent(drop_first=1) as (agent, url):
        adapter = HttpAgent(url, retry=AgentRetry(tries=2, backoff_s=0))
        try:
            output, trace = await drive(adapter, make_context(Case(id="c", input="hi")))
        finally:
            await adapter.aclose()
    assert output.responses == ["echo hi"]
    assert len(agent.request_lines) == 2
    retries = [event for span in trace.spans for event in span.events if event.name == RETRY_EVENT]
    assert len(retries) == 1
    assert "RemoteProtocolError" in str(retries[0].attributes[f"{RETRY_EVENT}.reason"])


async def test_a_lost_connection_is_an_agent_error_not_a_timeout() -> None:
    async with counting_agent(drop_first=1) as (_, url):
        adapter = HttpAgent(url, retry=AgentRetry(tries=1))
        try:
            with pytest.raises(AgentError) as caught:
                await drive(adapter, make_context(Case(id="c", input="hi")))
        finally:
            await adapter.aclose()
    assert caught.value.failure_type == "agent_error"
    assert "in time" not in str(caught.value)
    assert "RemoteProtocolError" in str(caught.value)


async def test_posts_go_through_the_proxy_named_by_http_proxy(
    monkeypatch: pytest.MonkeyPatch, refused_port: int
) -> None:
    # The agent's own address refuses connections: only the proxy can answer.
    closed_url = f"http://127.0.0.1:{refused_port}/chat"
    async with counting_agent() as (proxy, proxy_url):
        for name in ("NO_PROXY", "no_proxy", "http_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy_url.removesuffix("/chat"))
        adapter = HttpAgent(closed_url)
        try:
            output, _ = await drive(adapter, make_context(Case(id="c", input="hi")))
        finally:
            await adapter.aclose()
    assert output.responses == ["echo hi"]
    assert proxy.request_lines == [f"POST {closed_url} HTTP/1.1"]


async def test_no_proxy_sends_the_posts_straight_to_the_agent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with counting_agent() as (proxy, proxy_url), counting_agent() as (agent, url):
        monkeypatch.delenv("http_proxy", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy_url.removesuffix("/chat"))
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        adapter = HttpAgent(url)
        try:
            output, _ = await drive(adapter, make_context(Case(id="c", input="hi")))
        finally:
            await adapter.aclose()
    assert output.responses == ["echo hi"]
    assert proxy.request_lines == []
    assert agent.request_lines == ["POST /chat HTTP/1.1"]


async def test_an_answers_headers_text_and_json_read_as_httpx_reads_them() -> None:
    # The pool hands back a light answer, not an httpx.Response; what the retries and the
    # error messages read of it (headers, text in the declared charset) must not change.
    body = json.dumps({"response": "café"}, ensure_ascii=False).encode("latin-1")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        await reader.readexactly(length)
        writer.write(
            b"HTTP/1.1 503 Service Unavailable\r\n"
            b"content-type: application/json; charset=latin-1\r\n"
            b"Retry-After: 1\r\nx-note: a\r\nx-note: b\r\n"
            + f"content-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/chat"
    connections = AgentConnections(url, concurrency=1, headers={}, timeout_s=10)
    try:
        answer = await connections.post({"message": "hi"}, {})
    finally:
        await connections.aclose()
        server.close()
        await server.wait_closed()
    same = answer.as_httpx()
    assert answer.status_code == same.status_code == 503
    assert answer.headers.get("retry-after") == "1"
    assert answer.headers.get("x-note") == same.headers.get("x-note") == "a, b"
    assert answer.text == same.text == '{"response": "café"}'
    for read in (answer.json, same.json):  # JSON is read as UTF-8 whatever the charset
        with pytest.raises(UnicodeDecodeError):
            read()
