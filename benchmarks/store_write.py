"""How long the store takes to save a large run: 10,000 attempts in batches of 200.

Each attempt looks like one the runner writes: an agent span with a model call, a tool call
and a second model call (4 spans, a permission event), and 6 assertion results. Building
the records is not timed; saving them is, batch by batch, as the runner's writer thread does.

    .venv/bin/python benchmarks/store_write.py [--url URL] [--attempts N] [--batch N]
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

from seatrial.case import Case
from seatrial.record import AssertionResult, AttemptRecord, Metrics, RunInfo
from seatrial.store import Store
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


def main() -> None:
    """Save the attempts and print how long it took."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=200)
    options = parser.parse_args()

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
