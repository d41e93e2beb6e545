"""How many spans a second Seatrial ingests: through the OTLP/HTTP receiver and `seatrial ingest`.

The spans are made by the real OpenTelemetry SDK as an instrumented agent makes them: per
trace an ``invoke_agent`` span around four ``chat`` spans and three ``execute_tool`` spans,
about ten attributes each, one tool call in four carrying a mainland mobile number in its
arguments (so masking has work to do). Making them is not timed.

- receiver: ``seatrial serve`` (a real uvicorn process) takes protobuf bodies of 512 spans,
  as the SDK's BatchSpanProcessor sends them, POSTed by ``--clients`` threads of this
  process; timed from the first request to the last answer. The server's own CPU time over
  the same stretch (Linux: its ``/proc`` counters) is printed per span too: on a machine
  other work shares it moves less than the wall time does.
- ingest: ``seatrial ingest FILE`` of the same spans as one OTLP/JSON file, timed as the
  command's whole run, and once more in this process step by step (read and normalize,
  normalize and mask, store) to show where the time goes.
- steps: the receiver's work per span, in this process: protobuf decoding, normalizing,
  masking, storing.

    .venv/bin/python benchmarks/ingest.py [--spans N] [--clients N] [--pg-url URL | --no-pg]
        [--receiver-only]

PostgreSQL runs in a schema of its own, dropped at the end (default: the server at
127.0.0.1:5432, database ``test``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from seatrial.dataset import Masker
from seatrial.store import Store, TraceQuery
from seatrial.trace import (
    Trace,
    normalize_trace,
    read_trace_file,
    trace_to_otlp,
    traces_from_otlp_protobuf,
)

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
BATCH = 512
GOAL = 20_000
"""Spans a second into SQLite the issue asks for on this machine."""


def make_spans(count: int) -> list[ReadableSpan]:
    """About ``count`` finished SDK spans, eight per trace."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "support-bot", "deployment.environment": "prod"})
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("support-bot")
    for index in range(max(1, count // 8)):
        conversation = f"conv-{index:06d}"
        with tracer.start_as_current_span("invoke_agent support") as agent:
            agent.set_attributes(
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "support",
                    "gen_ai.agent.id": "agent-support-v3",
                    "gen_ai.conversation.id": conversation,
                    "user.id": f"user-{index % 997:04d}",
                    "app.channel": "wechat",
                    "app.region": "cn-east-1",
                    "app.release": "2025.11.3",
                    "app.tenant": "acme",
                    "app.locale": "zh-CN",
                }
            )
            for turn in range(4):
                with tracer.start_as_current_span("chat qwen-max") as chat:
                    chat.set_attributes(
                        {
                            "gen_ai.operation.name": "chat",
                            "gen_ai.provider.name": "dashscope",
                            "gen_ai.request.model": "qwen-max",
                            "gen_ai.response.model": "qwen-max-2025-01-25",
                            "gen_ai.request.temperature": 0.2,
                            "gen_ai.request.max_tokens": 1024,
                            "gen_ai.usage.input_tokens": 800 + turn * 120,
                            "gen_ai.usage.output_tokens": 40 + turn,
                            "gen_ai.response.finish_reasons": ["tool_calls"],
                            "gen_ai.response.id": f"chatcmpl-{index}-{turn}",
                            "gen_ai.conversation.id": conversation,
                        }
                    )
                if turn == 3:
                    break
                with tracer.start_as_current_span("execute_tool lookup_order") as tool:
                    phone = f"138{index:04d}{turn:04d}"[:11] if (index + turn) % 4 == 0 else ""
                    arguments = {"order_id": f"A{index:05d}", "fields": ["status", "eta"]}
                    if phone:
                        arguments["phone"] = phone
                    tool.set_attributes(
                        {
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": "lookup_order",
                            "gen_ai.tool.type": "function",
                            "gen_ai.tool.call.id": f"call_{index}_{turn}",
                            "gen_ai.tool.call.arguments": json.dumps(arguments),
                            "gen_ai.tool.call.result": json.dumps(
                                {"status": "shipped", "eta": "2025-12-03", "carrier": "SF"}
                            ),
                            "gen_ai.tool.description": "Look up an order by id",
                            "gen_ai.conversation.id": conversation,
                            "app.tool.latency_budget_ms": 800,
                            "app.tool.cached": False,
                        }
                    )
    provider.shutdown()
    return list(exporter.get_finished_spans())


def bodies(spans: Sequence[ReadableSpan]) -> list[bytes]:
    """Protobuf export bodies of BATCH spans each, in the order the spans ended."""
    return [
        encode_spans(spans[first : first + BATCH]).SerializeToString()
        for first in range(0, len(spans), BATCH)
    ]


def traces_of(payloads: Sequence[bytes]) -> list[Trace]:
    """The Seatrial traces in the bodies, each trace whole."""
    merged: dict[str, Trace] = {}
    for body in payloads:
        for trace in traces_from_otlp_protobuf(body):
            seen = merged.get(trace.trace_id)
            if seen is None:
                merged[trace.trace_id] = trace
            else:
                seen.spans.extend(trace.spans)
    return list(merged.values())


def write_otlp_json(traces: Sequence[Trace], path: Path) -> None:
    """One OTLP/JSON export holding every trace."""
    resource_spans = [trace_to_otlp(t, "support-bot")["resourceSpans"][0] for t in traces]
    path.write_text(json.dumps({"resourceSpans": resource_spans}), encoding="utf-8")


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU time the process has used so far (None off Linux)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def served(url: str, folder: Path) -> Iterator[tuple[str, int]]:
    """``seatrial serve`` over ``url`` until the block ends; yields its base URL and pid."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("SEATRIAL_TOKEN", "SEATRIAL_DB_URL")}
    process = subprocess.Popen(
        [SEATRIAL, "serve", "--port", str(port), "--db", url],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/api/openapi.json", timeout=2)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("seatrial serve did not start") from None
                time.sleep(0.1)
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def stored_spans(url: str) -> int:
    with Store.open(url) as store:
        return sum(head.span_count for head in store.trace_heads(TraceQuery(limit=10**9)))


def through_receiver(
    url: str, payloads: Sequence[bytes], clients: int, folder: Path
) -> tuple[float, float | None]:
    """Seconds to POST every body to a fresh ``seatrial serve``, and the server's CPU
    seconds meanwhile (None where they cannot be read)."""
    with served(url, folder) as (base, pid), httpx.Client(timeout=120) as client:
        headers = {"Content-Type": "application/x-protobuf"}

        def post(body: bytes) -> None:
            answer = client.post(f"{base}/v1/traces", content=body, headers=headers)
            answer.raise_for_status()

        cpu_before = cpu_seconds(pid)
        began = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(post, payloads))
        seconds = time.perf_counter() - began
        cpu_after = cpu_seconds(pid)
        if cpu_before is None or cpu_after is None:
            return seconds, None
        return seconds, cpu_after - cpu_before


def through_command(url: str, path: Path, folder: Path) -> float:
    """Seconds ``seatrial ingest FILE`` takes, process start included."""
    began = time.perf_counter()
    subprocess.run(
        [SEATRIAL, "ingest", str(path), "--db", url],
        cwd=folder,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - began


def timed(step: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    result = step()
    return time.perf_counter() - began, result


def steps(url: str, payloads: Sequence[bytes], path: Path) -> dict[str, float]:
    """Seconds of each step of both paths, in this process, each on the last one's output."""
    masker = Masker()
    figures: dict[str, float] = {}
    gc.collect()
    figures["decode protobuf"], decoded = timed(
        lambda: [traces_from_otlp_protobuf(body) for body in payloads]
    )
    figures["normalize"], normalized = timed(
        lambda: [[normalize_trace(t) for t in batch] for batch in decoded]
    )
    figures["mask"], masked = timed(
        lambda: [[masker.mask_trace(t).trace for t in batch] for batch in normalized]
    )
    with Store.open(url) as store:
        figures["store"], _ = timed(
            lambda: [store.save_ingested(batch, source="otlp") for batch in masked]
        )
    figures["read file (JSON, normalize)"], _ = timed(lambda: read_trace_file(path))
    return figures


@contextmanager
def postgres_schema(base_url: str | None) -> Iterator[str | None]:
    """A fresh schema in the PostgreSQL database (None when there is none), dropped after."""
    if base_url is None:
        yield None
        return
    import psycopg

    name = f"seatrial_bench_{uuid.uuid4().hex[:10]}"
    plain = base_url.replace("postgresql+psycopg://", "postgresql://")
    try:
        with psycopg.connect(plain, autocommit=True) as connection:
            connection.execute(f'CREATE SCHEMA "{name}"')
    except psycopg.Error as exc:
        print(f"PostgreSQL skipped: {' '.join(str(exc).split())}")
        yield None
        return
    try:
        separator = "&" if "?" in base_url else "?"
        yield f"{base_url}{separator}options=-csearch_path%3D{name}"
    finally:
        with psycopg.connect(plain, autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA "{name}" CASCADE')


def main() -> None:
    """Ingest the spans every way into each database and print spans a second."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--spans", type=int, default=20_480)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument(
        "--receiver-only",
        action="store_true",
        help="time the receiver alone (no `seatrial ingest`, no steps): quicker to repeat",
    )
    options = parser.parse_args()

    spans = make_spans(options.spans)
    payloads = bodies(spans)
    total = len(spans)
    print(
        f"{total} spans in {len(payloads)} protobuf bodies of up to {BATCH}, CPUs: {os.cpu_count()}"
    )
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        export = folder / "export.json"
        write_otlp_json(traces_of(payloads), export)
        with postgres_schema(None if options.no_pg else options.pg_url) as pg:
            targets = [
                (
                    "SQLite",
                    f"sqlite:///{folder / 'receiver.db'}",
                    f"sqlite:///{folder / 'ingest.db'}",
                )
            ]
            if pg is not None:
                targets.append(("PostgreSQL", pg, pg))
            for label, receiver_url, ingest_url in targets:
                seconds, cpu = through_receiver(receiver_url, payloads, options.clients, folder)
                assert stored_spans(receiver_url) == total
                rate = total / seconds
                goal = f" ({rate / GOAL:.2f} x the goal)" if label == "SQLite" else ""
                used = f", server CPU {cpu / total * 1e6:.1f} us a span" if cpu is not None else ""
                print(f"receiver -> {label}: {seconds:.2f} s, {rate:,.0f} spans/s{goal}{used}")
                if options.receiver_only:
                    continue
                if label == "PostgreSQL":
                    with Store.open(pg) as store, store.engine.begin() as connection:
                        connection.exec_driver_sql("TRUNCATE traces CASCADE")
                seconds = through_command(ingest_url, export, folder)
                assert stored_spans(ingest_url) == total
                print(
                    f"seatrial ingest -> {label}: {seconds:.2f} s, {total / seconds:,.0f} spans/s"
                )
        if options.receiver_only:
            return
        figures = steps(f"sqlite:///{folder / 'steps.db'}", payloads, export)
    print("per span, in this process (SQLite):")
    for name, seconds in figures.items():
        print(f"  {name:<28} {seconds / total * 1e6:7.1f} us")


if __name__ == "__main__":
    main()
