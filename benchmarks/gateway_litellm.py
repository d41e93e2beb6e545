"""Seatrial's gateway proxy against LiteLLM's proxy, on the same local upstream.

The upstream is `gateway_overhead.py`'s minimal OpenAI-compatible server (raw asyncio,
constant answers, its own process). Each proxy runs in its own process on 127.0.0.1 with
one model, `main`, pointing at it: Seatrial's as `seatrial gateway serve` would run it (no
store, no cassette), LiteLLM's as `litellm --config ...` (one worker, no database, no master
key, access log off). The client is httpx in this process, the same for all three.

1. Added latency: N non-streaming calls one at a time straight to the upstream, through
   Seatrial and through LiteLLM, in alternating rounds; p50 and p95 of each, minus the
   upstream's own.
2. CPU per call: the CPU time (user + system) of each proxy's process tree over those calls,
   and over C concurrent lanes (M calls in all), divided by the calls.

LiteLLM comes from a scratch virtualenv (default /tmp/seatrial-litellm) that this script
makes when it is missing: litellm pinned and hash-checked from requirements/litellm.txt, then
the proxy's own dependencies (the `proxy` extra names `litellm-proxy`, which is not on PyPI
for 1.110.2, so they are listed here).

    python benchmarks/gateway_litellm.py [--calls 300] [--rounds 3] [--concurrency 16]
        [--concurrent-calls 1000] [--venv /tmp/seatrial-litellm] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gateway_overhead as overhead  # the upstream and Seatrial's proxy, as there
import httpx

ROOT = Path(__file__).resolve().parent.parent
LITELLM_VERSION = "1.110.2"
# What `litellm --config` imports at start-up, beyond litellm's own dependencies.
PROXY_DEPENDENCIES = [
    "fastapi",
    "uvicorn",
    "uvloop",
    "backoff",
    "gunicorn",
    "rq",
    "orjson",
    "apscheduler",
    "websockets",
    "PyJWT",
    "cryptography",
    "python-multipart",
    "semver",
    "expression",
    "fastapi-sso",
    "mcp",
    "soundfile",
]
BODY = overhead.BODY
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], share: float) -> float:
    return overhead.percentile(values, share)


# -- CPU of a process tree ---------------------------------------------------------------


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a live process, from /proc."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    # fields[1] is the parent; [11], [12]: utime, stime; [13], [14]: waited-for children.
    ticks = sum(int(value) for value in fields[11:15])
    return int(fields[1]), ticks / CLOCK_TICKS


def tree_cpu_s(root: int) -> float:
    """CPU seconds of ``root`` and every live descendant."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _stat(int(entry))
            if found is not None:
                parents[int(entry)], cpu[int(entry)] = found
    total = 0.0
    for pid, seconds in cpu.items():
        walk = pid
        while walk not in (root, 0, 1) and walk in parents:
            walk = parents[walk]
        if walk == root:
            total += seconds
    return total


# -- LiteLLM -------------------------------------------------------------------------------


def ensure_litellm(venv: Path) -> Path:
    """The scratch virtualenv's `litellm` command, installing it first when missing."""
    command = venv / "bin" / "litellm"
    if command.exists():
        return command
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    print(f"installing LiteLLM {LITELLM_VERSION} into {venv} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    requirements = ROOT / "requirements" / "litellm.txt"
    subprocess.run([*pip, "--require-hashes", "--no-deps", "-r", str(requirements)], check=True)
    subprocess.run([*pip, f"litellm=={LITELLM_VERSION}", *PROXY_DEPENDENCIES], check=True)
    return command


def litellm_version(venv: Path) -> str:
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import importlib.metadata as m;print(m.version('litellm'))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "?"


def start_litellm(
    command: Path, upstream_url: str, folder: Path
) -> tuple[subprocess.Popen[bytes], str]:
    """LiteLLM's proxy on a free port, one model ``main`` on the upstream; waits for it."""
    config = folder / "litellm.yaml"
    config.write_text(
        "model_list:\n"
        "  - model_name: main\n"
        "    litellm_params:\n"
        "      model: openai/bench-model\n"
        f"      api_base: {upstream_url}\n"
        "      api_key: bench-key\n",
        encoding="utf-8",
    )
    log_config = folder / "log.json"
    log_config.write_text(
        json.dumps(
            {
                "version": 1,
                "disable_existing_loggers": False,
                "loggers": {
                    "uvicorn.access": {"level": "WARNING"},
                    "uvicorn.error": {"level": "WARNING"},
                },
            }
        ),
        encoding="utf-8",
    )
    port = overhead_free_port()
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of the price map at start
        "LITELLM_LOG": "ERROR",
        "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true",  # no auth, as ours
        "LITELLM_TELEMETRY": "False",
    }
    process = subprocess.Popen(
        [
            str(command),
            "--config",
            str(config),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--num_workers",
            "1",
            "--log_config",
            str(log_config),
        ],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(folder / "litellm.log", "wb"),  # noqa: SIM115 (lives as long as the proxy)
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"LiteLLM's proxy exited; see {folder / 'litellm.log'}")
        try:
            if httpx.get(f"{url}/health/liveliness", timeout=1).status_code == 200:
                return process, f"{url}/v1"
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.kill()
    raise RuntimeError("LiteLLM's proxy did not start within 180 s")


def overhead_free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- measuring ---------------------------------------------------------------------------


async def sequential(client: httpx.AsyncClient, url: str, calls: int) -> list[float]:
    return await overhead.timed_calls(client, f"{url}/chat/completions", calls)


async def concurrent(url: str, calls: int, lanes: int) -> float:
    """Wall seconds for ``calls`` calls over ``lanes`` concurrent lanes."""
    limits = httpx.Limits(max_connections=lanes, max_keepalive_connections=lanes)
    jobs = iter(range(calls))
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def lane() -> None:
            for _ in jobs:
                (await client.post(f"{url}/chat/completions", json=BODY)).raise_for_status()

        started = time.perf_counter()
        await asyncio.gather(*(lane() for _ in range(lanes)))
        return time.perf_counter() - started


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    os.environ.setdefault(overhead.KEY_ENV, "bench-key")
    command = ensure_litellm(args.venv)
    upstream, upstream_port = overhead._start(overhead._serve_upstream)
    upstream_url = f"http://127.0.0.1:{upstream_port}/v1"
    seatrial, seatrial_port = overhead._start(overhead._serve_proxy, upstream_url)
    folder = Path(tempfile.mkdtemp(prefix="seatrial-litellm-bench-"))
    litellm, litellm_url = start_litellm(command, upstream_url, folder)
    targets: dict[str, tuple[str, Callable[[], float]]] = {
        "direct": (upstream_url, lambda: 0.0),
        "seatrial": (
            f"http://127.0.0.1:{seatrial_port}/v1",
            lambda: tree_cpu_s(seatrial.pid or 0),
        ),
        "litellm": (litellm_url, lambda: tree_cpu_s(litellm.pid)),
    }
    latencies: dict[str, list[float]] = {name: [] for name in targets}
    cpu: dict[str, float] = dict.fromkeys(targets, 0.0)
    walls: dict[str, list[float]] = {name: [] for name in targets}
    concurrent_cpu: dict[str, float] = dict.fromkeys(targets, 0.0)
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            for _ in range(args.rounds):
                for name, (url, cpu_of) in targets.items():
                    before = cpu_of()
                    latencies[name] += await sequential(client, url, args.calls)
                    cpu[name] += cpu_of() - before
        for _ in range(args.rounds):
            for name, (url, cpu_of) in targets.items():
                before = cpu_of()
                walls[name].append(await concurrent(url, args.concurrent_calls, args.concurrency))
                concurrent_cpu[name] += cpu_of() - before
    finally:
        litellm.terminate()
        try:
            litellm.wait(timeout=20)
        except subprocess.TimeoutExpired:
            litellm.kill()
        for process in (seatrial, upstream):
            process.terminate()
            process.join()
    # The warm-up calls (20 a round) count in the CPU: charge them to the calls too.
    sequential_calls = args.rounds * (args.calls + 20)
    concurrent_calls = args.rounds * args.concurrent_calls
    direct = latencies["direct"]
    result: dict[str, Any] = {
        "litellm_version": litellm_version(args.venv),
        "calls": args.calls,
        "rounds": args.rounds,
        "concurrency": args.concurrency,
        "concurrent_calls": args.concurrent_calls,
        "load": os.getloadavg(),
    }
    for name in ("seatrial", "litellm"):
        result[name] = {
            "p50_ms": statistics.median(latencies[name]),
            "p95_ms": percentile(latencies[name], 0.95),
            "added_p50_ms": statistics.median(latencies[name]) - statistics.median(direct),
            "added_p95_ms": percentile(latencies[name], 0.95) - percentile(direct, 0.95),
            "cpu_ms_per_call": cpu[name] / sequential_calls * 1000,
            "concurrent_wall_s": statistics.median(walls[name]),
            "concurrent_calls_per_s": args.concurrent_calls / statistics.median(walls[name]),
            "concurrent_cpu_ms_per_call": concurrent_cpu[name] / concurrent_calls * 1000,
        }
    result["direct"] = {
        "p50_ms": statistics.median(direct),
        "p95_ms": percentile(direct, 0.95),
        "concurrent_wall_s": statistics.median(walls["direct"]),
    }
    return result


def table(result: dict[str, Any]) -> str:
    ours, theirs = result["seatrial"], result["litellm"]
    rows = [
        ("added latency p50 (ms)", "added_p50_ms", ".2f"),
        ("added latency p95 (ms)", "added_p95_ms", ".2f"),
        ("proxy CPU per call, one at a time (ms)", "cpu_ms_per_call", ".2f"),
        (
            f"calls/s at {result['concurrency']} concurrent",
            "concurrent_calls_per_s",
            ".0f",
        ),
        (
            f"proxy CPU per call at {result['concurrency']} concurrent (ms)",
            "concurrent_cpu_ms_per_call",
            ".2f",
        ),
    ]
    lines = [
        f"| measure | Seatrial | LiteLLM {result['litellm_version']} | LiteLLM / Seatrial |",
        "|---|---|---|---|",
    ]
    for label, key, spec in rows:
        ratio = theirs[key] / ours[key] if ours[key] else float("nan")
        lines.append(f"| {label} | {ours[key]:{spec}} | {theirs[key]:{spec}} | {ratio:.2f}x |")
    direct = result["direct"]
    lines.append(
        f"\nupstream alone: p50 {direct['p50_ms']:.2f} ms, p95 {direct['p95_ms']:.2f} ms; "
        f"{result['rounds']} rounds of {result['calls']} sequential calls and "
        f"{result['concurrent_calls']} concurrent calls per proxy; load average "
        + ", ".join(f"{x:.2f}" for x in result["load"])
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--concurrent-calls", type=int, default=1000)
    parser.add_argument("--venv", type=Path, default=Path("/tmp/seatrial-litellm"))
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    result = asyncio.run(measure(args))
    print(table(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
