"""The HTTP adapter's connection pool: one connection per attempt in flight, 20 kept alive.

The limits are read back from the client the adapter built, not from a timing
(docs/agents.md "Connections", docs/performance.md for the figures behind the choice).
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from seatrial.agent import HttpAgent, resolve_agent
from seatrial.agent._http import KEEPALIVE_CONNECTIONS, pool_limits
from seatrial.case import Case
from seatrial.testing import AgentServer
from tests.agent._drive import drive, make_context

URL = "http://127.0.0.1:9/chat"


def pool_of(agent: HttpAgent) -> tuple[int, int]:
    """(max connections, max kept alive) of the pool inside the adapter's httpx client."""
    pool = agent._http()._transport._pool
    return pool._max_connections, pool._max_keepalive_connections


@pytest.mark.parametrize(
    ("concurrency", "connections", "kept_alive"),
    [(1, 1, 1), (8, 8, 8), (20, 20, 20), (21, 21, 20), (64, 64, 20), (500, 500, 20)],
)
async def test_the_pool_opens_one_connection_per_attempt_and_keeps_at_most_20(
    concurrency: int, connections: int, kept_alive: int
) -> None:
    agent = HttpAgent(URL, concurrency=concurrency)
    try:
        assert pool_of(agent) == (connections, kept_alive)
    finally:
        await agent.aclose()


async def test_a_concurrency_below_one_still_gets_one_connection() -> None:
    agent = HttpAgent(URL, concurrency=0)
    try:
        assert pool_of(agent) == (1, 1)
    finally:
        await agent.aclose()


async def test_the_run_concurrency_reaches_the_pool_through_resolve_agent() -> None:
    agent = resolve_agent(URL, concurrency=64)
    assert isinstance(agent, HttpAgent)
    try:
        assert pool_of(agent) == (64, KEEPALIVE_CONNECTIONS)
    finally:
        await agent.aclose()


def test_pool_limits_never_keep_more_alive_than_they_open() -> None:
    for concurrency in range(-1, 70):
        limits = pool_limits(concurrency)
        assert limits.max_connections is not None
        assert limits.max_keepalive_connections is not None
        assert 1 <= limits.max_keepalive_connections <= limits.max_connections
        assert limits.max_keepalive_connections <= KEEPALIVE_CONNECTIONS
    assert pool_limits(64) == httpx.Limits(max_connections=64, max_keepalive_connections=20)


async def test_posts_beyond_the_kept_alive_connections_still_get_answers() -> None:
    # 30 turns in flight on a pool that keeps 20: the other 10 get fresh connections.
    with AgentServer(lambda request: f"echo {request['message']}") as server:
        agent = HttpAgent(server.url, concurrency=30)
        try:
            results = await asyncio.gather(
                *(drive(agent, make_context(Case(id=f"c{n}", input=f"m{n}"))) for n in range(30))
            )
        finally:
            await agent.aclose()
    assert [output.responses for output, _ in results] == [[f"echo m{n}"] for n in range(30)]
