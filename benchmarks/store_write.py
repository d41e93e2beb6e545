"""How long the store takes to save a large run: 10,000 attempts in batches of 200.

Each attempt looks like one the runner writes: an agent span with a model call, a tool call
and a second model call (4 spans, a permission event), and 6 assertion results. Building
the records is not timed; saving them is, batch by batch, as the runner's writer thread does.

    .venv/bin/python benchmarks/store_write.py [--url URL] [--attempts N] [--batch N]

With ``--modes`` (PostgreSQL) the same batches are written by each way of bulk inserting, one
after the other, ``--rounds`` times: ``copy`` (what the store does), ``executemany`` (what it
did before) and ``values`` (multi-row ``INSERT ... VALUES``). Each prints the median wall
time, the client's CPU time and, when the server runs on this machine, the CPU time of the
server process that did the writing.
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import JSON, Table
from sqlalchemy.engine import Connection

import seatrial.store._store as store_module
from seatrial.case import Case
from seatrial.record import AssertionResult, AttemptRecord, Metrics, RunInfo
from seatrial.store import Store, encode_attempts
from seatrial.store._bulk import insert_many
from seatrial.trace import Span, SpanEvent, Trace, attrs, new_id

CASES = 100


def make_attempt(run_id: str, index: int) -> AttemptRecord:
    """One attempt with a four-span trace and six assertion results."""
    start = 1_760_000_000_000_000_000 + index * 10_000_000
    trace_id = new_id(128)
    agent_id, chat1, tool, chat2 = (new_id() for _ in range(4))

    def chat(span_id: str, offset: int, tokens: int) -> Span:
        return Span(
            trace_id=trace_id,
            span_id=span_id,
            parent_span_id=agent_id,
            name="chat gpt-4o",
            start_time_unix_nano=start + offset,
            end_time_unix_nano=start + offset + 900_000,
            attributes={
                attrs.OPERATION: attrs.OP_CHAT,
                attrs.REQUEST_MODEL: "gpt-4o",
                attrs.RESPONSE_MODEL: "gpt-4o-2024-08-06",
                attrs.INPUT_TOKENS: tokens,
                attrs.OUTPUT_TOKENS: tokens // 4,
                attrs.COST_USD: tokens * 2.5e-6,
            },
            status="ok",
        )

    spans = [
        Span(
            trace_id=trace_id,
            span_id=agent_id,
            name="invoke_agent booking",
            start_time_unix_nano=start,
            end_time_unix_nano=start + 5_000_000,
            attributes={attrs.OPERATION: attrs.OP_INVOKE_AGENT, attrs.AGENT_NAME: "booking"},
            status="ok",
        ),
        chat(chat1, 100_000, 812),
        Span(
            trace_id=trace_id,
            span_id=tool,
            parent_span_id=agent_id,
            name="execute_tool book_cleaning",
            start_time_unix_nano=start + 1_100_000,
            end_time_unix_nano=start + 2_000_000,
            attributes={
                attrs.OPERATION: attrs.OP_EXECUTE_TOOL,
                attrs.TOOL_NAME: "book_cleaning",
                attrs.TOOL_CALL_ID: f"call_{index}",
                attrs.TOOL_ARGUMENTS: '{"date": "2025-12-01", "slot": "morning"}',
                attrs.TOOL_RESULT: '{"order_id": "A1029", "status": "confirmed"}',
            },
            events=[
                SpanEvent(
                    name=attrs.PERMISSION,
                    time_unix_nano=start + 1_150_000,
                    attributes={
                        attrs.PERMISSION_TOOL: "book_cleaning",
                        attrs.PERMISSION_SCOPE: "once",
                        attrs.PERMISSION_DECISION: "granted",
                    },
                )
            ],
            status="ok",
        ),
        chat(chat2, 2_100_000, 1240),
    ]
    trace = Trace(trace_id=trace_id, spans=spans)
    checks = [
        ("tool_called", "L1"),
        ("tool_args", "L1"),
        ("max_tool_calls", "L1"),
        ("contains", "L2"),
        ("json_schema", "L2"),
        ("llm_judge", "L3"),
    ]
    return AttemptRecord(
        run_id=run_id,
        case_id=f"case-{index % CASES:03d}",
        attempt=index // CASES + 1,
        verdict="PASS",
        reason="every assertion passed",
        score=1.0,
        metrics=Metrics.of(trace),
        assertions=[
            AssertionResult(
                id=name,
                level=level,
                type=name,
                verdict="pass",  # type: ignore[arg-type]
                reason=f"{name} held",
                must_pass=level != "L3",
            )
            for name, level in checks
        ],
        response="已为您预约明天上午的清洁服务，订单号 A1029。",
        responses=["已为您预约明天上午的清洁服务，订单号 A1029。"],
        final_state={"orders": [{"id": "A1029", "status": "confirmed"}]},
        user_id=f"test_user_001-{index:05d}",
        session_id=f"sess-{index}",
        started_at=start / 1e9,
        finished_at=start / 1e9 + 0.005,
        trace=trace,
    )


def insert_values(
    connection: Connection, table: Table, columns: Any, rows: list[tuple[Any, ...]]
) -> None:
    """Multi-row ``INSERT ... VALUES`` in statements of at most 60,000 parameters."""
    one = ", ".join("%s::jsonb" if isinstance(table.c[c].type, JSON) else "%s" for c in columns)
    per = max(1, 60_000 // len(columns))
    for first in range(0, len(rows), per):
        chunk = rows[first : first + per]
        sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES " + ", ".join(
            [f"({one})"] * len(chunk)
        )
        connection.exec_driver_sql(sql, tuple(v for row in chunk for v in row))


WRITERS = {
    "copy": functools.partial(insert_many, mode="copy"),
    "executemany": functools.partial(insert_many, mode="executemany"),
    "values": insert_values,
}


def server_cpu_s(pid: int) -> float:
    """CPU seconds of a local PostgreSQL backend process; NaN when it is not on this machine."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / 100


def compare_modes(url: str, attempts: int, batch: int, rounds: int) -> None:
    """Write the same kind of batches by each mode in turn; print medians per mode."""
    figures: dict[str, list[tuple[float, float, float]]] = {mode: [] for mode in WRITERS}
    with Store.open(url) as store:
        ask = "帮我约明天上午的清洁服务"
        cases = [Case(id=f"case-{i:03d}", input=ask) for i in range(CASES)]
        for _ in range(rounds):
            for mode, writer in WRITERS.items():
                run_id = new_id(128)
                store.create_run(RunInfo(run_id=run_id, suite="bench", agent="bench"), cases)
                batches = [
                    encode_attempts([make_attempt(run_id, i) for i in range(first, first + batch)])
                    for first in range(0, attempts, batch)
                ]
                gc.collect()
                with store.engine.connect() as connection:
                    pid = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
                store_module.insert_many = writer  # type: ignore[assignment]
                server, wall, cpu = server_cpu_s(pid), time.perf_counter(), time.process_time()
                for encoded in batches:
                    store.save_encoded([encoded])
                figures[mode].append(
                    (
                        time.perf_counter() - wall,
                        time.process_time() - cpu,
                        server_cpu_s(pid) - server,
                    )
                )
                store_module.insert_many = insert_many
    print(f"{attempts} attempts (4 spans each) in batches of {batch}, {rounds} rounds, medians:")
    for mode, rows in figures.items():
        wall, cpu, server = (statistics.median(column) for column in zip(*rows, strict=True))
        print(
            f"  {mode:12s} wall {wall:6.3f} s  client CPU {cpu:6.3f} s  server CPU {server:6.3f} s"
        )


def main() -> None:
    """Save the attempts and print how long it took."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--modes", action="store_true", help="compare COPY, executemany, VALUES")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    if options.modes:
        if not options.url or not options.url.startswith("postgres"):
            parser.error("--modes needs --url postgresql://...")
        compare_modes(options.url, options.attempts, options.batch, options.rounds)
        return

    with tempfile.TemporaryDirectory() as folder:
        with Store.open(options.url, project_dir=Path(folder)) as store:
            run_id = new_id(128)
            ask = "帮我约明天上午的清洁服务"
            cases = [Case(id=f"case-{i:03d}", input=ask) for i in range(CASES)]
            store.create_run(RunInfo(run_id=run_id, suite="bench", agent="bench"), cases)
            records = [make_attempt(run_id, i) for i in range(options.attempts)]
            # Collect the garbage of building the records now, not inside the timed part.
            gc.collect()
            began = time.perf_counter()
            for first in range(0, len(records), options.batch):
                store.save_attempts(records[first : first + options.batch])
            elapsed = time.perf_counter() - began
            stored = len(store.finished_attempts(run_id))
    spans = sum(len(r.trace.spans) for r in records if r.trace is not None)
    print(
        f"saved {stored} attempts ({spans} spans) in batches of {options.batch} "
        f"to {store.url}: {elapsed:.3f} s ({elapsed / stored * 1e6:.0f} us per attempt)"
    )


if __name__ == "__main__":
    main()
