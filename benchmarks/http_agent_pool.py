"""What the HTTP agent's connection pool costs the harness: wall and CPU per client setting.

A local agent (starlette under uvicorn, in a process of its own so its CPU is not counted)
answers every POST after 50 ms. For each concurrency and each setting, a fresh harness
process runs 1,000 single-turn cases with a ``contains`` and a ``regex`` assertion through the
runner into SQLite (``run``), POSTs 1,000 turns through the HTTP adapter's own client alone
(``client``), or POSTs them through one of the candidate clients (``clients``: httpx alone,
several small httpx clients, httpx over aiohttp's pool, aiohttp alone; see ``CLIENTS``); each
prints its wall time and its CPU time (user + system of the whole process, every thread).

For ``run`` and ``client`` the setting is a keep-alive limit for httpx's own pool, swapped by
wrapping ``httpx.Limits`` in that process: ``code`` (whatever the adapter sets today),
``concurrency``, a number, or ``min:N`` (the smaller of the concurrency and N). Since the
adapter posts through aiohttp's pool (``seatrial.agent._transport``), which keeps every
connection open, only ``code`` means anything for it; the others reproduce the httpcore
figures of docs/performance.md with the adapter of before that change (commit 092ffc6).
Rounds alternate the settings so a noisy machine spreads its noise over all of them; the table
shows the median and the range.

    .venv/bin/python benchmarks/http_agent_pool.py [--attempts 1000] [--concurrency 8 64]
        [--what run client clients] [--keepalive code] [--clients httpx aiohttp ...]
        [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

LATENCY_S = 0.05
ASSERTIONS = [
    {"type": "contains", "value": "shipped"},
    {"type": "regex", "value": r"Order A\d+ is (shipped|delivered)"},
]


def agent_app() -> Any:
    """The agent: answers the agent protocol after ``LATENCY_S``, no tools, no usage."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        await asyncio.sleep(LATENCY_S)
        case_id = body["metadata"]["case_id"]
        return JSONResponse(
            {
                "session_id": body["session_id"],
                "response": f"Order A{case_id[-5:]} is shipped.",
                "finished": True,
                "tools_called": [],
            }
        )

    return Starlette(routes=[Route("/chat", chat, methods=["POST"])])


def serve(port: int) -> None:
    """Run the agent on 127.0.0.1:``port`` until killed."""
    import uvicorn

    uvicorn.run(
        agent_app(),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        backlog=4096,
        timeout_keep_alive=60,
    )


@contextmanager
def agent_server() -> Iterator[str]:
    """The agent in a child process; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    child = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or child.poll() is not None:
                    raise RuntimeError("the benchmark agent did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/chat"
    finally:
        child.terminate()
        child.wait(timeout=10)


def keepalive_for(setting: str, concurrency: int) -> int | None:
    """The keep-alive limit a setting means at ``concurrency``; None for ``code``."""
    if setting == "code":
        return None
    if setting == "concurrency":
        return concurrency
    if setting.startswith("min:"):
        return min(concurrency, int(setting.removeprefix("min:")))
    return int(setting)


def limit_keepalive(keepalive: int | None) -> None:
    """Make every ``httpx.Limits`` built in this process keep ``keepalive`` alive."""
    if keepalive is None:
        return
    real = httpx.Limits

    def limits(**kwargs: Any) -> httpx.Limits:
        return real(**{**kwargs, "max_keepalive_connections": keepalive})

    httpx.Limits = limits  # type: ignore[assignment,misc]


def cpu_s() -> float:
    """User + system CPU of this process so far, every thread included."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def measure_run(url: str, attempts: int, concurrency: int) -> dict[str, Any]:
    """Wall and CPU of one run of ``attempts`` single-turn cases through the runner."""
    from seatrial.agent import resolve_agent
    from seatrial.case import Case, Suite
    from seatrial.run import RunOptions, run_suite_async
    from seatrial.store import Store

    suite = Suite(
        name="http-agent-pool",
        cases=[
            Case.model_validate(
                {"id": f"order-{i:05d}", "input": "Where is my order?", "assertions": ASSERTIONS}
            )
            for i in range(attempts)
        ],
    )
    adapter = resolve_agent(url, concurrency=concurrency)
    with tempfile.TemporaryDirectory() as folder:
        with Store.open(f"sqlite:///{Path(folder) / 'bench.db'}") as store:
            await adapter.check()
            wall, cpu = time.perf_counter(), cpu_s()
            outcome = await run_suite_async(
                suite, adapter, store, RunOptions(concurrency=concurrency, timeout_s=60)
            )
            wall, cpu = time.perf_counter() - wall, cpu_s() - cpu
            verdicts = store.verdict_counts([outcome.run_id])[outcome.run_id]
            await adapter.aclose()
    passed = verdicts.get("PASS", 0)
    assert passed == attempts, f"{passed} of {attempts} attempts passed: {verdicts}"
    return {"wall_s": wall, "cpu_s": cpu}


async def measure_client(url: str, attempts: int, concurrency: int) -> dict[str, Any]:
    """Wall and CPU of ``attempts`` POSTs through the HTTP adapter's client alone."""
    from seatrial.agent import HttpAgent

    agent = HttpAgent(url, concurrency=concurrency)
    gate = asyncio.Semaphore(concurrency)

    async def post(number: int) -> None:
        async with gate:
            payload = {
                "session_id": f"s{number}",
                "message": "Where is my order?",
                "metadata": {"case_id": f"order-{number:05d}"},
            }
            response = await agent._send(payload, {})  # the adapter's own pool
            # What the adapter reads of an answer: its status and its JSON body.
            assert response.status_code < 400 and "response" in response.json()

    wall, cpu = time.perf_counter(), cpu_s()
    await asyncio.gather(*(post(n) for n in range(attempts)))
    wall, cpu = time.perf_counter() - wall, cpu_s() - cpu
    await agent.aclose()
    return {"wall_s": wall, "cpu_s": cpu}


CLIENTS = ("httpx", "httpx-shards", "httpx-aiohttp", "aiohttp")
"""HTTP clients compared by ``--what clients`` (the keep-alive setting then names one):

- ``httpx``: one ``httpx.AsyncClient``, ``max_connections`` = concurrency, 20 kept alive;
- ``httpx-shards``: ``ceil(concurrency / 16)`` httpx clients of at most 16 connections, all
  kept alive, each POST on the client with the fewest in flight;
- ``httpx-aiohttp``: one httpx client over aiohttp's connection pool (``httpx_aiohttp``);
- ``aiohttp``: one ``aiohttp.ClientSession`` (``TCPConnector(limit=concurrency)``).
"""


def post_function(variant: str, concurrency: int) -> tuple[Any, Any]:
    """(post(url, payload) -> awaitable JSON body, close()) for one client variant."""
    if variant == "aiohttp":
        import aiohttp

        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency))

        async def post_aiohttp(url: str, payload: dict[str, Any]) -> Any:
            async with session.post(url, json=payload) as response:
                response.raise_for_status()
                return await response.json()

        return post_aiohttp, session.close
    if variant == "httpx-shards":
        shards = -(-concurrency // 16)
        size = -(-concurrency // shards)
        limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
        clients = [httpx.AsyncClient(limits=limits) for _ in range(shards)]
        in_flight = [0] * shards

        async def post_sharded(url: str, payload: dict[str, Any]) -> Any:
            index = in_flight.index(min(in_flight))
            in_flight[index] += 1
            try:
                response = await clients[index].post(url, json=payload)
            finally:
                in_flight[index] -= 1
            response.raise_for_status()
            return response.json()

        async def close_all() -> None:
            for client in clients:
                await client.aclose()

        return post_sharded, close_all
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=20)
    transport = None
    if variant == "httpx-aiohttp":
        from httpx_aiohttp import AiohttpTransport

        transport = AiohttpTransport(limits=limits)
    client = httpx.AsyncClient(limits=limits, transport=transport)

    async def post_httpx(url: str, payload: dict[str, Any]) -> Any:
        response = await client.post(url, json=payload)
        response.raise_for_status()
        return response.json()

    return post_httpx, client.aclose


async def measure_clients(url: str, attempts: int, concurrency: int, variant: str) -> Any:
    """Wall and CPU of ``attempts`` POSTs through one client variant (:data:`CLIENTS`)."""
    post, close = post_function(variant, concurrency)
    gate = asyncio.Semaphore(concurrency)

    async def one(number: int) -> None:
        async with gate:
            payload = {
                "session_id": f"s{number}",
                "message": "Where is my order?",
                "metadata": {"case_id": f"order-{number:05d}"},
            }
            body = await post(url, payload)
            assert "response" in body

    wall, cpu = time.perf_counter(), cpu_s()
    await asyncio.gather(*(one(n) for n in range(attempts)))
    wall, cpu = time.perf_counter() - wall, cpu_s() - cpu
    await close()
    return {"wall_s": wall, "cpu_s": cpu}


def measure(url: str, what: str, attempts: int, concurrency: int, setting: str) -> None:
    """In this (fresh) process: set the keep-alive limit, measure, print one JSON line."""
    if what == "clients":
        print(json.dumps(asyncio.run(measure_clients(url, attempts, concurrency, setting))))
        return
    limit_keepalive(keepalive_for(setting, concurrency))
    work = measure_run if what == "run" else measure_client
    print(json.dumps(asyncio.run(work(url, attempts, concurrency))))


def main() -> None:
    """Start the agent, measure every setting in alternating rounds, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 64])
    parser.add_argument("--keepalive", nargs="+", default=["code"])
    parser.add_argument(
        "--what", nargs="+", default=["run", "client"], choices=["run", "client", "clients"]
    )
    parser.add_argument("--clients", nargs="+", default=list(CLIENTS), choices=CLIENTS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--measure", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    if args.measure is not None:
        url, what, attempts, concurrency, setting = args.measure
        measure(url, what, int(attempts), int(concurrency), setting)
        return
    latency_ms = LATENCY_S * 1000
    print(
        f"{args.attempts} attempts, agent answers after {latency_ms:.0f} ms, {os.cpu_count()} CPUs"
    )
    results: dict[tuple[str, int, str], list[dict[str, float]]] = {}
    with agent_server() as url:
        for _ in range(args.rounds):
            for what in args.what:
                for concurrency in args.concurrency:
                    settings = args.clients if what == "clients" else args.keepalive
                    for setting in settings:
                        line = (
                            subprocess.run(
                                [
                                    sys.executable,
                                    __file__,
                                    "--measure",
                                    url,
                                    what,
                                    str(args.attempts),
                                    str(concurrency),
                                    setting,
                                ],
                                check=True,
                                stdout=subprocess.PIPE,
                                text=True,
                            )
                            .stdout.strip()
                            .splitlines()[-1]
                        )
                        results.setdefault((what, concurrency, setting), []).append(
                            json.loads(line)
                        )
    print("| what | concurrency | keep-alive | wall s (median, range) | CPU s (median, range) |")
    print("|---|---|---|---|---|")
    for (what, concurrency, setting), runs in results.items():
        walls = [r["wall_s"] for r in runs]
        cpus = [r["cpu_s"] for r in runs]
        kept = None if what == "clients" else keepalive_for(setting, concurrency)
        shown = f"{setting} ({kept})" if kept is not None and setting != str(kept) else setting
        print(
            f"| {what} | {concurrency} | {shown} | "
            f"{statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) | "
            f"{statistics.median(cpus):.2f} ({min(cpus):.2f}-{max(cpus):.2f}) |"
        )


if __name__ == "__main__":
    main()
