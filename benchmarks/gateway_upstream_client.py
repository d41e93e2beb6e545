"""What the gateway's calls to an OpenAI-compatible upstream cost in CPU, per HTTP client.

The gateway's OpenAI provider calls upstreams through the ``openai`` SDK, which takes its HTTP
client as ``http_client=``: its default (httpx over httpcore, ``DefaultAsyncHttpxClient``) or
aiohttp (``DefaultAioHttpClient``, httpx over aiohttp's pool, as the HTTP agent adapter uses).
The upstream is ``benchmarks/gateway_overhead.py``'s (raw asyncio, constant answers, its own
process). For each client and concurrency, a fresh process makes N non-streaming
``chat.completions.create`` calls, ``concurrency`` in flight, and prints its wall and CPU
time; rounds alternate the clients.

    .venv/bin/python benchmarks/gateway_upstream_client.py [--calls 1000]
        [--concurrency 8 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

import gateway_overhead as overhead  # the same upstream

CLIENTS = ("httpx", "aiohttp")


def cpu_s() -> float:
    """User + system CPU of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def calls(base_url: str, client_name: str, total: int, concurrency: int) -> dict[str, Any]:
    """Wall and CPU of ``total`` calls through the SDK with one HTTP client."""
    import openai

    limits = {"max_connections": concurrency}
    if client_name == "aiohttp":
        http_client: Any = openai.DefaultAioHttpClient()
    else:
        import httpx

        http_client = openai.DefaultAsyncHttpxClient(
            limits=httpx.Limits(**limits, max_keepalive_connections=20)
        )
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key="bench", max_retries=0, http_client=http_client
    )
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            completion = await client.chat.completions.create(**overhead.BODY)
            assert completion.choices[0].message.content

    wall, cpu = time.perf_counter(), cpu_s()
    await asyncio.gather(*(one() for _ in range(total)))
    wall, cpu = time.perf_counter() - wall, cpu_s() - cpu
    await client.close()
    return {"wall_s": wall, "cpu_s": cpu}


def main() -> None:
    """Start the upstream, measure each client in alternating rounds, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 64])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--measure", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        base_url, client_name, total, concurrency = args.measure
        figures = asyncio.run(calls(base_url, client_name, int(total), int(concurrency)))
        print(json.dumps(figures))
        return
    process, port = overhead._start(overhead._serve_upstream)
    base_url = f"http://127.0.0.1:{port}/v1"
    results: dict[tuple[str, int], list[dict[str, float]]] = {}
    try:
        for _ in range(args.rounds):
            for concurrency in args.concurrency:
                for client_name in CLIENTS:
                    out = subprocess.run(
                        [
                            sys.executable,
                            __file__,
                            "--measure",
                            base_url,
                            client_name,
                            str(args.calls),
                            str(concurrency),
                        ],
                        check=True,
                        capture_output=True,
                        text=True,
                    )
                    figures = json.loads(out.stdout.strip().splitlines()[-1])
                    results.setdefault((client_name, concurrency), []).append(figures)
    finally:
        process.terminate()
        process.join()
    print(f"{args.calls} chat.completions.create calls through the openai SDK")
    print("| HTTP client | concurrency | wall s (median, range) | CPU s (median, range) |")
    print("|---|---|---|---|")
    for (client_name, concurrency), runs in sorted(results.items(), key=lambda kv: kv[0][1]):
        walls = [r["wall_s"] for r in runs]
        cpus = [r["cpu_s"] for r in runs]
        print(
            f"| {client_name} | {concurrency} | "
            f"{statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) | "
            f"{statistics.median(cpus):.2f} ({min(cpus):.2f}-{max(cpus):.2f}) |"
        )


if __name__ == "__main__":
    main()
