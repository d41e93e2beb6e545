"""What the gateway proxy adds to a model call, and how many streams it carries at once.

Upstream: a minimal OpenAI-compatible server on 127.0.0.1 (raw asyncio, constant answers, in
its own process) so that its own latency is small and steady; the proxy runs in its own
process, as `seatrial gateway serve` would; the client is httpx in this process.

1. Added latency: the same non-streaming request sent N times straight to the upstream and N
   times through the proxy, one at a time; p50 and p99 of each, and the difference.
2. Throughput: 200 concurrent streaming requests through the proxy (2,000 in all); completed
   streams per second and the p50 / p99 time of one whole stream.

    python benchmarks/gateway_overhead.py [--calls 500] [--streams 2000] [--concurrency 200]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import time
from typing import Any

import httpx

from seatrial.gateway import Gateway, GatewayConfig, GatewayServer, ModelConfig

KEY_ENV = "SEATRIAL_BENCH_KEY"
BODY = {"model": "main", "messages": [{"role": "user", "content": "Say hello in five words."}]}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


_ANSWER = (
    b'{"id":"chatcmpl-bench","object":"chat.completion","created":0,"model":"bench-model",'
    b'"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, how are'
    b' you?"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":6,'
    b'"total_tokens":18}}'
)


def _sse() -> bytes:
    words = ["Hello", " there,", " how", " are", " you?"]
    head = '{"id":"c","object":"chat.completion.chunk","created":0,"model":"bench-model",'
    events = [
        head + '"choices":[{"index":0,"delta":{"content":"' + w + '"},"finish_reason":null}]}'
        for w in words
    ]
    events.append(
        head + '"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],'
        '"usage":{"prompt_tokens":12,"completion_tokens":6,"total_tokens":18}}'
    )
    return b"".join(f"data: {e}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


_STREAM = _sse()


async def _upstream_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            body = await reader.readexactly(length)
            streaming = b'"stream":true' in body.replace(b" ", b"")
            payload, kind = (
                (_STREAM, b"text/event-stream") if streaming else (_ANSWER, b"application/json")
            )
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: "
                + kind
                + b"\r\ncontent-length: "
                + str(len(payload)).encode()
                + b"\r\n\r\n"
                + payload
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


def _serve_upstream(port: Any) -> None:
    async def main() -> None:
        server = await asyncio.start_server(_upstream_connection, "127.0.0.1", 0, backlog=2048)
        port.value = server.sockets[0].getsockname()[1]
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _serve_proxy(upstream_url: str, port: Any) -> None:
    async def main() -> None:
        main_model = ModelConfig(
            name="main", model="bench-model", base_url=upstream_url, api_key_env=KEY_ENV
        )
        gateway = Gateway(GatewayConfig(models={"main": main_model}))
        async with GatewayServer(gateway) as server:
            port.value = server.port
            await asyncio.Event().wait()

    asyncio.run(main())


def _start(target: Any, *args: Any) -> tuple[multiprocessing.Process, int]:
    port = multiprocessing.Value("i", 0)
    process = multiprocessing.get_context("fork").Process(target=target, args=(*args, port))
    process.start()
    deadline = time.monotonic() + 30
    while port.value == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    return process, port.value


async def timed_calls(client: httpx.AsyncClient, url: str, calls: int) -> list[float]:
    for _ in range(20):  # warm the connections and both servers
        (await client.post(url, json=BODY)).raise_for_status()
    timings = []
    for _ in range(calls):
        started = time.perf_counter()
        response = await client.post(url, json=BODY)
        timings.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
    return timings


async def one_stream(client: httpx.AsyncClient, url: str) -> float:
    started = time.perf_counter()
    async with client.stream("POST", url, json={**BODY, "stream": True}) as response:
        response.raise_for_status()
        async for _ in response.aiter_bytes():
            pass
    return (time.perf_counter() - started) * 1000


async def streams(url: str, total: int, concurrency: int) -> tuple[float, list[float]]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    timings: list[float] = []
    jobs = iter(range(total))
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def lane() -> None:
            for _ in jobs:
                timings.append(await one_stream(client, url))

        started = time.perf_counter()
        await asyncio.gather(*(lane() for _ in range(concurrency)))
        wall = time.perf_counter() - started
    return wall, timings


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    os.environ.setdefault(KEY_ENV, "bench-key")
    upstream, upstream_port = _start(_serve_upstream)
    upstream_url = f"http://127.0.0.1:{upstream_port}/v1"
    proxy, proxy_port = _start(_serve_proxy, upstream_url)
    proxy_url = f"http://127.0.0.1:{proxy_port}/v1"
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            direct = await timed_calls(client, f"{upstream_url}/chat/completions", args.calls)
            proxied = await timed_calls(client, f"{proxy_url}/chat/completions", args.calls)
        wall, stream_times = await streams(
            f"{proxy_url}/chat/completions", args.streams, args.concurrency
        )
    finally:
        for process in (proxy, upstream):
            process.terminate()
            process.join()
    return {
        "direct_p50_ms": statistics.median(direct),
        "direct_p99_ms": percentile(direct, 0.99),
        "proxy_p50_ms": statistics.median(proxied),
        "proxy_p99_ms": percentile(proxied, 0.99),
        "added_p50_ms": statistics.median(proxied) - statistics.median(direct),
        "added_p99_ms": percentile(proxied, 0.99) - percentile(direct, 0.99),
        "streams": args.streams,
        "concurrency": args.concurrency,
        "streams_per_s": args.streams / wall,
        "stream_p50_ms": statistics.median(stream_times),
        "stream_p99_ms": percentile(stream_times, 0.99),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=200)
    args = parser.parse_args()
    result = asyncio.run(measure(args))
    print(f"{args.calls} sequential calls each way")
    print(
        f"direct   p50 {result['direct_p50_ms']:.2f} ms  p99 {result['direct_p99_ms']:.2f} ms\n"
        f"proxied  p50 {result['proxy_p50_ms']:.2f} ms  p99 {result['proxy_p99_ms']:.2f} ms\n"
        f"added    p50 {result['added_p50_ms']:.2f} ms  p99 {result['added_p99_ms']:.2f} ms "
        "(goal: p50 under 2 ms)\n"
        f"streams: {result['streams']} at {result['concurrency']} concurrent: "
        f"{result['streams_per_s']:.0f} streams/s, one stream p50 {result['stream_p50_ms']:.1f} ms "
        f"p99 {result['stream_p99_ms']:.1f} ms"
    )


if __name__ == "__main__":
    main()
